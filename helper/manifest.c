/* Mercurial manifests and their git storage: see manifest.h. */
#include "libgit.h"
#include "khash.h"
#include "tree-iter.h"
#include "changegroup.h"
#include "hg-delta.h"
#include "hg-path.h"
#include "git-tree.h"
#include "metadata.h"
#include "store.h"
#include "manifest.h"
#include "raw-commit.h"
#include "check-setting.h"
#include "id-verify.h"
#include "manifest-cache.h"

/*
 * An import goes over a changegroup's manifests twice (manifest.h): the
 * first pass writes their manifest trees and commits, the second, once
 * the files are in, their git trees. Each pass has its last manifest,
 * imported or loaded, and that manifest's tree loaded in the store's
 * edited tree of the pass.
 *
 * The manifest-tree pass: the last manifest's text; of the last manifest
 * when the pass made it, its parents and tree, and whether its text is on
 * disk already (manifest-cache.h).
 */
static struct {
	struct hg_oid node;
	struct block_text text;
	int loaded;
	struct hg_oid p1, p2;
	struct object_id tree;
	int imported, kept;
} trees;

/*
 * The first delta base the manifest-tree pass loaded, and its text (the
 * blocks shared): the git-tree pass starts from it.
 */
static struct {
	struct hg_oid node;
	struct block_text text;
	int set;
} git_start;

/*
 * The git-tree pass: the last manifest's text, in a buffer shared with
 * the threads verifying ids (id-verify.h; NULL for the empty manifest).
 */
static struct hg_oid last_node;
static struct shared_text *last;
static int last_loaded;

/*
 * Texts offered to the import (manifest.h): a changegroup's first delta
 * base, and a snapshot the early id check made from a stored revision.
 */
#define OFFERS 2
static struct offer {
	struct hg_oid node;
	struct block_text text;
	int used;
} offers[OFFERS];

static void set_last(const struct hg_oid *node, struct shared_text *text)
{
	if (last)
		shared_text_release(last);
	last = text;
	hg_oidcpy(&last_node, node);
}

static struct offer *find_offer(const struct hg_oid *node)
{
	int i;
	for (i = 0; i < OFFERS; i++)
		if (offers[i].used && hg_oideq(node, &offers[i].node))
			return &offers[i];
	return NULL;
}

/* A free slot for `node`, or NULL. */
static struct offer *new_offer(const struct hg_oid *node)
{
	int i;
	for (i = 0; i < OFFERS; i++) {
		if (!offers[i].used) {
			hg_oidcpy(&offers[i].node, node);
			offers[i].used = 1;
			return &offers[i];
		}
	}
	return NULL;
}

static void drop_offer(struct offer *o)
{
	block_text_release(&o->text);
	o->used = 0;
}

/* Move the offered text of `node` into `text`; 0 if there is none. */
static int take_offer(const struct hg_oid *node, struct block_text *text)
{
	struct offer *o = find_offer(node);
	if (!o)
		return 0;
	SWAP(*text, o->text);
	drop_offer(o);
	return 1;
}

static void forget_git_start(void)
{
	block_text_release(&git_start.text);
	git_start.set = 0;
}

void manifest_reset_cache(void)
{
	int i;

	set_last(&hg_null_oid, NULL);
	last_loaded = 0;
	block_text_release(&trees.text);
	trees.loaded = 0;
	trees.imported = 0;
	forget_git_start();
	for (i = 0; i < OFFERS; i++)
		drop_offer(&offers[i]);
}

void manifest_offer_text(const struct hg_oid *node, const char *buf,
			 size_t len)
{
	struct offer *o = find_offer(node);

	if (!o && !(o = new_offer(node))) {
		drop_offer(&offers[0]);
		o = new_offer(node);
	}
	block_text_set(&o->text, buf, len);
}

const struct block_text *manifest_offered_text(const struct hg_oid *node)
{
	struct offer *o = find_offer(node);
	return o ? &o->text : NULL;
}

const struct block_text *manifest_offer_stored(const struct hg_oid *node)
{
	struct offer *o = find_offer(node);

	if (!o) {
		if (!(o = new_offer(node)))
			return NULL;
		manifest_block_text(node, &o->text);
	}
	return &o->text;
}

void manifest_offer_made(const struct hg_oid *node,
			 const struct block_text *text)
{
	struct offer *o;

	if (!find_offer(node) && (o = new_offer(node)))
		block_text_share(text, &o->text);
}

const char *manifest_flag_of_mode(unsigned mode)
{
	if (!S_ISGITLINK(mode))
		return NULL;
	if ((mode & 0755) == 0755)
		return "x";
	if ((mode & 0644) == 0644)
		return "";
	if (!(mode & 0777))
		return "l";
	return NULL;
}

