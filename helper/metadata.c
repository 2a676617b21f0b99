/* git-cinnabar's metadata: see metadata.h. */
#include "libgit.h"
#include "refs.h"
#include "khash.h"
#include "store.h"
#include "meter.h"
#include "metadata.h"
#include "raw-commit.h"
#include "changeset.h"
#include "replace-map.h"

struct metadata metadata;

/*
 * Changeset branch heads: the changesets added, in order, with flags. A
 * changeset that stops being a head leaves the index at once and the
 * array at the next compaction, so that both stay the size of the heads,
 * not of the history (they held ~150 bytes per changeset of a clone).
 */
struct cs_node {
	struct hg_oid node;
	struct object_id commit;
	const char *branch;
	unsigned is_head : 1;
	/* A changeset imported since the helper started has it for parent. */
	unsigned has_child : 1;
};

KHASH_INIT(cs_index, struct object_id, size_t, 1, oidhash_by_value,
	   oideq_by_value)

static struct cs_node *cs_nodes;
static size_t cs_nr, cs_alloc, cs_dead;
static kh_cs_index_t *cs_index;

static void index_node(size_t i)
{
	struct object_id key;
	int ret;
	khiter_t pos;

	hg_oid_to_git(&key, &cs_nodes[i].node);
	pos = kh_put_cs_index(cs_index, key, &ret);
	kh_value(cs_index, pos) = i;
}

/* Drop the changesets that are no longer heads, keeping the order. */
static void compact_nodes(void)
{
	size_t i, j = 0;

	kh_clear_cs_index(cs_index);
	for (i = 0; i < cs_nr; i++) {
		if (!cs_nodes[i].is_head)
			continue;
		cs_nodes[j] = cs_nodes[i];
		index_node(j++);
	}
	cs_nr = j;
	cs_dead = 0;
}
static struct string_list branches = STRING_LIST_INIT_DUP;

static const char *intern_branch(const char *name, size_t len)
{
	char *s = xmemdupz(name, len);
	struct string_list_item *item = string_list_insert(&branches, s);
	free(s);
	return item->string;
}

static void add_node(const struct hg_oid *node, const char *branch,
		     const struct object_id *commit)
{
	if (cs_dead > 1024 && cs_dead > cs_nr / 2)
		compact_nodes();
	ALLOC_GROW(cs_nodes, cs_nr + 1, cs_alloc);
	hg_oidcpy(&cs_nodes[cs_nr].node, node);
	oidcpy(&cs_nodes[cs_nr].commit, commit);
	cs_nodes[cs_nr].branch = branch;
	cs_nodes[cs_nr].is_head = 1;
	cs_nodes[cs_nr].has_child = 0;
	index_node(cs_nr++);
}

void add_changeset_head(const struct hg_oid *node,
			const struct hg_oid *parents, int nr_parents,
			const char *branch, size_t branch_len,
			const struct object_id *commit)
{
	const char *b = intern_branch(branch, branch_len);
	int i;
	for (i = 0; i < nr_parents; i++) {
		struct object_id key;
		khiter_t pos;
		hg_oid_to_git(&key, &parents[i]);
		pos = kh_get_cs_index(cs_index, key);
		if (pos == kh_end(cs_index))
			continue;
		if (cs_nodes[kh_value(cs_index, pos)].branch == b) {
			cs_nodes[kh_value(cs_index, pos)].is_head = 0;
			kh_del_cs_index(cs_index, pos);
			cs_dead++;
		} else {
			/* Still its branch's head, no longer a topological one. */
			cs_nodes[kh_value(cs_index, pos)].has_child = 1;
		}
	}
	add_node(node, b, commit);
}

/* The heads in order, or only those with a child (has_child). */
static void each_head(each_head_fn fn, void *data, int with_child)
{
	size_t i;
	for (i = 0; i < cs_nr; i++)
		if (cs_nodes[i].is_head &&
		    (!with_child || cs_nodes[i].has_child))
			fn(&cs_nodes[i].node, &cs_nodes[i].commit,
			   cs_nodes[i].branch, data);
}

void for_each_changeset_head(each_head_fn fn, void *data)
{
	each_head(fn, data, 0);
}

void for_each_changeset_head_with_child(each_head_fn fn, void *data)
{
	each_head(fn, data, 1);
}

static NORETURN void bad_metadata(const char *what)
{
	die("the cinnabar metadata is damaged (%s); run "
	    "`git cinnabar rollback` or `git cinnabar reclone`", what);
}

