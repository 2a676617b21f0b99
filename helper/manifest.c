/* Mercurial manifests and their git storage: see manifest.h. */
#include "cache.h"
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

/*
 * The last manifest imported or loaded: its text, and its manifest tree
 * and git tree loaded in the store's edited trees.
 */
static struct hg_oid last_node;
static struct strbuf last_text = STRBUF_INIT;

void manifest_reset_cache(void)
{
	hg_oidcpy(&last_node, &hg_null_oid);
	strbuf_release(&last_text);
}

void commit_tree_oid(const struct object_id *commit, struct object_id *tree)
{
	struct raw_commit c;
	if (raw_commit_read(&c, commit))
		die("commit %s is damaged", oid_to_hex(commit));
	oidcpy(tree, &c.tree);
	raw_commit_release(&c);
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

/*
 * Manifest subtrees read recently: consecutive manifests share most of
 * them, and reading one back means undoing a chain of deltas.
 */
struct cached_tree {
	struct object_id oid;
	char *buf;
	unsigned long size;
};
#define TREE_CACHE_SLOTS 4096
static struct cached_tree tree_slots[TREE_CACHE_SLOTS];

static void *read_manifest_tree(const struct object_id *oid,
				unsigned long *size)
{
	struct cached_tree *slot = &tree_slots[oidhash(oid) % TREE_CACHE_SLOTS];
	char *buf;
	if (slot->buf && oideq(&slot->oid, oid)) {
		*size = slot->size;
		return xmemdupz(slot->buf, slot->size);
	}
	buf = store_read_object_typed(oid, OBJ_TREE, size);
	free(slot->buf);
	oidcpy(&slot->oid, oid);
	slot->buf = xmemdupz(buf, *size);
	slot->size = *size;
	return buf;
}

/* Append the manifest lines for the tree under `base` ("a/b/"). */
static void generate_lines(struct strbuf *out, const struct object_id *tree,
			   struct strbuf *base)
{
	struct tree_iter entry;
	unsigned long size;
	void *buf = read_manifest_tree(tree, &size);
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
		die("unknown delta base manifest %s (corrupt data, or a "
		    "repository missing history it should have)", hg_oid_to_hex(node));
	commit_tree_oid(commit, &tree);
	strbuf_reset(&last_text);
	generate_lines(&last_text, &tree, &base);
	strbuf_release(&base);
	edit_tree_load(EDIT_MANIFEST, &tree);
	git_tree_for_manifest(node, &tree);
	edit_tree_load(EDIT_GIT, &tree);
	hg_oidcpy(&last_node, node);
}

void manifest_text(const struct hg_oid *node, struct strbuf *out)
{
	const struct object_id *commit = hg2git(node);
	struct object_id tree;
	struct strbuf base = STRBUF_INIT;

	strbuf_reset(out);
	if (hg_oid_is_null(node))
		return;
	if (!commit)
		die("unknown manifest %s", hg_oid_to_hex(node));
	commit_tree_oid(commit, &tree);
	generate_lines(out, &tree, &base);
	strbuf_release(&base);
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

/*
 * Apply the lines removed and added by a delta to both edited trees.
 * Return 0, or 1 when a path needs the git tree to be rebuilt from the
 * manifest tree (empty path components), in which case the git tree was
 * left alone. All removals come first: a delta may add in one hunk what
 * it removes in another.
 */
static int apply_to_trees(struct rev_chunk *chunk)
{
	struct hg_delta_iter it;
	struct hg_hunk h;
	struct manifest_line line;
	struct strbuf path = STRBUF_INIT, git_path = STRBUF_INIT;
	const char *p;
	int rebuild = 0, pass;

	for (pass = 0; pass < 2; pass++) {
		hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
		while (hg_delta_next(&it, &h) > 0) {
			if (h.end > last_text.len ||
			    (h.start && last_text.buf[h.start - 1] != '\n') ||
			    (h.end && last_text.buf[h.end - 1] != '\n'))
				malformed(&chunk->node);
			for (p = pass ? h.data : last_text.buf + h.start;
			     p < (pass ? h.data + h.len : last_text.buf + h.end);) {
				if (next_line(&p, pass ? h.data + h.len
						       : last_text.buf + h.end,
					      &line))
					malformed(&chunk->node);
				if (has_empty_component(line.path, line.path_len))
					rebuild = 1;
				hg_path_check_import(line.path,
						     line.path_len);
			}
		}
	}
	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while (hg_delta_next(&it, &h) > 0) {
		for (p = last_text.buf + h.start; p < last_text.buf + h.end;) {
			next_line(&p, last_text.buf + h.end, &line);
			tree_path(&path, line.path, line.path_len);
			edit_tree_remove(EDIT_MANIFEST, path.buf);
			if (rebuild)
				continue;
			strbuf_reset(&git_path);
			strbuf_add(&git_path, line.path, line.path_len);
			edit_tree_remove(EDIT_GIT, git_path.buf);
		}
	}
	hg_delta_iter_init(&it, chunk->delta, chunk->delta_len);
	while (hg_delta_next(&it, &h) > 0) {
		for (p = h.data; p < h.data + h.len;) {
			struct object_id oid;
			next_line(&p, h.data + h.len, &line);
			hg_oid_to_git(&oid, &line.oid);
			tree_path(&path, line.path, line.path_len);
			edit_tree_set(EDIT_MANIFEST, path.buf, &oid,
				      manifest_mode(line.flag));
			if (rebuild)
				continue;
			strbuf_reset(&git_path);
			strbuf_add(&git_path, line.path, line.path_len);
			edit_tree_set(EDIT_GIT, git_path.buf,
				      git_blob_for_file(&line.oid),
				      git_mode(line.flag));
		}
	}
	strbuf_release(&path);
	strbuf_release(&git_path);
	return rebuild;
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

void import_manifest(struct rev_chunk *chunk)
{
	struct strbuf commit = STRBUF_INIT;
	struct object_id tree, git_tree, oid, parents[2];
	struct hg_oid check;
	int nr_parents = 0;

	if (hg2git(&chunk->node))
		return;
	if (!hg_oideq(&chunk->delta_base, &last_node)) {
		if (hg_oid_is_null(&chunk->delta_base)) {
			strbuf_reset(&last_text);
			edit_tree_load(EDIT_MANIFEST, NULL);
			edit_tree_load(EDIT_GIT, NULL);
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
	if (apply_to_trees(chunk)) {
		edit_tree_store(EDIT_MANIFEST, &tree);
		git_tree_from_manifest_tree(&tree, &git_tree);
		edit_tree_load(EDIT_GIT, &git_tree);
	} else {
		edit_tree_store(EDIT_MANIFEST, &tree);
		edit_tree_store(EDIT_GIT, &git_tree);
	}
	remember_git_tree(&chunk->node, &git_tree);

	strbuf_addf(&commit, "tree %s\n", oid_to_hex(&tree));
	nr_parents += add_parent(&commit, &chunk->p1, &parents[nr_parents]);
	nr_parents += add_parent(&commit, &chunk->p2, &parents[nr_parents]);
	strbuf_addf(&commit, CINNABAR_AUTHORSHIP "\n%s",
		    hg_oid_to_hex(&chunk->node));
	store_object_buf(OBJ_COMMIT, commit.buf, commit.len, &oid);
	set_hg2git(&chunk->node, &oid);
	add_manifest_head(&oid, parents, nr_parents);

	strbuf_swap(&text, &last_text);
	hg_oidcpy(&last_node, &chunk->node);
	strbuf_release(&commit);
}

