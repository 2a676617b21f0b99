/* Checking stored manifests from their manifest trees: see fsck-manifest.h. */
#include "libgit.h"
#include "hashmap.h"
#include "tree-iter.h"
#include "blob-ids.h"
#include "store.h"
#include "git-tree.h"
#include "metadata.h"
#include "manifest.h"
#include "fsck-manifest.h"

/*
 * A subtree at a path: its raw tree, its git tree (git-tree.h; unknown
 * when it lists a file revision hg2git does not have, `missing` being the
 * first, or when it has paths with an empty component, "a//b", under a
 * "_" entry, which git-tree.c merges into the directory's own files), and
 * its part of the manifest text, the lines of the files directly in it,
 * with the parts of its subdirectories in between (pieces[i].child comes
 * after the text up to pieces[i].end).
 */
struct mnode {
	struct hashmap_entry ent;
	struct object_id oid;
	char *base;		/* "a/b/": the path of its entries */
	size_t base_len;
	char *tree;
	unsigned long tree_len;
	struct object_id git_tree;
	struct hg_oid missing;
	unsigned has_missing : 1, merged : 1;
	struct strbuf text;
	struct mpiece {
		size_t end;
		struct mnode *child;
	} *pieces;
	size_t nr, alloc;
	int kept;		/* in `nodes`, else freed after this manifest */
};

/*
 * Kept subtrees, by id and path. Past the budget, all are dropped before
 * the next manifest. Subtrees under very long paths are not kept (their
 * path would be stored for each), nor is any subtree holding one.
 */
#define KEEP_BYTES (32 << 20)
#define KEEP_BASE_MAX 512
static struct hashmap nodes;
static size_t kept_bytes;
static struct mnode **transient;
static size_t transient_nr, transient_alloc;

static int node_cmp(const void *data UNUSED, const struct hashmap_entry *a,
		    const struct hashmap_entry *b, const void *keydata UNUSED)
{
	const struct mnode *x = container_of(a, const struct mnode, ent);
	const struct mnode *y = container_of(b, const struct mnode, ent);
	return !oideq(&x->oid, &y->oid) || x->base_len != y->base_len ||
	       memcmp(x->base, y->base, x->base_len);
}

static unsigned node_hash(const struct object_id *oid, const struct strbuf *base)
{
	return oidhash(oid) ^ memhash(base->buf, base->len);
}

static struct mnode *kept_node(const struct object_id *oid,
			       const struct strbuf *base)
{
	struct mnode key;
	struct hashmap_entry *e;

	if (!nodes.cmpfn)
		return NULL;
	hashmap_entry_init(&key.ent, node_hash(oid, base));
	oidcpy(&key.oid, oid);
	key.base = base->buf;
	key.base_len = base->len;
	e = hashmap_get(&nodes, &key.ent, NULL);
	return e ? container_of(e, struct mnode, ent) : NULL;
}

static void free_node(struct mnode *n)
{
	free(n->base);
	free(n->tree);
	strbuf_release(&n->text);
	free(n->pieces);
	free(n);
}

static void free_transient(void)
{
	size_t i;
	for (i = 0; i < transient_nr; i++)
		free_node(transient[i]);
	transient_nr = 0;
}

void manifest_trees_reset(void)
{
	struct hashmap_iter iter;
	struct mnode *n;

	free_transient();
	FREE_AND_NULL(transient);
	transient_alloc = 0;
	if (!nodes.cmpfn)
		return;
	hashmap_for_each_entry(&nodes, &iter, n, ent)
		free_node(n);
	hashmap_clear(&nodes);
	memset(&nodes, 0, sizeof(nodes));
	kept_bytes = 0;
}

/* The flag of a manifest line for the mode of its gitlink. */
static const char *line_flag(unsigned mode, const struct strbuf *path)
{
	const char *flag = manifest_flag_of_mode(mode);
	if (flag)
		return flag;
	die("manifest entry '%s' has unexpected mode %06o", path->buf, mode);
}

static void add_line(struct strbuf *text, const struct strbuf *path,
		     const struct tree_iter *e)
{
	struct hg_oid file;
	git_oid_to_hg(&file, &e->oid);
	manifest_line_add(text, path->buf, path->len, &file,
			  *line_flag(e->mode, path));
}