/*
 * Read a metadata commit's parents, body and (when `tree` is not NULL)
 * tree; the buffer is returned.
 */
static char *read_commit_tree(const struct object_id *oid,
			      struct oid_array *parents, const char **body,
			      struct object_id *tree)
{
	struct raw_commit c;
	if (raw_commit_read(&c, oid))
		bad_metadata(oid_to_hex(oid));
	if (tree)
		oidcpy(tree, &c.tree);
	*parents = c.parents;
	*body = c.body;
	return c.buf;
}

static char *read_commit(const struct object_id *oid, struct oid_array *parents,
			 const char **body)
{
	return read_commit_tree(oid, parents, body, NULL);
}

static void load_changeset_heads(void)
{
	struct oid_array parents = OID_ARRAY_INIT;
	const char *body, *p;
	char *buf;
	size_t i = 0;

	if (is_null_oid(&metadata.changesets))
		return;
	buf = read_commit(&metadata.changesets, &parents, &body);
	for (p = body; *p; ) {
		const char *eol = strchrnul(p, '\n');
		struct hg_oid node;
		if (eol - p < HG_HEXSZ + 1 || p[HG_HEXSZ] != ' ' ||
		    hg_oid_from_hex(p, &node) || i >= parents.nr)
			bad_metadata("changeset heads");
		add_node(&node, intern_branch(p + HG_HEXSZ + 1,
					      eol - p - HG_HEXSZ - 1),
			 &parents.oid[i++]);
		p = *eol ? eol + 1 : eol;
	}
	free(buf);
	oid_array_clear(&parents);
}

/*
 * The metadata's format flags: METADATA_FLAGS exactly. Flags we do not
 * know come from a newer git-cinnabar; anything else (flags of versions
 * before 0.5, the same flags written differently) is an older format,
 * which `git cinnabar upgrade` handles or explains (cinnabar/metadata.py
 * says the same).
 */
static int known_flag(const char *word, size_t len)
{
	static const char *known[] = {
		"files-meta", "unified-manifests", "unified-manifests-v2",
	};
	size_t i;
	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (strlen(known[i]) == len && !memcmp(known[i], word, len))
			return 1;
	return 0;
}

static void check_flags(const char *body)
{
	const char *p = body;

	if (!strcmp(body, METADATA_FLAGS))
		return;
	while (*p) {
		size_t len = strcspn(p, " \n\t");
		if (len && !known_flag(p, len))
			die("the cinnabar metadata was written by a newer "
			    "git-cinnabar (unknown flag '%.*s'); upgrade "
			    "git-cinnabar", (int)len, p);
		p += len;
		p += strspn(p, " \n\t");
	}
	die("the cinnabar metadata uses an older format ('%s'); run "
	    "`git cinnabar upgrade`", body);
}

void metadata_load(void)
{
	struct object_id commit;

	if (refs_read_ref(get_main_ref_store(the_repository), METADATA_REF,
			  &commit))
		oidclr(&commit, the_hash_algo);
	metadata_load_commit(&commit);
}

void metadata_load_commit(const struct object_id *commit)
{
	struct oid_array parents = OID_ARRAY_INIT;
	struct object_id tree;
	const char *body;
	char *buf;

	/* The metadata loaded before (at start, or before an abort). */
	notes_map_release(&metadata.hg2git);
	notes_map_release(&metadata.git2hg);
	notes_map_release(&metadata.files_meta);
	oid_array_clear(&metadata.manifest_heads);
	memset(&metadata, 0, sizeof(metadata));
	if (cs_index)
		kh_destroy_cs_index(cs_index);
	cs_index = kh_init_cs_index();
	cs_nr = cs_dead = 0;
	oidcpy(&metadata.commit, commit);
	if (is_null_oid(commit)) {
		notes_map_init(&metadata.hg2git, "hg2git", NULL, 0160000);
		notes_map_init(&metadata.git2hg, "git2hg", NULL, 0100644);
		notes_map_init(&metadata.files_meta, "files-meta", NULL,
			       0100644);
		metadata.manifest_heads.sorted = 1;
		replace_map_load(NULL);
		return;
	}
	buf = read_commit_tree(&metadata.commit, &parents, &body, &tree);
	check_flags(body);
	if (parents.nr < 5)
		bad_metadata("metadata commit");
	oidcpy(&metadata.changesets, &parents.oid[0]);
	oidcpy(&metadata.manifests, &parents.oid[1]);
	notes_map_init(&metadata.hg2git, "hg2git",
		       &parents.oid[2], 0160000);
	notes_map_init(&metadata.git2hg, "git2hg",
		       &parents.oid[3], 0100644);
	notes_map_init(&metadata.files_meta, "files-meta",
		       &parents.oid[4], 0100644);
	free(buf);
	oid_array_clear(&parents);
	replace_map_load(&tree);

	buf = read_commit(&metadata.manifests, &metadata.manifest_heads, &body);
	free(buf);
	oid_array_sort(&metadata.manifest_heads);
	load_changeset_heads();
}

