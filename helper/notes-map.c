/* Notes trees used as maps: see notes-map.h. */
#include "libgit.h"
#include "khash.h"
#include "tree-iter.h"
#include "store.h"
#include "notes-map.h"
#include "raw-commit.h"
#include "id-table.h"
#include "tempfile.h"
#include "config.h"

/*
 * Keys are SHA-1s: 20 bytes, where a struct object_id takes 36 (hg2git
 * holds an entry per file revision, so the buckets are a large part of
 * its memory). Hashed as git hashes an object id (its first 4 bytes), so
 * that the order of a walk stays the same.
 */
struct notes_key {
	unsigned char hash[GIT_SHA1_RAWSZ];
};

static inline unsigned int notes_key_hash(struct notes_key key)
{
	unsigned int hash;
	memcpy(&hash, key.hash, sizeof(hash));
	return hash;
}

static inline int notes_key_eq(struct notes_key a, struct notes_key b)
{
	return !memcmp(a.hash, b.hash, GIT_SHA1_RAWSZ);
}

static struct notes_key notes_key(const struct object_id *oid)
{
	struct notes_key key;
	memcpy(key.hash, oid->hash, GIT_SHA1_RAWSZ);
	return key;
}

KHASH_INIT(cinnabar_notes, struct notes_key, struct object_id, 1,
	   notes_key_hash, notes_key_eq)

#define MAP(m) ((kh_cinnabar_notes_t *)(m)->map)

/*
 * A map is a sorted table read through mmap (id-table.h), its base, and
 * the entries set since, in memory. The base of a map loaded from a notes
 * commit is the cache .git/cinnabar/<name>.idx when that is of the same
 * notes commit, else the cache is made again from the notes tree (after
 * a fetch, a rollback, fsck, or another tool changed the metadata: the
 * commit ids differ). Past SPILL_AT entries in memory, they are merged
 * with the base into a new one, a file of no name (an import adding
 * hundreds of thousands of entries keeps its memory flat). Storing the
 * map merges them all into the cache of the notes commit written.
 * 25,000 entries are what khash's 32,768 buckets (of 56 bytes) hold
 * before it grows them (at 77%); buckets stay allocated between merges.
 */
#define SPILL_AT 25000

/* 0 while fsck runs: the caches are made again from the notes trees. */
int notes_map_trust_cache = 1;

void notes_map_init(struct notes_map *m, const char *name,
		    const struct object_id *commit, unsigned mode)
{
	memset(m, 0, sizeof(*m));
	m->name = name;
	if (commit)
		oidcpy(&m->commit, commit);
	m->mode = mode;
	m->trust_cache = notes_map_trust_cache;
	m->map = kh_init_cinnabar_notes();
	m->spill_at = git_env_ulong("CINNABAR_TEST_NOTES_SPILL", SPILL_AT);
}

void notes_map_release(struct notes_map *m)
{
	if (m->map)
		kh_destroy_cinnabar_notes(MAP(m));
	id_table_close(&m->base);
	pack_filter_release(&m->filter);
	memset(m, 0, sizeof(*m));
}

static void put(struct notes_map *m, const unsigned char *key,
		const unsigned char *value)
{
	struct notes_key k;
	int ret;
	khiter_t pos;

	memcpy(k.hash, key, GIT_SHA1_RAWSZ);
	pos = kh_put_cinnabar_notes(MAP(m), k, &ret);
	oidread(&kh_value(MAP(m), pos), value, the_hash_algo);
}

/*
 * A file for a table: a temporary file beside the cache, renamed to it
 * once complete, when `tmp` is given; else one of no name, there or, in
 * a repository we cannot write to, in $TMPDIR. Named after this process
 * (`<map>-<pid>-XXXXXX`), so that what a killed helper left is told from
 * what a live one is writing, and removed (cinnabar.tmpfiles).
 */
static int table_file(struct notes_map *m, struct tempfile **tmp)
{
	struct strbuf path = STRBUF_INIT;
	int fd;

	cinnabar_common_path(&path,
			       "cinnabar/%s-%"PRIuMAX"-XXXXXX",
			       m->name ? m->name : "ids", (uintmax_t)getpid());
	if (cinnabar_create_leading_directories(path.buf) == SCLD_OK) {
		if (tmp) {
			*tmp = mks_tempfile(path.buf);
			if (*tmp) {
				strbuf_release(&path);
				return get_tempfile_fd(*tmp);
			}
		} else if ((fd = git_mkstemp_mode(path.buf, 0600)) >= 0) {
			unlink(path.buf);
			strbuf_release(&path);
			return fd;
		}
	}
	if (tmp)
		*tmp = NULL;
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/cinnabar-%s-XXXXXX",
		    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		    m->name ? m->name : "ids");
	fd = xmkstemp(path.buf);
	unlink(path.buf);
	strbuf_release(&path);
	return fd;
}

