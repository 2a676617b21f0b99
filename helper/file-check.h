/*
 * The ids of file revisions, checked by `fsck` (see fsck.h) after the
 * checks that need no file content: each id must be the hash of the
 * revision's text (blob and files-meta entry) with parents among the
 * path's revisions in the parent manifests.
 *
 * Reading every text is most of fsck's work. When there are many
 * (CINNABAR_TEST_FSCK_SPLIT, default 4096, sets how many), a forked copy
 * of the helper checks them while this one goes on with the changesets
 * (about as much work, on the other core): the copy only reads objects (its
 * view of the repository is the one at the fork), writes its problem
 * lines to a temporary file, and exits without running the helper's exit
 * handlers, so that nothing of this helper's state is touched.
 */
#ifndef CINNABAR_FILE_CHECK_H
#define CINNABAR_FILE_CHECK_H

struct file_check;

struct file_checks {
	struct file_check *items;
	size_t nr, alloc;
	unsigned problems;
	pid_t child;		/* checking the items, or 0 */
	FILE *child_out;
};

/* Queue the check of file revision `node` at `path` in `manifest`. */
void file_checks_add(struct file_checks *fc, const struct hg_oid *node,
		     const struct hg_oid *a, const struct hg_oid *b,
		     const char *path, size_t len,
		     const struct hg_oid *manifest,
		     const struct object_id *blob);

/*
 * Check the queued revisions, or start a process checking them; problems
 * are "problem <message>" lines on `out`. `also`, when not NULL, is more
 * read-only checking for the same process, given where its problem lines
 * go.
 */
void file_checks_start(struct file_checks *fc, FILE *out,
		       void (*also)(FILE *out));

/*
 * Wait for the other process, if any, and copy its problem lines to
 * `out`; empty the queue. Return how many problems were found since
 * file_checks_start.
 */
unsigned file_checks_finish(struct file_checks *fc, FILE *out);

#endif