const struct object_id *hg2git(const struct hg_oid *oid)
{
	struct object_id key;
	hg_oid_to_git(&key, oid);
	return notes_map_get(&metadata.hg2git, &key);
}

void set_hg2git(const struct hg_oid *oid, const struct object_id *git)
{
	struct object_id key;
	hg_oid_to_git(&key, oid);
	notes_map_set(&metadata.hg2git, &key, git);
}

static void oid_array_remove(struct oid_array *a, int pos)
{
	MOVE_ARRAY(a->oid + pos, a->oid + pos + 1, a->nr - pos - 1);
	a->nr--;
}

static void oid_array_insert_sorted(struct oid_array *a, int pos,
				    const struct object_id *oid)
{
	ALLOC_GROW(a->oid, a->nr + 1, a->alloc);
	MOVE_ARRAY(a->oid + pos + 1, a->oid + pos, a->nr - pos);
	oidcpy(&a->oid[pos], oid);
	a->nr++;
}

void add_manifest_head(const struct object_id *commit,
		       const struct object_id *parents, int nr_parents)
{
	struct oid_array *heads = &metadata.manifest_heads;
	int i, pos;

	heads->sorted = 1;
	for (i = 0; i < nr_parents; i++) {
		pos = oid_array_lookup(heads, &parents[i]);
		if (pos >= 0)
			oid_array_remove(heads, pos);
	}
	pos = oid_array_lookup(heads, commit);
	if (pos < 0)
		oid_array_insert_sorted(heads, -pos - 1, commit);
	metadata.manifest_heads_dirty = 1;
}

static const struct object_id *empty_tree(void)
{
	static struct object_id oid;
	store_object_buf(OBJ_TREE, "", 0, &oid);
	return &oid;
}

static void add_head_parent(const struct hg_oid *node UNUSED,
			    const struct object_id *commit,
			    const char *branch UNUSED, void *data)
{
	strbuf_addf(data, "parent %s\n", oid_to_hex(commit));
}

static void add_head_line(const struct hg_oid *node,
			  const struct object_id *commit UNUSED,
			  const char *branch, void *data)
{
	strbuf_addf(data, "\n%s %s", hg_oid_to_hex(node), branch);
}

static void store_changesets(struct object_id *result)
{
	struct strbuf buf = STRBUF_INIT;
	strbuf_addf(&buf, "tree %s\n", oid_to_hex(empty_tree()));
	for_each_changeset_head(add_head_parent, &buf);
	strbuf_addstr(&buf, CINNABAR_AUTHORSHIP);
	for_each_changeset_head(add_head_line, &buf);
	store_object_buf(OBJ_COMMIT, buf.buf, buf.len, result);
	strbuf_release(&buf);
}

static void store_manifests(struct object_id *result)
{
	struct strbuf buf = STRBUF_INIT;
	size_t i;

	strbuf_addf(&buf, "tree %s\n", oid_to_hex(empty_tree()));
	for (i = 0; i < metadata.manifest_heads.nr; i++)
		strbuf_addf(&buf, "parent %s\n",
			    oid_to_hex(&metadata.manifest_heads.oid[i]));
	strbuf_addstr(&buf, CINNABAR_AUTHORSHIP "\n");
	store_object_buf(OBJ_COMMIT, buf.buf, buf.len, result);
	strbuf_release(&buf);
}