static void cache_path(struct notes_map *m, struct strbuf *path)
{
	cinnabar_common_path(path, "cinnabar/%s.idx",
			       m->name);
}

/* Map the table written to `fd`, and give it its cache name. */
static void install_table(struct notes_map *m, struct tempfile *tmp, int fd,
			  const struct object_id *commit)
{
	int dup_fd = xdup(fd);

	if (tmp) {
		struct strbuf path = STRBUF_INIT;
		cache_path(m, &path);
		if (rename_tempfile(&tmp, path.buf))
			delete_tempfile(&tmp);
		strbuf_release(&path);
	} else {
		close(fd);
	}
	id_table_close(&m->base);
	pack_filter_release(&m->filter);
	if (id_table_open(&m->base, dup_fd, commit))
		die("cannot read back the table of %s just written", m->name);
}

/* Add the notes under `tree`, whose entries' names continue `prefix`. */
static void add_tree_entries(struct id_table_writer *w,
			     const struct object_id *tree_oid,
			     const char *prefix, size_t prefix_len)
{
	struct tree_iter entry;
	unsigned long size;
	void *buf = store_read_object_typed(tree_oid, OBJ_TREE, &size);
	char hex[GIT_SHA1_HEXSZ + 1];

	tree_iter_init(&entry, buf, size);
	while (tree_iter_next(&entry)) {
		size_t len = prefix_len + entry.pathlen;
		if (len > GIT_SHA1_HEXSZ)
			continue;
		memcpy(hex, prefix, prefix_len);
		memcpy(hex + prefix_len, entry.path, entry.pathlen);
		hex[len] = '\0';
		if (len == GIT_SHA1_HEXSZ && !S_ISDIR(entry.mode)) {
			struct object_id key;
			if (get_oid_hex(hex, &key))
				continue;
			id_table_add(w, key.hash, entry.oid.hash);
		} else if (S_ISDIR(entry.mode) && entry.pathlen == 2) {
			add_tree_entries(w, &entry.oid, hex, len);
		}
	}
	free(buf);
}

/* Make the cache of the map's notes commit from its tree. */
static void make_cache(struct notes_map *m)
{
	struct id_table_writer w;
	struct tempfile *tmp;
	struct raw_commit c;
	int fd = table_file(m, &tmp);

	if (raw_commit_read(&c, &m->commit))
		die("cinnabar metadata commit %s is damaged",
		    oid_to_hex(&m->commit));
	id_table_writer_start(&w, fd);
	add_tree_entries(&w, &c.tree, "", 0);
	raw_commit_release(&c);
	id_table_writer_finish(&w, &m->commit);
	install_table(m, tmp, fd, &m->commit);
}

/*
 * The base failed its CRCs (id-table.h). A cache is made again from the
 * notes tree, saying so: nothing it said was used. A table this import
 * merged its entries into cannot be, nor one just made.
 */
static void base_damaged(struct notes_map *m)
{
	struct strbuf path = STRBUF_INIT;

	cache_path(m, &path);
	if (m->spilled || m->remade || is_null_oid(&m->commit))
		die("the table of %s is damaged (%s)",
		    m->name ? m->name : "ids", path.buf);
	warning("'%s' is damaged; making it again from the metadata",
		path.buf);
	strbuf_release(&path);
	m->remade = 1;
	make_cache(m);
}

static int open_cache(struct notes_map *m)
{
	struct strbuf path = STRBUF_INIT;
	int fd, ret;

	cache_path(m, &path);
	fd = open(path.buf, O_RDONLY);
	strbuf_release(&path);
	if (fd < 0)
		return -1;
	ret = id_table_open(&m->base, fd, &m->commit);
	if (ret == ID_TABLE_DAMAGED)
		base_damaged(m);
	return ret == ID_TABLE_DAMAGED ? 0 : ret;
}

static void ensure_base(struct notes_map *m)
{
	if (m->base_ready)
		return;
	m->base_ready = 1;
	if (is_null_oid(&m->commit))
		return;
	if (!m->trust_cache || open_cache(m))
		make_cache(m);
}

/* Whether the base holds `key` (its value in `m->base.value`). */
static int base_find(struct notes_map *m, const unsigned char *key)
{
	int ret;

	ensure_base(m);
	if (m->filter.blocks && !pack_filter_may_hold(&m->filter, key))
		return 0;
	while ((ret = id_table_find(&m->base, key)) == ID_TABLE_DAMAGED)
		base_damaged(m);
	return ret;
}

