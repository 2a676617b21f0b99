/* The replace map of the metadata: see replace-map.h. */
#include "libgit.h"
#include "refs.h"
#include "khash.h"
#include "oid-array.h"
#include "string-list.h"
#include "tree-walk.h"
#include "store.h"
#include "replace-map.h"

KHASH_INIT(replace, struct object_id, struct object_id, 1, oidhash_by_value,
	   oideq_by_value)

static kh_replace_t *forward, *backward;

static int put(kh_replace_t *map, const struct object_id *key,
	       const struct object_id *value)
{
	int ret;
	khiter_t pos = kh_put_replace(map, *key, &ret);
	kh_value(map, pos) = *value;
	return ret;
}

static const struct object_id *get(kh_replace_t *map,
				   const struct object_id *key)
{
	khiter_t pos;
	if (!map)
		return NULL;
	pos = kh_get_replace(map, *key);
	return pos == kh_end(map) ? NULL : &kh_value(map, pos);
}

typedef void (*entry_fn)(const struct object_id *replaced,
			 const struct object_id *replacement, void *data);

/* The valid entries of metadata tree `tree`, as replace-map.h says. */
static void read_entries(const struct object_id *tree, int warn,
			 entry_fn fn, void *data)
{
	struct tree_desc desc;
	struct name_entry entry;
	unsigned long len;
	char *buf = store_read_object_typed(tree, OBJ_TREE, &len);

	if (init_tree_desc_gently(&desc, tree, buf, len, 0))
		die("the cinnabar metadata is damaged (its tree %s); run "
		    "`git cinnabar rollback` or `git cinnabar reclone`",
		    oid_to_hex(tree));
	while (tree_entry_gently(&desc, &entry)) {
		struct object_id replaced;
		const char *end;
		if (!S_ISGITLINK(entry.mode))
			die("the cinnabar metadata is damaged (its tree %s "
			    "has '%s', which is not a replaced commit); run "
			    "`git cinnabar rollback` or `git cinnabar reclone`",
			    oid_to_hex(tree), entry.path);
		if (tree_entry_len(&entry) != the_hash_algo->hexsz ||
		    parse_oid_hex(entry.path, &replaced, &end)) {
			if (warn)
				warning("ignoring the replace entry '%s' of "
					"the cinnabar metadata: not a commit "
					"id", entry.path);
			continue;
		}
		if (oideq(&replaced, &entry.oid)) {
			if (warn)
				warning("ignoring the replace entry of the "
					"cinnabar metadata replacing %s with "
					"itself", entry.path);
			continue;
		}
		fn(&replaced, &entry.oid, data);
	}
	free(buf);
}

static void load_entry(const struct object_id *replaced,
		       const struct object_id *replacement, void *data UNUSED)
{
	if (get(forward, replaced))
		die("the cinnabar metadata is damaged (commit %s is replaced "
		    "twice); run `git cinnabar rollback` or `git cinnabar "
		    "reclone`", oid_to_hex(replaced));
	set_replace(replaced, replacement);
}

void replace_map_load(const struct object_id *tree)
{
	if (forward) {
		kh_destroy_replace(forward);
		kh_destroy_replace(backward);
	}
	forward = kh_init_replace();
	backward = kh_init_replace();
	if (tree && !is_null_oid(tree))
		read_entries(tree, 1, load_entry, NULL);
}

const struct object_id *replace_lookup(const struct object_id *commit)
{
	const struct object_id *r = get(forward, commit);
	return r ? r : commit;
}

const struct object_id *replace_original(const struct object_id *commit)
{
	const struct object_id *r = get(backward, commit);
	return r ? r : commit;
}

int is_replaced(const struct object_id *commit)
{
	return !!get(forward, commit);
}

void set_replace(const struct object_id *replaced,
		 const struct object_id *replacement)
{
	if (!forward)
		replace_map_load(NULL);
	put(forward, replaced, replacement);
	put(backward, replacement, replaced);
}

size_t replace_map_size(void)
{
	return forward ? kh_size(forward) : 0;
}

void for_each_replace(each_replace_fn fn, void *data)
{
	struct oid_array keys = OID_ARRAY_INIT;
	khiter_t pos;
	size_t i;

	if (!forward)
		return;
	for (pos = kh_begin(forward); pos != kh_end(forward); pos++)
		if (kh_exist(forward, pos))
			oid_array_append(&keys, &kh_key(forward, pos));
	oid_array_sort(&keys);
	for (i = 0; i < keys.nr; i++)
		fn(&keys.oid[i], get(forward, &keys.oid[i]), data);
	oid_array_clear(&keys);
}

static void add_entry(const struct object_id *replaced,
		      const struct object_id *replacement, void *data)
{
	struct strbuf *buf = data;
	/* Names of the same length: the id order is git's tree order. */
	strbuf_addf(buf, "160000 %s%c", oid_to_hex(replaced), '\0');
	strbuf_add(buf, replacement->hash, the_hash_algo->rawsz);
}

void replace_map_store(struct object_id *tree)
{
	struct strbuf buf = STRBUF_INIT;
	for_each_replace(add_entry, &buf);
	store_object_buf(OBJ_TREE, buf.buf, buf.len, tree);
	strbuf_release(&buf);
}

struct ref_updates {
	struct ref_transaction *t;
	struct strbuf *err;
	struct string_list existing;
	int failed;
};

static int existing_ref(const char *refname, const char *referent UNUSED,
			const struct object_id *oid, int flags UNUSED,
			void *data)
{
	struct ref_updates *u = data;
	struct object_id *copy = xmalloc(sizeof(*copy));
	oidcpy(copy, oid);
	string_list_append(&u->existing, refname)->util = copy;
	return 0;
}

static void update_entry(const struct object_id *replaced,
			 const struct object_id *replacement, void *data)
{
	struct ref_updates *u = data;
	const char *hex = oid_to_hex(replaced);
	struct string_list_item *item =
		string_list_lookup(&u->existing, hex);
	struct strbuf ref = STRBUF_INIT;

	strbuf_addf(&ref, REPLACE_REFS_PREFIX "%s", hex);
	if (item) {
		free(item->util);
		item->util = NULL;
	}
	if (!u->failed &&
	    ref_transaction_update(u->t, ref.buf, replacement, NULL, NULL,
				   NULL, REF_SKIP_OID_VERIFICATION,
				   "cinnabar: update metadata", u->err))
		u->failed = 1;
	strbuf_release(&ref);
}

int replace_map_ref_updates(struct ref_transaction *t,
			    const struct object_id *tree, struct strbuf *err)
{
	struct ref_updates u = { t, err, STRING_LIST_INIT_DUP, 0 };
	size_t i;

	refs_for_each_ref_in(get_main_ref_store(the_repository),
			     REPLACE_REFS_PREFIX, existing_ref, &u);
	string_list_sort(&u.existing);
	read_entries(tree, 0, update_entry, &u);
	for (i = 0; i < u.existing.nr; i++) {
		struct strbuf ref = STRBUF_INIT;
		struct object_id *old = u.existing.items[i].util;
		if (!old)
			continue;
		strbuf_addf(&ref, REPLACE_REFS_PREFIX "%s",
			    u.existing.items[i].string);
		if (!u.failed &&
		    ref_transaction_delete(t, ref.buf, old, NULL, 0,
					   "cinnabar: update metadata", err))
			u.failed = 1;
		strbuf_release(&ref);
	}
	string_list_clear(&u.existing, 1);
	return u.failed ? -1 : 0;
}