static const char *flag_for_mode(unsigned mode, const char *path)
{
	const char *flag = manifest_flag_of_mode(mode);
	if (!flag)
		die("manifest entry '%s' has unexpected mode %06o", path, mode);
	return flag;
}

/*
 * Manifest subtrees read recently: consecutive manifests share most of
 * them, and reading one back means undoing a chain of deltas. The cache is
 * bounded in bytes, not only in slots, and by the width of the manifests,
 * not by history: a fixed bound in bytes fills up slowly over a long
 * import, which shows as memory growing with history, and a bound in slots
 * alone lets large directories hold several times the trees of a wide
 * manifest. It holds twice the trees of the last manifest read whole, the
 * last two or so (at least 256 kB, at most 8 MB; the floor stays below the
 * trees of a few thousand files, so that a narrow history does not take
 * the whole import to fill it). Past that, slots are freed in turn (oldest
 * first, roughly) until the new tree fits.
 */
struct cached_tree {
	struct object_id oid;
	char *buf;
	unsigned long size;
};
#define TREE_CACHE_SLOTS 4096
#define TREE_CACHE_MIN (256 * 1024)
#define TREE_CACHE_MAX (8 * 1024 * 1024)
static struct cached_tree tree_slots[TREE_CACHE_SLOTS];
static size_t tree_cache_bytes, tree_cache_sweep;
static size_t tree_cache_budget = TREE_CACHE_MIN;

static void free_slot(struct cached_tree *slot)
{
	tree_cache_bytes -= slot->size;
	FREE_AND_NULL(slot->buf);
	slot->size = 0;
}

/* The cache's budget for manifests whose trees total `bytes`. */
static void fit_tree_cache(size_t bytes)
{
	tree_cache_budget = st_mult(bytes, 2);
	if (tree_cache_budget < TREE_CACHE_MIN)
		tree_cache_budget = TREE_CACHE_MIN;
	if (tree_cache_budget > TREE_CACHE_MAX)
		tree_cache_budget = TREE_CACHE_MAX;
}

static void *read_manifest_tree(const struct object_id *oid,
				unsigned long *size)
{
	struct cached_tree *slot = &tree_slots[oidhash(oid) % TREE_CACHE_SLOTS];
	char *buf;
	size_t i;
	if (slot->buf && oideq(&slot->oid, oid)) {
		*size = slot->size;
		return xmemdupz(slot->buf, slot->size);
	}
	buf = store_read_object_typed(oid, OBJ_TREE, size);
	free_slot(slot);
	if (*size > tree_cache_budget)
		return buf;
	for (i = 0; tree_cache_bytes + *size > tree_cache_budget &&
		    i < TREE_CACHE_SLOTS; i++) {
		free_slot(&tree_slots[tree_cache_sweep]);
		tree_cache_sweep = (tree_cache_sweep + 1) % TREE_CACHE_SLOTS;
	}
	oidcpy(&slot->oid, oid);
	slot->buf = xmemdupz(buf, *size);
	slot->size = *size;
	tree_cache_bytes += *size;
	return buf;
}

/*
 * Append the manifest lines for the tree under `base` ("a/b/") to `out`,
 * and from it to `blocks` as they fill whole blocks when given; return
 * the size of the trees read.
 */
static size_t generate_lines(struct strbuf *out, struct block_text *blocks,
			     const struct object_id *tree, struct strbuf *base)
{
	struct tree_iter entry;
	unsigned long size;
	void *buf = read_manifest_tree(tree, &size);
	size_t base_len = base->len, bytes = size;

	tree_iter_init(&entry, buf, size);
	while (tree_iter_next(&entry)) {
		if (!entry.pathlen || entry.path[0] != '_')
			die("manifest tree %s is damaged", oid_to_hex(tree));
		strbuf_add(base, entry.path + 1, entry.pathlen - 1);
		if (S_ISDIR(entry.mode)) {
			strbuf_addch(base, '/');
			bytes += generate_lines(out, blocks, &entry.oid, base);
		} else {
			struct hg_oid file;
			git_oid_to_hg(&file, &entry.oid);
			manifest_line_add(out, base->buf, base->len, &file,
					  *flag_for_mode(entry.mode, base->buf));
			if (blocks)
				block_text_append(blocks, out, 0);
		}
		strbuf_setlen(base, base_len);
	}
	free(buf);
	return bytes;
}

/*
 * The lines of the manifest of tree `tree`, into `out`, or into `blocks`
 * when given (`out` is then left empty); the cache fitted to it.
 */
