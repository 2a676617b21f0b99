/* Mercurial manifests and their git storage: see manifest.h. */
#include "cache.h"
#include "khash.h"
#include "tree-iter.h"
#include "changegroup.h"
#include "hg-delta.h"
#include "metadata.h"
#include "store.h"
#include "manifest.h"

/* The last manifest imported, whose tree is loaded in the store. */
static struct hg_oid last_node;
static struct strbuf last_text = STRBUF_INIT;

void manifest_reset_cache(void)
{
	hg_oidcpy(&last_node, &hg_null_oid);
	strbuf_release(&last_text);
}

void commit_tree_oid(const struct object_id *commit, struct object_id *tree)
{
	unsigned long size;
	char *buf = store_read_object_typed(commit, OBJ_COMMIT, &size);
	if (size < 46 || !starts_with(buf, "tree ") ||
	    get_oid_hex(buf + 5, tree))
		die("commit %s is damaged", oid_to_hex(commit));
	free(buf);
}

static const char *flag_for_mode(unsigned mode, const char *path)
{
	if (!S_ISGITLINK(mode))
		die("manifest entry '%s' has unexpected mode %06o", path, mode);
	if ((mode & 0755) == 0755)
		return "x";
	if ((mode & 0644) == 0644)
		return "";
	if (!(mode & 0777))
		return "l";
	die("manifest entry '%s' has unexpected mode %06o", path, mode);
}

/* Append the manifest lines for the tree under `base` ("a/b/"). */
static void generate_lines(struct strbuf *out, const struct object_id *tree,
			   struct strbuf *base)
{
	struct tree_iter entry;
	unsigned long size;
	void *buf = store_read_object_typed(tree, OBJ_TREE, &size);
	size_t base_len = base->len;

	tree_iter_init(&entry, buf, size);
	while (tree_iter_next(&entry)) {
		if (!entry.pathlen || entry.path[0] != '_')
			die("manifest tree %s is damaged", oid_to_hex(tree));
		strbuf_add(base, entry.path + 1, entry.pathlen - 1);
		if (S_ISDIR(entry.mode)) {
			strbuf_addch(base, '/');
			generate_lines(out, &entry.oid, base);
		} else {
			strbuf_addbuf(out, base);
			strbuf_addf(out, "%c%s%s\n", '\0',
				    oid_to_hex(&entry.oid),
				    flag_for_mode(entry.mode, base->buf));
		}
		strbuf_setlen(base, base_len);
	}
	free(buf);
}

/* Load a stored manifest: its text, and its tree into the store. */
static void load_manifest(const struct hg_oid *node)
{
	const struct object_id *commit = hg2git(node);
	struct object_id tree;
	struct strbuf base = STRBUF_INIT;

	if (!commit)
		die("missing manifest %s, needed as a delta base (the "
		    "metadata may be incomplete)", hg_oid_to_hex(node));
	commit_tree_oid(commit, &tree);
	strbuf_reset(&last_text);
	generate_lines(&last_text, &tree, &base);
	strbuf_release(&base);
	manifest_tree_load(&tree);
	hg_oidcpy(&last_node, node);
}

/* One manifest line. */
struct manifest_line {
	const char *path;
	size_t path_len;
	struct hg_oid oid;
	char flag;
};

