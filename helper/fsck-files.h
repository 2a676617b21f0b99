/*
 * The ids of file revisions, checked by `fsck` (see fsck.h) after the
 * checks that need no file content: each id must be the hash of the
 * revision's text (blob and files-meta entry) with parents among the
 * path's revisions in the parent manifests; and those parents must be
 * the ones Mercurial's commit gives (fsck-changes.h), else an
 * "unlike-hg <message>" line says how they differ.
 *
 * Reading every text is most of fsck's work. When there are many
 * (CINNABAR_TEST_FSCK_SPLIT, default 4096, sets how many), a forked copy
 * of the helper checks them too: it checks the notes (the `also` of
 * file_checks_start) and then takes runs of revisions, in path order,
 * while this one goes on with the changesets and then takes runs in turn
 * (a counter in memory shared by both says which is next), so that both
 * cores stay busy to the end. The copy only reads objects (its view of
 * the repository is the one at the fork), writes its problem lines to a
 * temporary file, and exits without running the helper's exit handlers,
 * so that nothing of this helper's state is touched.
 */
#ifndef CINNABAR_FSCK_FILES_H
#define CINNABAR_FSCK_FILES_H

struct file_check;

struct file_checks {
	struct file_check *items;
	size_t nr, alloc;
	unsigned problems;
	pid_t child;		/* checking the items too, or 0 */
	FILE *child_out;
	size_t *next;		/* the first item not taken, shared */
	int done;		/* without `next`: whether all were taken */
	void (*also)(FILE *out, void *data);
	void *also_data;
};

/*
 * Queue the check of file revision `node` at `path` in `manifest` (a
 * merge when `merge`), whose parent manifests have revisions a and b of
 * that path.
 */
void file_checks_add(struct file_checks *fc, const struct hg_oid *node,
		     const struct hg_oid *a, const struct hg_oid *b,
		     const char *path, size_t len,
		     const struct hg_oid *manifest,
		     const struct object_id *blob, int merge);

/*
 * Sort the queued revisions, and start the process checking them with
 * this one if there are enough; problems are "problem <message>" lines on
 * `out`. `also`, when not NULL, is more read-only checking for the same
 * process, given where its problem lines go and `data`.
 */
void file_checks_start(struct file_checks *fc, FILE *out,
		       void (*also)(FILE *out, void *data), void *data);

/*
 * Check the revisions the other process has not taken (all of them and
 * `also` without one), wait for it and copy its problem lines to `out`;
 * empty the queue. Return how many problems were found since
 * file_checks_start.
 */
unsigned file_checks_finish(struct file_checks *fc, FILE *out);

#endif