static void manifest_lines(struct strbuf *out, struct block_text *blocks,
			   const struct object_id *tree)
{
	struct strbuf base = STRBUF_INIT;

	fit_tree_cache(generate_lines(out, blocks, tree, &base));
	if (blocks)
		block_text_append(blocks, out, 1);
	strbuf_release(&base);
}

/* Counted for the trace (manifest_text_counts). */
static unsigned texts_from_trees, texts_read_back;

/*
 * The text of the stored manifest `node`, whose commit has `tree`, into
 * `blocks` when given, else `out`: from the disk (manifest-cache.h), else
 * from the trees.
 */
static void text_of_tree(const struct hg_oid *node,
			 const struct object_id *tree, struct strbuf *out,
			 struct block_text *blocks)
{
	if (!manifest_cache_read(node, tree, out, blocks)) {
		texts_read_back++;
		return;
	}
	manifest_lines(out, blocks, tree);
	texts_from_trees++;
}

void manifest_text_counts(unsigned *from_trees, unsigned *read_back)
{
	*from_trees = texts_from_trees;
	*read_back = texts_read_back;
}

/* The text of `node` into `text`: the offered one, else from `tree`. */
static void load_text(const struct hg_oid *node, const struct object_id *tree,
		      struct block_text *text)
{
	struct strbuf lines = STRBUF_INIT;

	block_text_release(text);
	if (take_offer(node, text))
		return;
	text_of_tree(node, tree, &lines, text);
	strbuf_release(&lines);
}

/* The manifest tree of `node`, a delta base, into `tree`. */
static void base_manifest_tree(const struct hg_oid *node, struct object_id *tree)
{
	const struct object_id *commit = hg2git(node);

	if (!commit)
		die("unknown delta base manifest %s (corrupt data, or a "
		    "repository missing history it should have)", hg_oid_to_hex(node));
	commit_tree_oid(commit, tree);
}

/*
 * The text of the stored manifest `node` into `out`, or into `blocks`
 * when given.
 */
static void stored_text(const struct hg_oid *node, struct strbuf *out,
			struct block_text *blocks)
{
	const struct object_id *commit = hg2git(node);
	struct object_id tree;

	if (hg_oid_is_null(node))
		return;
	if (!commit)
		die("unknown manifest %s", hg_oid_to_hex(node));
	commit_tree_oid(commit, &tree);
	text_of_tree(node, &tree, out, blocks);
}

void manifest_text(const struct hg_oid *node, struct strbuf *out)
{
	strbuf_reset(out);
	stored_text(node, out, NULL);
}

void manifest_block_text(const struct hg_oid *node, struct block_text *out)
{
	struct strbuf lines = STRBUF_INIT;

	block_text_release(out);
	stored_text(node, &lines, out);
	strbuf_release(&lines);
}

int manifest_line_parse(const char **p, const char *end,
			struct manifest_line *line)
{
	const char *nul = memchr(*p, '\0', end - *p), *eol;
	if (!nul || nul == *p || end - nul < HG_HEXSZ + 2)
		return -1;
	/* A line break before the NUL: a line without one (an empty
	 * line, say), which Mercurial does not read either. */
	if (memchr(*p, '\n', nul - *p))
		return -1;
	line->path = *p;
	line->path_len = nul - *p;
	if (hg_oid_from_hex(nul + 1, &line->oid))
		return -1;
	eol = nul + 1 + HG_HEXSZ;
	line->flag = *eol;
	if (line->flag == 'x' || line->flag == 'l')
		eol++;
	else if (line->flag == '\n')
		line->flag = '\0';
	else
		return -1;
	if (eol >= end || *eol != '\n')
		return -1;
	*p = eol + 1;
	return 0;
}

void manifest_line_add(struct strbuf *out, const char *path, size_t len,
		       const struct hg_oid *oid, char flag)
{
	/* Not strbuf_addf: this runs for every line. */
	strbuf_add(out, path, len);
	strbuf_addch(out, '\0');
	strbuf_add(out, hg_oid_to_hex(oid), HG_HEXSZ);
	if (flag)
		strbuf_addch(out, flag);
	strbuf_addch(out, '\n');
}

int manifest_path_cmp(const char *a, size_t a_len, const char *b,
		      size_t b_len)
{
	int cmp = memcmp(a, b, a_len < b_len ? a_len : b_len);
	return cmp ? cmp : a_len < b_len ? -1 : a_len > b_len;
}