/* Parse the line at *p (before end); advance *p. Return -1 if malformed. */
static int next_line(const char **p, const char *end,
		     struct manifest_line *line)
{
	const char *nul = memchr(*p, '\0', end - *p), *eol;
	if (!nul || nul == *p || end - nul < HG_HEXSZ + 2)
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

/* Apply the lines removed and added by a delta to the stored tree. */
static void apply_to_tree(struct rev_chunk *chunk)
{
	struct hg_delta_iter it;
	struct hg_hunk h;
	struct manifest_line line;
	struct strbuf path = STRBUF_INIT;
	const char *p;
	int ret;

	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while ((ret = hg_delta_next(&it, &h)) > 0) {
		if (h.end > last_text.len ||
		    (h.start && last_text.buf[h.start - 1] != '\n') ||
		    (h.end && last_text.buf[h.end - 1] != '\n'))
			malformed(&chunk->node);
		for (p = last_text.buf + h.start; p < last_text.buf + h.end;) {
			if (next_line(&p, last_text.buf + h.end, &line))
				malformed(&chunk->node);
			tree_path(&path, line.path, line.path_len);
			manifest_tree_remove(path.buf);
		}
	}
	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while ((ret = hg_delta_next(&it, &h)) > 0) {
		for (p = h.data; p < h.data + h.len;) {
			struct object_id oid;
			unsigned mode;
			if (next_line(&p, h.data + h.len, &line))
				malformed(&chunk->node);
			mode = line.flag == 'x' ? 0160755 :
			       line.flag == 'l' ? 0160000 : 0160644;
			hg_oid_to_git(&oid, &line.oid);
			tree_path(&path, line.path, line.path_len);
			manifest_tree_set(path.buf, &oid, mode);
		}
	}
	strbuf_release(&path);
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

/* Reused between revisions, to spare large allocations. */
static struct strbuf text = STRBUF_INIT;

static void remember_manifest_tree(const struct object_id *commit,
				   const struct object_id *tree);

void import_manifest(struct rev_chunk *chunk)
{
	struct strbuf commit = STRBUF_INIT;
	struct object_id tree, oid, parents[2];
	struct hg_oid check;
	int nr_parents = 0;

	if (hg2git(&chunk->node))
		return;
	if (!hg_oideq(&chunk->delta_base, &last_node)) {
		if (hg_oid_is_null(&chunk->delta_base)) {
			strbuf_reset(&last_text);
			manifest_tree_load(NULL);
			hg_oidcpy(&last_node, &hg_null_oid);
		} else {
			load_manifest(&chunk->delta_base);
		}
	}
	strbuf_reset(&text);
	if (hg_delta_apply(last_text.buf, last_text.len, chunk->delta,
			   chunk->delta_len, &text))
		malformed(&chunk->node);
	hg_hash(&chunk->p1, &chunk->p2, text.buf, text.len, &check);
	if (!hg_oideq(&check, &chunk->node))
		die("manifest %s does not match its contents (corrupt data)",
		    hg_oid_to_hex(&chunk->node));
	apply_to_tree(chunk);
	manifest_tree_store(&tree);

	strbuf_addf(&commit, "tree %s\n", oid_to_hex(&tree));
	nr_parents += add_parent(&commit, &chunk->p1, &parents[nr_parents]);
	nr_parents += add_parent(&commit, &chunk->p2, &parents[nr_parents]);
	strbuf_addf(&commit, CINNABAR_AUTHORSHIP "\n%s",
		    hg_oid_to_hex(&chunk->node));
	store_object_buf(OBJ_COMMIT, commit.buf, commit.len, &oid);
	set_hg2git(&chunk->node, &oid);
	remember_manifest_tree(&oid, &tree);
	add_manifest_head(&oid, parents, nr_parents);

	strbuf_swap(&text, &last_text);
	hg_oidcpy(&last_node, &chunk->node);
	strbuf_release(&commit);
}

/* Git trees for manifest trees, cached by manifest (sub)tree id. */
KHASH_INIT(tree_cache, struct object_id, struct object_id, 1,
	   oidhash_by_value, oideq_by_value)
static kh_tree_cache_t *tree_cache;

struct tree_reader {
	void *buf;
	struct tree_iter entry;
	int has_entry;
};

static void tree_reader_init(struct tree_reader *r, const struct object_id *t)
{
	unsigned long size;
	memset(r, 0, sizeof(*r));
	if (!t)
		return;
	r->buf = store_read_object_typed(t, OBJ_TREE, &size);
	tree_iter_init(&r->entry, r->buf, size);
	r->has_entry = tree_iter_next(&r->entry);
}

static void tree_reader_next(struct tree_reader *r)
{
	r->has_entry = r->buf && tree_iter_next(&r->entry);
}

static const struct object_id *empty_blob(void)
{
	static struct object_id oid;
	store_object_buf(OBJ_BLOB, "", 0, &oid);
	return &oid;
}

static void add_file_entry(struct strbuf *tree, const struct tree_iter *e)
{
	struct hg_oid hg;
	const struct object_id *blob;
	unsigned mode = e->mode & 0777;

	git_oid_to_hg(&hg, &e->oid);
	if (hg_oideq(&hg, &hg_empty_file_oid))
		blob = empty_blob();
	else if (!(blob = hg2git(&hg)))
		die("missing file revision %s (the metadata may be "
		    "incomplete)", hg_oid_to_hex(&hg));
	mode = mode ? S_IFREG | mode : S_IFLNK;
	strbuf_addf(tree, "%o ", canon_mode(mode));
	strbuf_add(tree, e->path + 1, e->pathlen - 1);
	strbuf_addch(tree, '\0');
	strbuf_add(tree, blob->hash, GIT_SHA1_RAWSZ);
}

static void build_git_tree(const struct object_id *manifest_tree,
			   const struct object_id *merge_tree,
			   struct object_id *result);

/*
 * Merge-walk a manifest tree and, for paths that had an empty component
 * ("a//b", "/a"), the tree under its "_" entry; entries of the main tree
 * win. Return 1 if the tree has a "_" entry and `merge` is NULL: the
 * caller must then build the merge of both instead.
 */
static int walk_entries(struct strbuf *out, const struct object_id *tree,
			const struct object_id *merge,
			struct object_id *underscore)
{
	struct tree_reader a, b;
	int ret = 0;

	tree_reader_init(&a, tree);
	tree_reader_init(&b, merge);
	while (a.has_entry || b.has_entry) {
		int cmp;
		struct tree_iter *e;
		if (!a.has_entry)
			cmp = 1;
		else if (!b.has_entry)
			cmp = -1;
		else
			cmp = base_name_compare(a.entry.path, a.entry.pathlen,
						a.entry.mode, b.entry.path,
						b.entry.pathlen, b.entry.mode);
		e = cmp <= 0 ? &a.entry : &b.entry;
		if (!e->pathlen || e->path[0] != '_')
			die("manifest tree %s is damaged", oid_to_hex(tree));
		if (e->pathlen == 1) {
			if (!S_ISDIR(e->mode))
				die("manifest tree %s is damaged",
				    oid_to_hex(tree));
			if (!merge) {
				oidcpy(underscore, &e->oid);
				ret = 1;
				break;
			}
		} else if (S_ISDIR(e->mode)) {
			struct object_id sub;
			int both = cmp == 0 && S_ISDIR(b.entry.mode);
			build_git_tree(&e->oid, both ? &b.entry.oid : NULL,
				       &sub);
			strbuf_addstr(out, "40000 ");
			strbuf_add(out, e->path + 1, e->pathlen - 1);
			strbuf_addch(out, '\0');
			strbuf_add(out, sub.hash, GIT_SHA1_RAWSZ);
		} else {
			add_file_entry(out, e);
		}
		if (cmp <= 0)
			tree_reader_next(&a);
		if (cmp >= 0)
			tree_reader_next(&b);
	}
	free(a.buf);
	free(b.buf);
	return ret;
}

static void build_git_tree(const struct object_id *manifest_tree,
			   const struct object_id *merge_tree,
			   struct object_id *result)
{
	struct strbuf buf = STRBUF_INIT;
	struct object_id underscore;
	khiter_t pos;
	int ret;

	if (!tree_cache)
		tree_cache = kh_init_tree_cache();
	if (!merge_tree) {
		pos = kh_get_tree_cache(tree_cache, *manifest_tree);
		if (pos != kh_end(tree_cache)) {
			oidcpy(result, &kh_value(tree_cache, pos));
			return;
		}
	}
	if (walk_entries(&buf, manifest_tree, merge_tree, &underscore)) {
		build_git_tree(manifest_tree, &underscore, result);
	} else {
		store_object_buf(OBJ_TREE, buf.buf, buf.len, result);
	}
	strbuf_release(&buf);
	if (!merge_tree) {
		pos = kh_put_tree_cache(tree_cache, *manifest_tree, &ret);
		kh_value(tree_cache, pos) = *result;
	}
}

/* Trees of the manifest commits stored in this session. */
static kh_tree_cache_t *manifest_trees;

static void remember_manifest_tree(const struct object_id *commit,
				   const struct object_id *tree)
{
	int ret;
	khiter_t pos;
	if (!manifest_trees)
		manifest_trees = kh_init_tree_cache();
	pos = kh_put_tree_cache(manifest_trees, *commit, &ret);
	kh_value(manifest_trees, pos) = *tree;
}

void git_tree_for_manifest(const struct object_id *manifest_commit,
			   struct object_id *result)
{
	struct object_id tree;
	khiter_t pos = manifest_trees ?
		kh_get_tree_cache(manifest_trees, *manifest_commit) : 0;
	if (manifest_trees && pos != kh_end(manifest_trees))
		oidcpy(&tree, &kh_value(manifest_trees, pos));
	else
		commit_tree_oid(manifest_commit, &tree);
	build_git_tree(&tree, NULL, result);
}
