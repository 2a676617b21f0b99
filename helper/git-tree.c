/*
 * Git trees for manifests: the tree of the git commit of a changeset holds
 * the files of its manifest as blobs, at the same paths, with mode 100644,
 * 100755 or 120000 for the manifest flags "", "x" and "l". Paths with
 * empty components ("a//b", "/a") end up under "_" directories of the
 * manifest tree; their git tree merges those in, the normal path winning.
 */
#include "libgit.h"
#include "khash.h"
#include "tree-iter.h"
#include "metadata.h"
#include "raw-commit.h"
#include "store.h"
#include "git-tree.h"

/* Git trees for manifest trees, cached by manifest (sub)tree id. */
KHASH_INIT(tree_cache, struct object_id, struct object_id, 1,
	   oidhash_by_value, oideq_by_value)
static kh_tree_cache_t *tree_cache;
#define TREE_CACHE_MAX 16384

const struct object_id *git_blob_for_file(const struct hg_oid *file)
{
	static struct object_id empty;
	if (hg_oideq(file, &hg_empty_file_oid)) {
		store_object_buf(OBJ_BLOB, "", 0, &empty);
		return &empty;
	}
	return git_blob_of_stored_file(file);
}

const struct object_id *git_blob_of_stored_file(const struct hg_oid *file)
{
	const struct object_id *blob;
	if (hg_oideq(file, &hg_empty_file_oid))
		return the_hash_algo->empty_blob;
	blob = hg2git(file);
	if (!blob)
		die("missing file revision %s (the metadata may be "
		    "incomplete)", hg_oid_to_hex(file));
	return blob;
}

static void add_file_entry(struct strbuf *tree, const struct tree_iter *e)
{
	struct hg_oid hg;
	const struct object_id *blob;
	unsigned mode = e->mode & 0777;

	git_oid_to_hg(&hg, &e->oid);
	blob = git_blob_for_file(&hg);
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
	struct tree_pair p;
	const struct tree_iter *a, *b;
	int ret = 0;

	tree_pair_open(&p, tree, merge);
	while (tree_pair_next(&p, &a, &b)) {
		const struct tree_iter *e = a ? a : b;
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
			/* Same name, same kind: both directories. */
			build_git_tree(&e->oid, a && b ? &b->oid : NULL, &sub);
			strbuf_addstr(out, "40000 ");
			strbuf_add(out, e->path + 1, e->pathlen - 1);
			strbuf_addch(out, '\0');
			strbuf_add(out, sub.hash, GIT_SHA1_RAWSZ);
		} else {
			add_file_entry(out, e);
		}
	}
	tree_pair_release(&p);
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
		/*
		 * Only a cache, filled when building the git tree of a
		 * manifest of an earlier session: past TREE_CACHE_MAX
		 * entries (2.4 MB of buckets) it starts afresh instead of
		 * growing with history.
		 */
		if (kh_size(tree_cache) >= TREE_CACHE_MAX)
			kh_clear_tree_cache(tree_cache);
		pos = kh_put_tree_cache(tree_cache, *manifest_tree, &ret);
		kh_value(tree_cache, pos) = *result;
	}
}

void git_tree_from_manifest_tree(const struct object_id *manifest_tree,
				 struct object_id *result)
{
	build_git_tree(manifest_tree, NULL, result);
}

/*
 * Git trees of the manifests imported in this session, by hg id: a map
 * of no notes commit, its entries merged into a table of no name past
 * a number of them (notes-map.h).
 */
static struct notes_map known;

void remember_git_tree(const struct hg_oid *manifest,
		       const struct object_id *tree)
{
	struct object_id key;
	if (!known.map)
		notes_map_init(&known, NULL, NULL, 0);
	hg_oid_to_git(&key, manifest);
	notes_map_set(&known, &key, tree);
}

void learn_git_tree_of_changeset(const struct hg_oid *changeset)
{
	const struct object_id *commit;
	struct object_id key, tree;
	struct hg_oid manifest;

	if (hg_oid_is_null(changeset) || !(commit = hg2git(changeset)))
		return;
	/* A damaged note: the tree is built from the manifest, as before. */
	if (git2hg_manifest(commit, &manifest) || hg_oid_is_null(&manifest))
		return;
	hg_oid_to_git(&key, &manifest);
	if (known.map && notes_map_get(&known, &key))
		return;
	commit_tree_oid(commit, &tree);
	remember_git_tree(&manifest, &tree);
}

int git_tree_for_stored_manifest(const struct hg_oid *manifest,
				 struct object_id *result)
{
	struct object_id key, tree;
	const struct object_id *commit, *found;

	hg_oid_to_git(&key, manifest);
	if (known.map && (found = notes_map_get(&known, &key))) {
		oidcpy(result, found);
		return 0;
	}
	commit = hg2git(manifest);
	if (!commit)
		return -1;
	commit_tree_oid(commit, &tree);
	build_git_tree(&tree, NULL, result);
	remember_git_tree(manifest, result);
	return 0;
}

void git_tree_for_manifest(const struct hg_oid *manifest,
			   struct object_id *result)
{
	if (git_tree_for_stored_manifest(manifest, result))
		die("missing manifest %s (the metadata may be incomplete)",
		    hg_oid_to_hex(manifest));
}

void git_tree_reset_caches(void)
{
	if (tree_cache)
		kh_destroy_tree_cache(tree_cache);
	tree_cache = NULL;
	notes_map_release(&known);
}