/* "a/b" -> "_a/_b": the path of a manifest entry in its git tree. */
static void tree_path(struct strbuf *out, const char *path, size_t len)
{
	const char *end = path + len;
	strbuf_reset(out);
	for (;;) {
		const char *slash = memchr(path, '/', end - path);
		strbuf_addch(out, '_');
		strbuf_add(out, path, (slash ? slash : end) - path);
		if (!slash)
			break;
		strbuf_addch(out, '/');
		path = slash + 1;
	}
}

static NORETURN void malformed(const struct hg_oid *node)
{
	die("malformed manifest revision %s in the changegroup (corrupt "
	    "data)", hg_oid_to_hex(node));
}

/* Whether a path has an empty component ("a//b", "/a", "a/"). */
static int has_empty_component(const char *path, size_t len)
{
	return !len || path[0] == '/' || path[len - 1] == '/' ||
	       memmem(path, len, "//", 2);
}

static unsigned git_mode(char flag)
{
	return flag == 'x' ? 0100755 : flag == 'l' ? 0120000 : 0100644;
}

static unsigned manifest_mode(char flag)
{
	return flag == 'x' ? 0160755 : flag == 'l' ? 0160000 : 0160644;
}

/* Check that `buf` is whole, well-formed lines; 1 if a path has empty
 * components, else 0. */
static int validate_lines(const struct rev_chunk *chunk, const char *p,
			  const char *end)
{
	struct manifest_line line;
	int rebuild = 0;

	while (p < end) {
		if (manifest_line_parse(&p, end, &line))
			malformed(&chunk->node);
		if (has_empty_component(line.path, line.path_len))
			rebuild = 1;
		hg_path_check_import(line.path, line.path_len);
	}
	return rebuild;
}

/*
 * Check the lines a delta removes (in `base`) and adds: whole lines, well
 * formed. Return 1 when a path has empty components (the git tree then
 * has to be rebuilt from the manifest tree), else 0.
 */
static int validate_delta(const struct rev_chunk *chunk,
			  const struct block_text *base)
{
	struct strbuf removed = STRBUF_INIT;
	struct hg_delta_iter it;
	struct hg_hunk h;
	int rebuild = 0;

	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while (hg_delta_next(&it, &h) > 0) {
		if (h.start > h.end || h.end > base->len ||
		    (h.start && block_text_at(base, h.start - 1) != '\n') ||
		    (h.end && block_text_at(base, h.end - 1) != '\n'))
			malformed(&chunk->node);
		strbuf_reset(&removed);
		block_text_copy(base, h.start, h.end, &removed);
		rebuild |= validate_lines(chunk, removed.buf,
					  removed.buf + removed.len);
		rebuild |= validate_lines(chunk, h.data, h.data + h.len);
	}
	strbuf_release(&removed);
	return rebuild;
}

/* Check that the paths of the lines in `buf` strictly increase. */
static void check_sorted_lines(const struct rev_chunk *chunk,
			       const struct strbuf *buf)
{
	const char *p = buf->buf, *end = buf->buf + buf->len;
	struct manifest_line line, prev = { 0 };

	while (p < end) {
		if (manifest_line_parse(&p, end, &line))
			malformed(&chunk->node);
		if (prev.path && manifest_path_cmp(prev.path, prev.path_len,
						   line.path, line.path_len) >= 0)
			die("malformed manifest revision %s in the changegroup: "
			    "'%.*s' comes after '%.*s' (paths must be sorted and "
			    "listed once; corrupt data)",
			    hg_oid_to_hex(&chunk->node), (int)line.path_len,
			    line.path, (int)prev.path_len, prev.path);
		prev = line;
	}
}

/*
 * The previous revision was sorted: checking, around each part the delta
 * changed, from the line before it to the line after it, is enough for
 * the whole of `text` (the result).
 */
static void check_sorted(const struct rev_chunk *chunk,
			 const struct block_text *text)
{
	struct strbuf around = STRBUF_INIT;
	struct hg_delta_iter it;
	struct hg_hunk h;
	size_t shift = 0;

	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while (hg_delta_next(&it, &h) > 0) {
		size_t start = h.start + shift, end = start + h.len;
		if (start)
			start = block_text_after_prev(text, start - 1, '\n');
		end = block_text_after_next(text, end, '\n');
		strbuf_reset(&around);
		block_text_copy(text, start, end, &around);
		check_sorted_lines(chunk, &around);
		shift += h.len - (h.end - h.start);
	}
	strbuf_release(&around);
}

/* The path of a manifest line's entry in tree `which`, into `out`. */
static void entry_path(enum edit_tree which, const struct manifest_line *line,
		       struct strbuf *out)
{
	if (which == EDIT_MANIFEST) {
		tree_path(out, line->path, line->path_len);
	} else {
		strbuf_reset(out);
		strbuf_add(out, line->path, line->path_len);
	}
}

