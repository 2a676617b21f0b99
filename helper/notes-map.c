/* Notes trees used as maps: see notes-map.h. */
#include "cache.h"
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
 * holds an entry per file revision: 300,000 of them are 2^19 buckets,
 * 8 MB less). Hashed as git hashes an object id (its first 4 bytes), so
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
	oidread(&kh_value(MAP(m), pos), value);
}

/*
 * A file for a table: a temporary file beside the cache, renamed to it
 * once complete, when `tmp` is given; else one of no name, there or, in
 * a repository we cannot write to, in $TMPDIR.
 */
static int table_file(struct notes_map *m, struct tempfile **tmp)
{
	struct strbuf path = STRBUF_INIT;
	int fd;

	strbuf_git_common_path(&path, the_repository, "cinnabar/%s-XXXXXX",
			       m->name ? m->name : "ids");
	if (safe_create_leading_directories(path.buf) == SCLD_OK) {
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

/* Map the table written to `fd`, and give it its cache name. */
static void install_table(struct notes_map *m, struct tempfile *tmp, int fd,
			  const struct object_id *commit)
{
	int dup_fd = xdup(fd);

	if (tmp) {
		struct strbuf path = STRBUF_INIT;
		strbuf_git_common_path(&path, the_repository,
				       "cinnabar/%s.idx", m->name);
		if (rename_tempfile(&tmp, path.buf))
			delete_tempfile(&tmp);
		strbuf_release(&path);
	} else {
		close(fd);
	}
	id_table_close(&m->base);
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

static int open_cache(struct notes_map *m)
{
	struct strbuf path = STRBUF_INIT;
	int fd;

	strbuf_git_common_path(&path, the_repository, "cinnabar/%s.idx",
			       m->name);
	fd = open(path.buf, O_RDONLY);
	strbuf_release(&path);
	return fd >= 0 && !id_table_open(&m->base, fd, &m->commit);
}

static void ensure_base(struct notes_map *m)
{
	if (m->base_ready)
		return;
	m->base_ready = 1;
	if (is_null_oid(&m->commit))
		return;
	if (!m->trust_cache || !open_cache(m))
		make_cache(m);
}

static const struct object_id *value_oid(const unsigned char *value)
{
	static struct object_id ring[16];
	static unsigned next;
	struct object_id *oid = &ring[next++ % ARRAY_SIZE(ring)];

	oidread(oid, value);
	return oid;
}

const struct object_id *notes_map_get(struct notes_map *m,
				      const struct object_id *key)
{
	khiter_t pos = kh_get_cinnabar_notes(MAP(m), notes_key(key));
	const unsigned char *value;

	if (pos != kh_end(MAP(m)))
		return &kh_value(MAP(m), pos);
	ensure_base(m);
	value = id_table_find(&m->base, key->hash);
	return value ? value_oid(value) : NULL;
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

/* Merge the entries in memory with the base into a new base. */
static void spill(struct notes_map *m)
{
	struct id_table_writer w;
	int fd = table_file(m, NULL);

	id_table_writer_start(&w, fd);
	merge_walk(m, add_to_writer, &w);
	id_table_writer_finish(&w, NULL);
	install_table(m, NULL, fd, NULL);
	kh_clear_cinnabar_notes(MAP(m));
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
	size_t nr;
	khint_t pos;

	ensure_base(m);
	nr = m->base.nr;
	for (pos = kh_begin(h); pos != kh_end(h); pos++)
		if (kh_exist(h, pos) &&
		    !id_table_find(&m->base, kh_key(h, pos).hash))
			nr++;
	return nr;
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

	oidread(&k, key);
	oidread(&v, value);
	d->fn(&k, &v, d->data);
}

void notes_map_for_each(struct notes_map *m, notes_map_fn fn, void *data)
{
	struct for_each_data d = { fn, data };

	merge_walk(m, call_with_oids, &d);
}

/*
 * The notes in key order, for writing the tree: the table of the merged
 * map, read through mmap, and a byte per note for its fanout.
 */
struct sorted_notes {
	struct id_table *t;
	unsigned char *fanout;
};

/* Note i's key, its value after it. */
static const unsigned char *note_key(struct sorted_notes *s, size_t i)
{
	id_table_touch(s->t, 1);
	return id_table_key(s->t, i);
}

static unsigned nibble(const unsigned char *key, unsigned n)
{
	return n % 2 ? key[n / 2] & 0xf : key[n / 2] >> 4;
}

/*
 * Decide each note's fanout (how many leading bytes become directories)
 * the way git's notes code does when it writes a notes tree: picture the
 * notes in a 16-ary trie by hex digit, where a digit shared by two or more
 * notes makes an inner node; at every inner node of even depth n with
 * n <= 2 * fanout, whose 16 children are all inner nodes, the fanout below
 * it grows by one. A note's fanout is the one in force where it sits.
 * Notes [first, first + nr) of `s` are those under the node.
 */
static void assign_fanout(struct sorted_notes *s, size_t first, size_t nr,
			  unsigned n, unsigned fanout)
{
	size_t start[17], i, end = first + nr;
	unsigned b, full = 1;

	for (b = 0, i = first; b < 16; b++) {
		start[b] = i;
		while (i < end && nibble(note_key(s, i), n) == b)
			i++;
		if (i - start[b] < 2)
			full = 0;
	}
	start[16] = end;
	if (!(n % 2) && n <= 2 * fanout && full)
		fanout++;
	for (b = 0; b < 16; b++) {
		size_t count = start[b + 1] - start[b];
		if (count >= 2)
			assign_fanout(s, start[b], count, n + 1, fanout);
		else if (count == 1)
			s->fanout[start[b]] = fanout;
	}
}

/* Write the tree holding notes [i, end) of `s`, `depth` bytes deep. */
static void write_dir(struct sorted_notes *s, size_t i, size_t end,
		      unsigned depth, unsigned mode, struct object_id *result)
{
	struct strbuf tree = STRBUF_INIT;

	while (i < end) {
		if (s->fanout[i] > depth) {
			size_t j = i;
			struct object_id sub;
			unsigned char byte = note_key(s, i)[depth];
			while (j < end && note_key(s, j)[depth] == byte &&
			       s->fanout[j] > depth)
				j++;
			write_dir(s, i, j, depth + 1, mode, &sub);
			strbuf_addf(&tree, "40000 %02x%c", byte, '\0');
			strbuf_add(&tree, sub.hash, GIT_SHA1_RAWSZ);
			i = j;
		} else {
			strbuf_addf(&tree, "%o %s%c", mode,
				    hash_to_hex(note_key(s, i)) + 2 * depth,
				    '\0');
			strbuf_add(&tree, note_key(s, i) + GIT_SHA1_RAWSZ,
				   GIT_SHA1_RAWSZ);
			i++;
		}
	}
	store_object_buf(OBJ_TREE, tree.buf, tree.len, result);
	strbuf_release(&tree);
}

void notes_map_store(struct notes_map *m, struct object_id *result)
{
	struct sorted_notes s;
	struct id_table_writer w;
	struct id_table table;
	struct tempfile *tmp;
	struct object_id tree;
	struct strbuf commit = STRBUF_INIT;
	int fd;

	if (!m->dirty && !is_null_oid(&m->commit)) {
		oidcpy(result, &m->commit);
		return;
	}
	fd = table_file(m, &tmp);
	id_table_writer_start(&w, fd);
	merge_walk(m, add_to_writer, &w);
	id_table_writer_finish(&w, NULL);
	if (id_table_open(&table, xdup(fd), NULL))
		die("cannot read back the table of %s just written", m->name);
	s.t = &table;
	s.fanout = xcalloc(table.nr + 1, 1);
	assign_fanout(&s, 0, table.nr, 0, 0);
	write_dir(&s, 0, table.nr, 0, m->mode, &tree);
	free(s.fanout);
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
}