static const struct object_id *value_oid(const unsigned char *value)
{
	static struct object_id ring[16];
	static unsigned next;
	struct object_id *oid = &ring[next++ % ARRAY_SIZE(ring)];

	oidread(oid, value, the_hash_algo);
	return oid;
}

const struct object_id *notes_map_get(struct notes_map *m,
				      const struct object_id *key)
{
	khiter_t pos = kh_get_cinnabar_notes(MAP(m), notes_key(key));

	if (pos != kh_end(MAP(m)))
		return &kh_value(MAP(m), pos);
	return base_find(m, key->hash) ? value_oid(m->base.value) : NULL;
}

static int slot_cmp(const void *a, const void *b, void *h)
{
	return memcmp(kh_key((kh_cinnabar_notes_t *)h, *(const khint_t *)a).hash,
		      kh_key((kh_cinnabar_notes_t *)h, *(const khint_t *)b).hash,
		      GIT_SHA1_RAWSZ);
}

/* The slots of the entries in memory, sorted by key. */
static khint_t *sorted_slots(struct notes_map *m, size_t *nr)
{
	kh_cinnabar_notes_t *h = MAP(m);
	khint_t *slot, pos;

	ALLOC_ARRAY(slot, kh_size(h) + 1);
	*nr = 0;
	for (pos = kh_begin(h); pos != kh_end(h); pos++)
		if (kh_exist(h, pos))
			slot[(*nr)++] = pos;
	QSORT_S(slot, *nr, slot_cmp, h);
	return slot;
}

typedef void (*raw_entry_fn)(const unsigned char *key,
			     const unsigned char *value, void *data);

/* Call `fn` for every entry of the map in key order. */
static void merge_walk(struct notes_map *m, raw_entry_fn fn, void *data)
{
	kh_cinnabar_notes_t *h = MAP(m);
	struct id_table *base = &m->base;
	size_t i = 0, j = 0, nr;
	khint_t *slot;

	ensure_base(m);
	if (id_table_verify(base))
		base_damaged(m);
	slot = sorted_slots(m, &nr);
	while (i < base->nr || j < nr) {
		const unsigned char *b = i < base->nr ?
			id_table_key(base, i) : NULL;
		int cmp = !b ? 1 : j == nr ? -1 :
			memcmp(b, kh_key(h, slot[j]).hash, GIT_SHA1_RAWSZ);
		if (cmp < 0) {
			fn(b, b + GIT_SHA1_RAWSZ, data);
		} else {
			fn(kh_key(h, slot[j]).hash,
			   kh_value(h, slot[j]).hash, data);
			j++;
		}
		if (cmp <= 0) {
			i++;
			id_table_touch(base, 1);
		}
	}
	free(slot);
}

static void add_to_writer(const unsigned char *key, const unsigned char *value,
			  void *w)
{
	id_table_add(w, key, value);
}

struct spill_data {
	struct id_table_writer w;
	struct pack_filter filter;
};

static void add_to_spill(const unsigned char *key, const unsigned char *value,
			 void *data)
{
	struct spill_data *d = data;

	id_table_add(&d->w, key, value);
	pack_filter_add(&d->filter, key);
}

/*
 * Merge the entries in memory with the base into a new base, and make
 * its filter on the way: most lookups of an import are of ids it has
 * not stored yet (is this changeset, manifest, file revision known?),
 * each of which would otherwise read a block of the table (2.5 kB, a
 * pread) to find it is not there. About a byte per entry.
 */
static void spill(struct notes_map *m)
{
	struct spill_data d;
	int fd = table_file(m, NULL);

	ensure_base(m);
	pack_filter_init(&d.filter, m->base.nr + kh_size(MAP(m)),
			 PACK_FILTER_BYTE);
	id_table_writer_start(&d.w, fd);
	merge_walk(m, add_to_spill, &d);
	id_table_writer_finish(&d.w, NULL);
	install_table(m, NULL, fd, NULL);
	m->filter = d.filter;
	kh_clear_cinnabar_notes(MAP(m));
	m->spilled = 1;
}

void notes_map_set(struct notes_map *m, const struct object_id *key,
		   const struct object_id *value)
{
	put(m, key->hash, value->hash);
	m->dirty = 1;
	if (kh_size(MAP(m)) >= m->spill_at)
		spill(m);
}