static void remove_lines(const struct block_text *base,
			 const struct hg_hunk *h, enum edit_tree which)
{
	struct strbuf path = STRBUF_INIT, removed = STRBUF_INIT;
	struct manifest_line line;
	const char *p, *end;

	block_text_copy(base, h->start, h->end, &removed);
	p = removed.buf;
	end = removed.buf + removed.len;
	while (p < end) {
		manifest_line_parse(&p, end, &line);
		entry_path(which, &line, &path);
		edit_tree_remove(which, path.buf);
	}
	strbuf_release(&path);
	strbuf_release(&removed);
}

/* Set the file of `line` in the manifest tree (`path`: scratch space). */
static void set_in_manifest_tree(const struct rev_chunk *chunk,
				 const struct manifest_line *line,
				 struct strbuf *path)
{
	struct object_id oid;

	hg_oid_to_git(&oid, &line->oid);
	tree_path(path, line->path, line->path_len);
	/*
	 * Mercurial stores such manifests (its own tests have one, with a
	 * symlink), and git-cinnabar imports them, the directory replacing
	 * the file in git: same here, for the same commit ids, but say so.
	 */
	if (edit_tree_conflict(EDIT_MANIFEST, path->buf))
		warning("manifest revision %s lists '%.*s' under a path that "
			"is also a file, or a file where there is a directory: "
			"git keeps the last one listed",
			hg_oid_to_hex(&chunk->node), (int)line->path_len,
			line->path);
	edit_tree_set(EDIT_MANIFEST, path->buf, &oid, manifest_mode(line->flag));
}

/* Set the file of `line`, blob `blob`, in the git tree. */
static void set_in_git_tree(const struct manifest_line *line,
			    const struct object_id *blob, struct strbuf *path)
{
	entry_path(EDIT_GIT, line, path);
	edit_tree_set(EDIT_GIT, path->buf, blob, git_mode(line->flag));
}

static void add_lines(const struct rev_chunk *chunk, const struct hg_hunk *h,
		      enum edit_tree which)
{
	struct strbuf path = STRBUF_INIT;
	struct manifest_line line;
	const char *p = h->data, *end = h->data + h->len;

	while (p < end) {
		manifest_line_parse(&p, end, &line);
		if (which == EDIT_MANIFEST)
			set_in_manifest_tree(chunk, &line, &path);
		else
			set_in_git_tree(&line, git_blob_for_file(&line.oid),
					&path);
	}
	strbuf_release(&path);
}

/*
 * Apply the lines removed and added by a delta to the edited tree
 * `which`. All removals come first: a delta may add in one hunk what it
 * removes in another.
 */
static void apply_to_tree(const struct rev_chunk *chunk,
			  const struct block_text *base, enum edit_tree which)
{
	struct hg_delta_iter it;
	struct hg_hunk h;

	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while (hg_delta_next(&it, &h) > 0)
		remove_lines(base, &h, which);
	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while (hg_delta_next(&it, &h) > 0)
		add_lines(chunk, &h, which);
}

/*
 * A manifest given whole (the first of a clone, against the empty one)
 * comes sorted, and all the files under a directory are next to each
 * other: once the lines are past a directory, it is complete. Each tree
 * is then filled and written a directory at a time (store.h,
 * edit_tree_write_dir), holding in memory only the directories of the
 * line being added rather than the whole tree, twice (~200 bytes a file).
 * The objects are those apply_to_tree() then edit_tree_store() write,
 * in the same order: the directories of a tree in the order of their
 * first file, each after those under it; and before the git tree's,
 * where the lines name the empty file, the empty blob
 * (git_blob_for_file(), once a line as apply_to_tree() did, for the same
 * checkpoints).
 */

/*
 * Going from the line of `prev` to that of `path`: 1 and the length of
 * the topmost directory of `prev` that `path` is not under ("a/b" from
 * "a/b/c/d" to "a/x"), in `dir_len`; 0 when `path` is under all of them.
 */
static int left_dir(const struct manifest_line *prev,
		    const struct manifest_line *line, size_t *dir_len)
{
	size_t same = 0, start = 0, i;
	const char *slash;

	while (same < prev->path_len && same < line->path_len &&
	       prev->path[same] == line->path[same])
		same++;
	for (i = 0; i < same; i++)
		if (prev->path[i] == '/')
			start = i + 1;
	slash = memchr(prev->path + start, '/', prev->path_len - start);
	if (!slash)
		return 0;
	*dir_len = slash - prev->path;
	return 1;
}

