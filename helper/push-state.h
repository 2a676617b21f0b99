/*
 * What a push is making, shared by its stages. push.c drives them, for
 * each git commit to push, parents first:
 *   push-convert.c    the commit's changeset, manifest and file revisions
 *                     (stored ones for commits that came from Mercurial,
 *                     new ones made from the git trees for the others);
 *   push-manifests.c  the manifests those read and make, parsed, with
 *                     the new ones' texts waiting in a temporary file;
 * then writes the changegroup: the changesets and manifests itself, the
 * file groups with push-files.c, in changegroup.h's format.
 *
 * The files depend on each other only downward:
 *   push.c            the driver: on all the files below;
 *   push-convert.c    on push-manifests.c and push-state.c;
 *   push-files.c      on push-state.c;
 *   push-manifests.c  on push-state.c;
 *   push-state.c      what they share (this header): on none of them.
 */
#ifndef CINNABAR_PUSH_STATE_H
#define CINNABAR_PUSH_STATE_H

#include "khash.h"
#include "string-list.h"
#include "hg-id.h"
#include "manifest.h"

struct rev_chunk;
struct meter;

/* A file revision the changegroup holds. */
struct file_rev {
	const char *path;		/* interned */
	struct hg_oid node, p1, p2, link;
	struct object_id blob;		/* new revisions: the content */
	char *meta;			/* new revisions: metadata, or NULL */
	int is_new;
	/* stored revisions: the parents are among these (push-files.c) */
	struct hg_oid cand1, cand2;
	int need_parents;
	size_t order;
};

/* A changeset the changegroup holds, for the commit `commit`. */
struct cs_rev {
	struct object_id commit;
	struct hg_oid node, p1, p2, manifest, mp1, mp2;
	struct strbuf text;
	struct strbuf manifest_text;	/* for new manifests */
	/* Once its delta is made, the text waits in the spill file. */
	off_t manifest_off;
	size_t manifest_len;
	int manifest_spilled;
	/* When the manifest is sent: its delta and the delta's base. */
	struct strbuf manifest_delta;
	struct hg_oid manifest_base;
	int send_manifest, new_manifest;
};

static inline unsigned int hg_oid_khash(struct hg_oid oid)
{
	unsigned int h;
	memcpy(&h, oid.hash, sizeof(h));
	return h;
}

static inline int hg_oid_kheq(struct hg_oid a, struct hg_oid b)
{
	return hg_oideq(&a, &b);
}

/* hg id -> position in the batch's commits or files. */
KHASH_INIT(hg_pos, struct hg_oid, size_t, 1, hg_oid_khash, hg_oid_kheq)

/* A manifest, parsed: its text and its lines, sorted by path. */
struct push_manifest {
	struct hg_oid id;
	struct strbuf text;
	struct manifest_line *lines;
	size_t nr, alloc;
	/* stored manifests: their manifest tree */
	struct object_id tree;
	int has_tree;
};

/* A few recently used manifests, most recent first. */
#define PUSH_MANIFEST_CACHE 4

struct push_state {
	int version;			/* of the changegroup */
	struct cs_rev *cs;
	size_t nr;			/* the commits done, and the current */
	struct file_rev *files;
	size_t files_nr, files_alloc;
	struct string_list paths;
	/* Where the commits done so far, their changesets, their new
	 * manifests and the new file revisions are. */
	kh_oid_pos_t *by_commit;
	kh_hg_pos_t *by_node, *by_manifest, *new_files;
	/* The manifests sent so far, and the last one (the next's base). */
	kh_hg_pos_t *sent_manifests;
	struct hg_oid last_sent_manifest;
	/* push-manifests.c */
	struct push_manifest *manifests[PUSH_MANIFEST_CACHE];
	FILE *manifest_spill;
	/* Stored manifests and file revisions whose text was checked
	 * against their id. */
	kh_hg_pos_t *checked_manifests, *checked_files;
	/* Branches set by push_set_branch: oid hex -> branch name. */
	const struct string_list *branches;
	/* Progress of the changegroup's writing. */
	struct meter *progress;
	uint64_t written;
};

void push_set_pos(kh_hg_pos_t *map, const struct hg_oid *key, size_t pos);
int push_get_pos(kh_hg_pos_t *map, const struct hg_oid *key, size_t *pos);

/* A changeset of the batch (the current one included), or NULL. */
struct cs_rev *push_changeset(struct push_state *st, const struct hg_oid *node);
/* The raw text of a changeset, of the batch or stored. */
void push_changeset_text(struct push_state *st, const struct hg_oid *node,
			 struct strbuf *out);

/* A new entry of st->files, for revision `node` of `path`. */
struct file_rev *push_add_file_rev(struct push_state *st, const char *path,
				   size_t len, const struct hg_oid *node,
				   const struct hg_oid *link);

/*
 * The text of a new file revision: the blob's content, framed by "\1\n"
 * with the metadata `meta` before it when there is some, or when the
 * content itself starts with "\1\n" (then with empty metadata). Return
 * whether it is framed.
 */
int push_new_file_text(struct strbuf *out, const struct object_id *blob,
		       const char *meta);

/*
 * Write revision `chunk` (its ids set) to `f`: with `delta`, or with the
 * delta from `base` to `text`; counted as progress (st->progress).
 */
void push_write_delta(struct push_state *st, FILE *f,
		      struct rev_chunk *chunk, const struct strbuf *delta);
void push_write_rev(struct push_state *st, FILE *f, struct rev_chunk *chunk,
		    const char *base, size_t base_len,
		    const char *text, size_t len);

#endif