int metadata_store(struct object_id *result, struct meter *meter)
{
	struct object_id parts[METADATA_PARTS], tree;
	struct strbuf buf = STRBUF_INIT;
	int i;

	store_changesets(&parts[0]);
	meter_update(meter, 1);
	store_manifests(&parts[1]);
	meter_update(meter, 2);
	notes_map_store(&metadata.hg2git, &parts[2]);
	meter_update(meter, 3);
	notes_map_store(&metadata.git2hg, &parts[3]);
	meter_update(meter, 4);
	notes_map_store(&metadata.files_meta, &parts[4]);
	meter_update(meter, 5);
	replace_map_store(&tree);

	if (!is_null_oid(&metadata.commit)) {
		struct oid_array parents = OID_ARRAY_INIT;
		const char *body;
		char *old = read_commit(&metadata.commit, &parents, &body);
		int same = parents.nr >= 5 &&
			   starts_with(old, "tree ") &&
			   !strncmp(old + 5, oid_to_hex(&tree),
				    GIT_SHA1_HEXSZ);
		for (i = 0; same && i < 5; i++)
			same = oideq(&parents.oid[i], &parts[i]);
		free(old);
		oid_array_clear(&parents);
		if (same) {
			oidcpy(result, &metadata.commit);
			return 0;
		}
	}
	strbuf_addf(&buf, "tree %s\n", oid_to_hex(&tree));
	for (i = 0; i < 5; i++)
		strbuf_addf(&buf, "parent %s\n", oid_to_hex(&parts[i]));
	if (!is_null_oid(&metadata.commit))
		strbuf_addf(&buf, "parent %s\n", oid_to_hex(&metadata.commit));
	strbuf_addstr(&buf, CINNABAR_AUTHORSHIP "\n" METADATA_FLAGS);
	store_object_buf(OBJ_COMMIT, buf.buf, buf.len, result);
	strbuf_release(&buf);
	return 1;
}

/*
 * The git2hg notes commit (the fourth part) and the tree of a metadata
 * commit.
 */
static void git2hg_part(const struct object_id *commit, struct object_id *out,
			struct object_id *tree)
{
	struct oid_array parents = OID_ARRAY_INIT;
	const char *body;
	char *buf = read_commit_tree(commit, &parents, &body, tree);

	if (parents.nr < 5)
		die("metadata commit %s is damaged", oid_to_hex(commit));
	oidcpy(out, &parents.oid[3]);
	free(buf);
	oid_array_clear(&parents);
}

struct ref_transaction *metadata_prepare_ref(const struct object_id *commit)
{
	struct strbuf err = STRBUF_INIT;
	struct ref_transaction *t = cinnabar_transaction_begin(
		get_main_ref_store(the_repository), &err);
	struct object_id old, notes, tree;

	if (is_null_oid(&metadata.commit))
		oidclr(&old, the_hash_algo);
	else
		oidcpy(&old, &metadata.commit);
	git2hg_part(commit, &notes, &tree);
	/* The objects are in the pack being written, not yet in git's. */
	if (!t || ref_transaction_update(t, METADATA_REF, commit, &old, NULL,
					 NULL, REF_SKIP_OID_VERIFICATION,
					 "cinnabar: update metadata", &err) ||
	    ref_transaction_update(t, NOTES_REF, &notes, NULL, NULL, NULL,
				   REF_SKIP_OID_VERIFICATION,
				   "cinnabar: update metadata", &err) ||
	    replace_map_ref_updates(t, &tree, &err) ||
	    ref_transaction_prepare(t, &err))
		die("cannot update %s: %s", METADATA_REF, err.buf);
	strbuf_release(&err);
	return t;
}

void metadata_commit_ref(struct ref_transaction *t,
			 const struct object_id *commit)
{
	struct strbuf err = STRBUF_INIT;

	if (ref_transaction_commit(t, &err))
		die("cannot update %s: %s", METADATA_REF, err.buf);
	ref_transaction_free(t);
	strbuf_release(&err);
	oidcpy(&metadata.commit, commit);
}

int git2hg(const struct object_id *commit, struct hg_oid *node)
{
	const struct object_id *note = notes_map_get(&metadata.git2hg,
						     replace_lookup(commit));
	unsigned long len;
	char *buf;
	int ret;

	if (!note)
		return -1;
	buf = store_read_object_typed(note, OBJ_BLOB, &len);
	ret = note_changeset_id(buf, len, node);
	free(buf);
	if (ret)
		die("git2hg note for %s is damaged", oid_to_hex(commit));
	return 0;
}

int git2hg_manifest(const struct object_id *commit, struct hg_oid *manifest)
{
	const struct object_id *note = notes_map_get(&metadata.git2hg,
						     replace_lookup(commit));
	unsigned long len;
	enum object_type type;
	char *buf = note ? store_read_object(note, &type, &len) : NULL;
	int ret = !buf || type != OBJ_BLOB ||
		  note_manifest_id(buf, len, manifest);

	free(buf);
	return ret ? -1 : 0;
}