static void add_whole(const struct rev_chunk *chunk, const struct hg_hunk *h,
		      enum edit_tree which)
{
	struct strbuf path = STRBUF_INIT;
	struct manifest_line line, prev = { 0 };
	const char *p = h->data, *end = h->data + h->len;
	size_t dir_len;

	while (p < end) {
		manifest_line_parse(&p, end, &line);
		if (prev.path && left_dir(&prev, &line, &dir_len)) {
			if (which == EDIT_MANIFEST) {
				tree_path(&path, prev.path, dir_len);
			} else {
				strbuf_reset(&path);
				strbuf_add(&path, prev.path, dir_len);
			}
			edit_tree_write_dir(which, path.buf);
		}
		if (which == EDIT_MANIFEST)
			set_in_manifest_tree(chunk, &line, &path);
		else
			set_in_git_tree(&line, git_blob_of_stored_file(&line.oid),
					&path);
		prev = line;
	}
	strbuf_release(&path);
}

static void store_empty_blobs(const struct hg_hunk *h)
{
	struct manifest_line line;
	const char *p = h->data, *end = h->data + h->len;

	while (p < end) {
		manifest_line_parse(&p, end, &line);
		if (hg_oideq(&line.oid, &hg_empty_file_oid))
			git_blob_for_file(&line.oid);
	}
}

/* The only hunk of `chunk`'s delta into `h`, or 0 when it has more. */
static int single_hunk(const struct rev_chunk *chunk, struct hg_hunk *h)
{
	struct hg_delta_iter it;
	struct hg_hunk next;

	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	return hg_delta_next(&it, h) > 0 && hg_delta_next(&it, &next) <= 0;
}

/* The tree `which` of a manifest given whole in `h`, its id in `result`. */
static void store_whole(const struct rev_chunk *chunk, const struct hg_hunk *h,
			enum edit_tree which, struct object_id *result)
{
	if (which == EDIT_GIT)
		store_empty_blobs(h);
	edit_tree_write_start(which);
	add_whole(chunk, h, which);
	edit_tree_write_end(which, result);
}

static int add_parent(struct strbuf *buf, const struct hg_oid *parent,
		      struct object_id *out)
{
	const struct object_id *commit;
	if (hg_oid_is_null(parent))
		return 0;
	commit = hg2git(parent);
	if (!commit)
		die("missing parent manifest %s", hg_oid_to_hex(parent));
	strbuf_addf(buf, "parent %s\n", oid_to_hex(commit));
	oidcpy(out, commit);
	return 1;
}

/*
 * Make the revision `node` the base of the next delta of the manifest-tree
 * pass: its text, and its manifest tree in the store. The first base is
 * also the git-tree pass's.
 */
static void load_tree_base(const struct hg_oid *node)
{
	struct object_id tree;

	if (trees.loaded && hg_oideq(node, &trees.node))
		return;
	block_text_release(&trees.text);
	if (hg_oid_is_null(node)) {
		edit_tree_load(EDIT_MANIFEST, NULL);
	} else {
		base_manifest_tree(node, &tree);
		load_text(node, &tree, &trees.text);
		edit_tree_load(EDIT_MANIFEST, &tree);
	}
	hg_oidcpy(&trees.node, node);
	trees.loaded = 1;
	trees.imported = 0;
	forget_git_start();
	hg_oidcpy(&git_start.node, node);
	block_text_share(&trees.text, &git_start.text);
	git_start.set = 1;
}

/* The same for the git-tree pass: its text, and its git tree. */
static void load_git_base(struct id_verify *verify, const struct hg_oid *node)
{
	struct object_id tree;
	struct shared_text *text;

	if (last_loaded && hg_oideq(node, &last_node))
		return;
	last_loaded = 1;
	set_last(&hg_null_oid, NULL);
	if (hg_oid_is_null(node)) {
		edit_tree_load(EDIT_GIT, NULL);
		return;
	}
	text = shared_text_take(verify);
	if (git_start.set && hg_oideq(node, &git_start.node)) {
		block_text_share(&git_start.text, &text->text);
		forget_git_start();
	} else {
		base_manifest_tree(node, &tree);
		load_text(node, &tree, &text->text);
	}
	git_tree_for_manifest(node, &tree);
	edit_tree_load(EDIT_GIT, &tree);
	set_last(node, text);
}