static void keep_or_drop(struct mnode *n, const struct strbuf *base,
			 int keep)
{
	size_t i;

	for (i = 0; keep && i < n->nr; i++)
		keep = n->pieces[i].child->kept;
	if (!keep) {
		ALLOC_GROW(transient, transient_nr + 1, transient_alloc);
		transient[transient_nr++] = n;
		return;
	}
	if (!nodes.cmpfn)
		hashmap_init(&nodes, node_cmp, NULL, 0);
	n->kept = 1;
	n->base = xmemdupz(base->buf, base->len);
	n->base_len = base->len;
	hashmap_entry_init(&n->ent, node_hash(&n->oid, base));
	hashmap_add(&nodes, &n->ent);
	kept_bytes += sizeof(*n) + n->base_len + n->tree_len + n->text.alloc +
		      n->alloc * sizeof(*n->pieces);
}

/*
 * The entry of a git tree for a manifest tree entry, as git-tree.c makes
 * them: a directory with its git tree, a file with its blob and mode
 * (100644, 100755 or 120000 from the gitlink's permission bits).
 */
static void add_git_entry(struct mnode *n, struct strbuf *git,
			  const struct tree_iter *e, const struct mnode *child)
{
	struct hg_oid file;
	const struct object_id *oid;
	unsigned mode = e->mode & 0777;

	if (child && (child->merged || child->has_missing)) {
		n->merged |= child->merged;
		if (child->has_missing && !n->has_missing) {
			n->has_missing = 1;
			hg_oidcpy(&n->missing, &child->missing);
		}
		return;
	}
	if (child) {
		strbuf_addstr(git, "40000 ");
		oid = &child->git_tree;
	} else {
		mode = canon_mode(mode ? S_IFREG | mode : S_IFLNK);
		strbuf_addstr(git, mode == 0100644 ? "100644 " :
				   mode == 0100755 ? "100755 " : "120000 ");
		git_oid_to_hg(&file, &e->oid);
		oid = hg_oideq(&file, &hg_empty_file_oid) ?
		      git_blob_for_file(&file) : hg2git(&file);
		if (!oid) {
			if (!n->has_missing)
				hg_oidcpy(&n->missing, &file);
			n->has_missing = 1;
			return;
		}
	}
	strbuf_add(git, e->path + 1, e->pathlen - 1);
	strbuf_addch(git, '\0');
	strbuf_add(git, oid->hash, GIT_SHA1_RAWSZ);
}

/* The subtree `oid` whose entries are under `base` (restored on return). */
static struct mnode *get_node(const struct object_id *oid, struct strbuf *base)
{
	struct mnode *n = kept_node(oid, base);
	struct strbuf git = STRBUF_INIT;
	struct tree_iter e;
	size_t base_len = base->len;

	if (n)
		return n;
	CALLOC_ARRAY(n, 1);
	oidcpy(&n->oid, oid);
	strbuf_init(&n->text, 0);
	n->tree = store_read_object_typed(oid, OBJ_TREE, &n->tree_len);
	tree_iter_init(&e, n->tree, n->tree_len);
	while (tree_iter_next(&e)) {
		if (!e.pathlen || e.path[0] != '_')
			die("manifest tree %s is damaged", oid_to_hex(oid));
		n->merged |= e.pathlen == 1;
		strbuf_add(base, e.path + 1, e.pathlen - 1);
		if (S_ISDIR(e.mode)) {
			struct mnode *child;
			strbuf_addch(base, '/');
			child = get_node(&e.oid, base);
			ALLOC_GROW(n->pieces, n->nr + 1, n->alloc);
			n->pieces[n->nr].end = n->text.len;
			n->pieces[n->nr++].child = child;
			add_git_entry(n, &git, &e, child);
		} else {
			add_line(&n->text, base, &e);
			add_git_entry(n, &git, &e, NULL);
		}
		strbuf_setlen(base, base_len);
	}
	if (!n->merged && !n->has_missing)
		object_id_of(OBJ_TREE, git.buf, git.len, &n->git_tree);
	strbuf_release(&git);
	keep_or_drop(n, base, base_len <= KEEP_BASE_MAX);
	return n;
}