size_t notes_map_size(struct notes_map *m)
{
	kh_cinnabar_notes_t *h = MAP(m);
	size_t nr = 0;
	khint_t pos;

	for (pos = kh_begin(h); pos != kh_end(h); pos++)
		if (kh_exist(h, pos) && !base_find(m, kh_key(h, pos).hash))
			nr++;
	ensure_base(m);
	return nr + m->base.nr;
}

struct for_each_data {
	notes_map_fn fn;
	void *data;
};

static void call_with_oids(const unsigned char *key,
			   const unsigned char *value, void *data)
{
	struct for_each_data *d = data;
	struct object_id k, v;

	oidread(&k, key, the_hash_algo);
	oidread(&v, value, the_hash_algo);
	d->fn(&k, &v, d->data);
}

void notes_map_for_each(struct notes_map *m, notes_map_fn fn, void *data)
{
	struct for_each_data d = { fn, data };

	merge_walk(m, call_with_oids, &d);
}

/*
 * Writing a map's notes tree, in the layout git's notes code gives it
 * (notes.c, determine_fanout): a directory (the root, or one named by a
 * byte of the keys in hex, under those of the bytes before) is "split"
 * when each of the 16 hex digits that may follow its prefix starts two
 * or more of its notes; a split directory holds a subdirectory per next
 * byte, an unsplit one its notes, named by the rest of their key in hex.
 * (Picture the notes in a 16-ary trie by hex digit: the fanout in force
 * where a directory starts is its depth, and grows by one there exactly
 * when its node's 16 children are all inner nodes.)
 *
 * Whether a directory is split depends on its notes only; so a
 * directory of the map's previous tree whose notes did not change is
 * the same tree now, and is reused by id, neither rebuilt nor hashed:
 * storing the map after adding a few entries writes the directories
 * holding them, not the whole tree. A previous tree in another layout
 * keeps it in the directories reused (any layout reads the same).
 */
struct tree_writer {
	struct id_table *t;		/* the merged map */
	kh_cinnabar_notes_t *h;		/* the entries set since `old` */
	khint_t *changed;		/* their slots, sorted by key */
	size_t changed_nr;
	unsigned mode;
};

static const unsigned char *changed_key(struct tree_writer *w, size_t i)
{
	return kh_key(w->h, w->changed[i]).hash;
}