static void store_manifest_commit(const struct rev_chunk *chunk,
				  const struct object_id *tree)
{
	struct strbuf commit = STRBUF_INIT;
	struct object_id oid, parents[2];
	int nr_parents = 0;

	strbuf_addf(&commit, "tree %s\n", oid_to_hex(tree));
	nr_parents += add_parent(&commit, &chunk->p1, &parents[nr_parents]);
	nr_parents += add_parent(&commit, &chunk->p2, &parents[nr_parents]);
	strbuf_addf(&commit, CINNABAR_AUTHORSHIP "\n%s",
		    hg_oid_to_hex(&chunk->node));
	store_object_buf(OBJ_COMMIT, commit.buf, commit.len, &oid);
	set_hg2git(&chunk->node, &oid);
	add_manifest_head(&oid, parents, nr_parents);
	strbuf_release(&commit);
}

/* The line of `text` at `*pos` (with its '\n') into `line`; 0 at the end. */
static int block_text_line(const struct block_text *text, size_t *pos,
			   struct strbuf *line)
{
	size_t end;

	strbuf_reset(line);
	if (*pos >= text->len)
		return 0;
	end = block_text_after_next(text, *pos, '\n');
	block_text_copy(text, *pos, end, line);
	*pos = end;
	return 1;
}

static size_t line_path_len(const struct rev_chunk *chunk,
			    const struct strbuf *line)
{
	const char *nul = memchr(line->buf, '\0', line->len);
	if (!nul)
		malformed(&chunk->node);
	return nul - line->buf;
}

/*
 * The delta, against `from`, that gives `to`: both are sorted manifests,
 * walked side by side; lines only in `from` are removed, lines only in
 * `to` added. Checks on the way that the paths of `to` strictly increase
 * (the walk relies on it); the lines added are checked by the import.
 */
static void diff_sorted(const struct rev_chunk *chunk,
			const struct block_text *from,
			const struct block_text *to, struct strbuf *delta)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, prev = STRBUF_INIT;
	struct strbuf added = STRBUF_INIT;
	size_t a_next = 0, b_next = 0, a_start = 0, hunk = SIZE_MAX;
	int have_a = block_text_line(from, &a_next, &a);
	int have_b = block_text_line(to, &b_next, &b);

	while (have_a || have_b) {
		/* same: the line is in both; else cmp < 0: only in `from`,
		 * > 0: only in `to`, 0: the same path changed. */
		int same = have_a && have_b && a.len == b.len &&
			   !memcmp(a.buf, b.buf, a.len);
		int cmp = 0;

		if (same)
			;
		else if (!have_b)
			cmp = -1;
		else if (!have_a)
			cmp = 1;
		else
			cmp = manifest_path_cmp(a.buf, line_path_len(chunk, &a),
				       b.buf, line_path_len(chunk, &b));
		if (same && hunk != SIZE_MAX) {
			hg_delta_add_hunk(delta, hunk, a_start, added.buf,
					  added.len);
			strbuf_reset(&added);
			hunk = SIZE_MAX;
		} else if (!same && hunk == SIZE_MAX) {
			hunk = a_start;
		}
		if (same || cmp >= 0) {
			size_t len = line_path_len(chunk, &b);
			if (prev.len && manifest_path_cmp(prev.buf, prev.len,
						 b.buf, len) >= 0)
				die("malformed manifest revision %s in the "
				    "changegroup: '%.*s' comes after '%s' "
				    "(paths must be sorted and listed once; "
				    "corrupt data)", hg_oid_to_hex(&chunk->node),
				    (int)len, b.buf, prev.buf);
			strbuf_reset(&prev);
			strbuf_add(&prev, b.buf, len);
			if (!same)
				strbuf_addbuf(&added, &b);
			have_b = block_text_line(to, &b_next, &b);
		}
		if (same || cmp <= 0) {
			a_start = a_next;
			have_a = block_text_line(from, &a_next, &a);
		}
	}
	if (hunk != SIZE_MAX)
		hg_delta_add_hunk(delta, hunk, from->len, added.buf, added.len);
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&prev);
	strbuf_release(&added);
}

/*
 * Mercurial breaks the delta chains of a long history every thousand
 * revisions or so with a "snapshot": a revision stored against an older
 * one, or in full, and sent with that base. The trees in the store hold
 * the last revision imported; reloading them from the older base costs
 * as much as importing hundreds of revisions on a 100k-file manifest.
 * Instead, the revision's text is rebuilt from its base and the delta is
 * replaced by the one from the last revision, in `rebased`.
 */
static void rebase_delta(struct rev_chunk *chunk, struct strbuf *rebased)
{
	struct block_text base = BLOCK_TEXT_INIT, text = BLOCK_TEXT_INIT;

	if (!take_offer(&chunk->node, &text)) {
		if (!hg_oid_is_null(&chunk->delta_base) &&
		    !hg2git(&chunk->delta_base))
			return;	/* load_tree_base() says what is missing */
		manifest_block_text(&chunk->delta_base, &base);
		validate_delta(chunk, &base);
		if (block_text_apply(&base, chunk->delta, chunk->delta_len,
				     &text))
			malformed(&chunk->node);
		block_text_release(&base);
	}
	diff_sorted(chunk, &trees.text, &text, rebased);
	block_text_release(&text);
	chunk->delta = rebased->buf;
	chunk->delta_len = rebased->len;
	hg_oidcpy(&chunk->delta_base, &trees.node);
}