static void hash_node(struct hg_hasher *h, const struct mnode *n)
{
	size_t i, pos = 0;

	for (i = 0; i < n->nr; i++) {
		hg_hasher_update(h, n->text.buf + pos, n->pieces[i].end - pos);
		pos = n->pieces[i].end;
		hash_node(h, n->pieces[i].child);
	}
	hg_hasher_update(h, n->text.buf + pos, n->text.len - pos);
}

int manifest_tree_check(const struct object_id *tree,
			const struct hg_oid *expected,
			const struct hg_oid *p1, const struct hg_oid *p2,
			struct hg_oid *result, struct object_id *git_tree)
{
	struct strbuf base = STRBUF_INIT;
	struct hg_hasher h;
	struct mnode *root;

	if (kept_bytes > KEEP_BYTES)
		manifest_trees_reset();
	root = get_node(tree, &base);
	strbuf_release(&base);
	hg_hasher_init(&h, p1, p2);
	hash_node(&h, root);
	hg_hasher_final(&h, result);
	if (!hg_oideq(result, expected)) {
		free_transient();
		return -1;
	}
	if (root->has_missing)
		die("missing file revision %s (the metadata may be "
		    "incomplete)", hg_oid_to_hex(&root->missing));
	if (root->merged)
		git_tree_from_manifest_tree(tree, git_tree);
	else
		oidcpy(git_tree, &root->git_tree);
	free_transient();
	return 0;
}

/* One side of the comparison: a raw tree being walked. */
struct side {
	char *owned;
	struct tree_iter it;
	int has;
};

static void side_open(struct side *s, const struct object_id *oid,
		      const struct strbuf *base)
{
	struct mnode *n;
	unsigned long len = 0;
	const char *buf = NULL;

	memset(s, 0, sizeof(*s));
	if (!oid)
		return;
	n = kept_node(oid, base);
	if (n) {
		buf = n->tree;
		len = n->tree_len;
	} else {
		buf = s->owned = store_read_object_typed(oid, OBJ_TREE, &len);
	}
	tree_iter_init(&s->it, buf, len);
	s->has = tree_iter_next(&s->it);
}

/* Move `s` to the entry named as `e`; return whether it has one. */
static int side_seek(struct side *s, const struct tree_iter *e)
{
	return tree_iter_seek(&s->it, &s->has, e);
}

static int changes_in(const struct object_id *tree, const struct object_id *a,
		      const struct object_id *b, struct strbuf *base,
		      manifest_change_fn fn, void *data)
{
	struct side t, sa, sb;
	size_t base_len = base->len;
	int ret = 0;

	side_open(&t, tree, base);
	side_open(&sa, a, base);
	side_open(&sb, b, base);
	for (; !ret && t.has; t.has = tree_iter_next(&t.it)) {
		const struct tree_iter *e = &t.it;
		const struct object_id *in_a = side_seek(&sa, e) ? &sa.it.oid : NULL;
		const struct object_id *in_b = side_seek(&sb, e) ? &sb.it.oid : NULL;
		struct hg_oid node, pa, pb;

		if ((in_a && oideq(in_a, &e->oid)) ||
		    (in_b && oideq(in_b, &e->oid)))
			continue;
		if (!e->pathlen || e->path[0] != '_')
			die("manifest tree %s is damaged", oid_to_hex(tree));
		strbuf_add(base, e->path + 1, e->pathlen - 1);
		if (S_ISDIR(e->mode)) {
			strbuf_addch(base, '/');
			ret = changes_in(&e->oid, in_a, in_b, base, fn, data);
		} else {
			git_oid_to_hg(&node, &e->oid);
			hg_oidcpy(&pa, &hg_null_oid);
			hg_oidcpy(&pb, &hg_null_oid);
			if (in_a)
				git_oid_to_hg(&pa, in_a);
			if (in_b)
				git_oid_to_hg(&pb, in_b);
			ret = fn(base->buf, base->len, &node, &pa, &pb, data);
		}
		strbuf_setlen(base, base_len);
	}
	free(t.owned);
	free(sa.owned);
	free(sb.owned);
	return ret;
}

int manifest_tree_changes(const struct object_id *tree,
			  const struct object_id *a,
			  const struct object_id *b,
			  manifest_change_fn fn, void *data)
{
	struct strbuf base = STRBUF_INIT;
	int ret = changes_in(tree, a, b, &base, fn, data);
	strbuf_release(&base);
	return ret;
}