/* Whether an entry set since the previous tree is among [lo, hi). */
static int range_changed(struct tree_writer *w, size_t lo, size_t hi)
{
	size_t a = 0, b = w->changed_nr;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (memcmp(changed_key(w, mid), id_table_key(w->t, lo),
			   GIT_SHA1_RAWSZ) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	return a < w->changed_nr &&
	       memcmp(changed_key(w, a), id_table_key(w->t, hi - 1),
		      GIT_SHA1_RAWSZ) <= 0;
}

/*
 * end[b]: the end of the notes of [lo, hi), which share `depth` bytes,
 * whose next byte is b or less (the table's fanout at the root, a search
 * in large ranges, a scan in small ones).
 */
static void byte_ends(struct id_table *t, size_t lo, size_t hi,
		      unsigned depth, size_t end[256])
{
	size_t lo_start = lo;
	unsigned b;

	if (!depth) {
		/*
		 * 256 searches of the whole table would map most of it
		 * before a trim: the kernel maps a file just written by
		 * large folios, so the helper's peak would grow with the
		 * table, that is with history. The fanout gives the same
		 * bounds without reading the table.
		 */
		for (b = 0; b < 256; b++)
			end[b] = t->fanout[b] < lo ? lo :
				 t->fanout[b] > hi ? hi : t->fanout[b];
		return;
	}
	for (b = 0; b < 256; b++) {
		size_t top = hi;
		if (hi - lo > 64) {
			while (lo < top) {
				size_t mid = lo + (top - lo) / 2;
				if (id_table_key(t, mid)[depth] <= b)
					lo = mid + 1;
				else
					top = mid;
			}
		} else {
			while (lo < hi && id_table_key(t, lo)[depth] <= b)
				lo++;
		}
		end[b] = lo;
	}
	/*
	 * 256 searches over the range map most of its pages when it is
	 * small, and a page per probe when large: count the range.
	 */
	id_table_touch(t, hi - lo_start);
}

static int is_split(size_t lo, unsigned depth, const size_t end[256])
{
	unsigned digit;

	if (depth >= GIT_SHA1_RAWSZ - 1)
		return 0;
	for (digit = 0; digit < 16; digit++) {
		size_t start = digit ? end[digit * 16 - 1] : lo;
		if (end[digit * 16 + 15] - start < 2)
			return 0;
	}
	return 1;
}

/* The subdirectories of tree `oid` named by a byte in hex, by byte. */
static struct object_id *subdirs(const struct object_id *oid)
{
	struct object_id *sub = xcalloc(256, sizeof(*sub));
	struct tree_iter entry;
	unsigned long size;
	void *buf = store_read_object_typed(oid, OBJ_TREE, &size);
	unsigned char byte;

	tree_iter_init(&entry, buf, size);
	while (tree_iter_next(&entry))
		if (S_ISDIR(entry.mode) && entry.pathlen == 2 &&
		    !hex_to_bytes(&byte, entry.path, 1))
			oidcpy(&sub[byte], &entry.oid);
	free(buf);
	return sub;
}

/*
 * Write the directory of notes [lo, hi), `depth` bytes deep; `old` is the
 * same directory in the previous tree, or NULL.
 */
static void write_dir(struct tree_writer *w, size_t lo, size_t hi,
		      unsigned depth, const struct object_id *old,
		      struct object_id *result)
{
	struct strbuf tree = STRBUF_INIT;
	struct object_id named;
	size_t end[256], i;
	unsigned b;
	int written = 0;

	byte_ends(w->t, lo, hi, depth, end);
	if (is_split(lo, depth, end)) {
		struct object_id *was = old ? subdirs(old) : NULL;
		for (b = 0, i = lo; b < 256; i = end[b++]) {
			struct object_id sub;
			const struct object_id *prev =
				was && !is_null_oid(&was[b]) ? &was[b] : NULL;
			if (i == end[b])
				continue;
			if (prev && !range_changed(w, i, end[b])) {
				oidcpy(&sub, prev);
			} else {
				write_dir(w, i, end[b], depth + 1, prev, &sub);
				if (!written++)
					oidcpy(&named, &sub);
			}
			strbuf_addf(&tree, "40000 %02x%c", b, '\0');
			strbuf_add(&tree, sub.hash, GIT_SHA1_RAWSZ);
		}
		free(was);
	} else {
		for (i = lo; i < hi; i++) {
			const unsigned char *key = id_table_key(w->t, i);
			strbuf_addf(&tree, "%o %s%c", w->mode,
				    hash_to_hex(key) + 2 * depth, '\0');
			strbuf_add(&tree, key + GIT_SHA1_RAWSZ,
				   GIT_SHA1_RAWSZ);
		}
		id_table_touch(w->t, hi - lo);
	}
	store_tree_naming(tree.buf, tree.len, written ? &named : NULL, result);
	strbuf_release(&tree);
}

/* The root tree of the map's notes commit, when it tells what changed. */
static int previous_tree(struct notes_map *m, struct object_id *tree)
{
	struct raw_commit c;

	if (is_null_oid(&m->commit) || m->spilled ||
	    raw_commit_read(&c, &m->commit))
		return 0;
	oidcpy(tree, &c.tree);
	raw_commit_release(&c);
	return 1;
}

void notes_map_store(struct notes_map *m, struct object_id *result)
{
	struct tree_writer tw;
	struct id_table_writer w;
	struct id_table table;
	struct tempfile *tmp;
	struct object_id tree, old;
	int has_old;
	struct strbuf commit = STRBUF_INIT;
	int fd;

	if (!m->dirty && !is_null_oid(&m->commit)) {
		oidcpy(result, &m->commit);
		return;
	}
	has_old = previous_tree(m, &old);
	fd = table_file(m, &tmp);
	id_table_writer_start(&w, fd);
	merge_walk(m, add_to_writer, &w);
	id_table_writer_finish(&w, NULL);
	if (id_table_open(&table, xdup(fd), NULL))
		die("cannot read back the table of %s just written", m->name);
	tw.t = &table;
	tw.h = MAP(m);
	tw.changed = sorted_slots(m, &tw.changed_nr);
	tw.mode = m->mode;
	write_dir(&tw, 0, table.nr, 0, has_old ? &old : NULL, &tree);
	free(tw.changed);
	id_table_close(&table);
	strbuf_addf(&commit, "tree %s\n" CINNABAR_AUTHORSHIP "\n",
		    oid_to_hex(&tree));
	store_object_buf(OBJ_COMMIT, commit.buf, commit.len, result);
	strbuf_release(&commit);
	/* The map is now the notes commit written, and its cache. */
	id_table_set_commit(fd, result);
	install_table(m, tmp, fd, result);
	kh_clear_cinnabar_notes(MAP(m));
	oidcpy(&m->commit, result);
	m->base_ready = 1;
	m->dirty = 0;
	m->spilled = 0;
}