int import_manifest_tree(struct rev_chunk *chunk, struct strbuf *rebased)
{
	struct block_text text = BLOCK_TEXT_INIT;
	struct object_id tree;
	struct hg_hunk whole;
	int snapshot, kept;

	if (hg2git(&chunk->node))
		return 0;
	snapshot = trees.loaded && !hg_oideq(&chunk->delta_base, &trees.node);
	if (snapshot)
		rebase_delta(chunk, rebased);
	load_tree_base(&chunk->delta_base);
	validate_delta(chunk, &trees.text);
	if (block_text_apply(&trees.text, chunk->delta, chunk->delta_len,
			     &text))
		malformed(&chunk->node);
	check_sorted(chunk, &text);
	if (hg_oid_is_null(&trees.node) && single_hunk(chunk, &whole)) {
		store_whole(chunk, &whole, EDIT_MANIFEST, &tree);
	} else {
		apply_to_tree(chunk, &trees.text, EDIT_MANIFEST);
		edit_tree_store(EDIT_MANIFEST, &tree);
	}
	store_manifest_commit(chunk, &tree);
	/*
	 * Later snapshots come against this one, or against this full text
	 * (the first manifest of a clone).
	 */
	kept = snapshot || hg_oid_is_null(&chunk->delta_base);
	if (kept)
		manifest_cache_write(&chunk->node, &chunk->p1, &chunk->p2,
				     &tree, &text, 1);
	block_text_release(&trees.text);
	trees.text = text;
	hg_oidcpy(&trees.node, &chunk->node);
	hg_oidcpy(&trees.p1, &chunk->p1);
	hg_oidcpy(&trees.p2, &chunk->p2);
	oidcpy(&trees.tree, &tree);
	trees.imported = 1;
	trees.kept = kept;
	return 1;
}

void manifest_trees_end(void)
{
	if (trees.loaded && trees.imported && !trees.kept)
		manifest_cache_write(&trees.node, &trees.p1, &trees.p2,
				     &trees.tree, &trees.text, 0);
	manifest_cache_trim();
	block_text_release(&trees.text);
	trees.loaded = 0;
	trees.imported = 0;
	edit_tree_load(EDIT_MANIFEST, NULL);
}

void import_manifest_git_tree(struct id_verify *verify,
			      struct rev_chunk *chunk, size_t index,
			      int id_checked)
{
	static const struct block_text empty = BLOCK_TEXT_INIT;
	const struct block_text *base;
	struct object_id git_tree;
	struct shared_text *text;
	struct hg_hunk whole;
	int rebuild;

	load_git_base(verify, &chunk->delta_base);
	base = last ? &last->text : &empty;
	rebuild = validate_delta(chunk, base);
	text = shared_text_take(verify);
	if (block_text_apply(base, chunk->delta, chunk->delta_len,
			     &text->text))
		malformed(&chunk->node);
	if (id_checked)
		verify_id_poll(verify);
	else if (check_enabled(CHECK_MANIFESTS))
		verify_id_async(verify, "manifest", &chunk->node,
				&chunk->p1, &chunk->p2, text, index);
	if (rebuild) {
		struct object_id tree;
		base_manifest_tree(&chunk->node, &tree);
		git_tree_from_manifest_tree(&tree, &git_tree);
		edit_tree_load(EDIT_GIT, &git_tree);
	} else if (!last && single_hunk(chunk, &whole)) {
		store_whole(chunk, &whole, EDIT_GIT, &git_tree);
	} else {
		apply_to_tree(chunk, base, EDIT_GIT);
		edit_tree_store(EDIT_GIT, &git_tree);
	}
	remember_git_tree(&chunk->node, &git_tree);
	set_last(&chunk->node, text);
}

int manifest_commit_body_node(const struct raw_commit *c, struct hg_oid *node)
{
	if (c->body_len != HG_HEXSZ || hg_oid_from_hex(c->body, node))
		return -1;
	return 0;
}

int manifest_commit_node(const struct object_id *commit, struct hg_oid *node)
{
	struct raw_commit c;
	int ret;

	if (raw_commit_read(&c, commit))
		return -1;
	ret = manifest_commit_body_node(&c, node);
	raw_commit_release(&c);
	return ret;
}
