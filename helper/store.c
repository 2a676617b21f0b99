/*
 * The object store, on top of git's fast-import: see store.h.
 *
 * This file includes the pinned git tree's builtin/fast-import.c as it is,
 * to reach the pack it writes (started, ended, indexed and read back by
 * its functions), its object table and its tree editing (the
 * tree_content_* functions). Nothing of it is changed; if the pinned
 * version changes, the check below fails the build (helper.mk passes the
 * version of the tree compiled against as CINNABAR_GIT_VERSION_ID, its
 * dots as underscores): the fast-import internals used here must be read
 * again against the new version before moving the line below. `make
 * try-git` (doc/git-source.md) lifts the check, defining
 * CINNABAR_GIT_UNCHECKED, to try another release first.
 *
 * What of fast-import is used here, by job (everything else goes through
 * git's public headers: csum-file.h's hashwrite and crc32, pack.h's
 * encode_in_pack_object_header, packfile.h's pack lists and lookups,
 * object-file.h's reads, delta.h's diff_delta, zlib.h's git_deflate;
 * objects are hashed, checked for duplicates, deltified, deflated and
 * appended to the pack here, pack.depth and pack.packSizeLimit read here):
 *  - the pack being written: pack_data, pack_file, pack_id, pack_size,
 *    object_count (end_packfile writes it in the header), all_packs,
 *    start_packfile, end_packfile, cycle_packfile, unkeep_all_packs,
 *    gfi_unpack_entry, MAX_PACK_ID, unpack_limit, pack_idx_opts,
 *    git_pack_config;
 *  - the object table: struct object_entry, struct object_entry_pool,
 *    blocks, alloc_count, alloc_objects, object_entry_alloc, object_table,
 *    object_entry_hashcmp, insert_object, find_object;
 *  - editing trees: struct tree_entry, struct tree_content, NO_DELTA,
 *    load_tree, tree_content_set, tree_content_remove,
 *    release_tree_content_recursive, release_tree_entry,
 *    tree_entry_allocd, avail_tree_table(_sz), and the names: struct
 *    atom_str, atom_table(_sz), atom_cnt, hc_str;
 *  - what fast-import's main sets up: branch_table(_sz), which
 *    end_packfile() walks when it turns a small pack into loose objects
 *    (invalidate_pack_id).
 */
#define CINNABAR_GIT_2_47_3 1
#define CINNABAR_PASTE(a, b) a##b
#define CINNABAR_PINNED(v) CINNABAR_PASTE(CINNABAR_GIT_, v)
#if !defined(CINNABAR_GIT_UNCHECKED) && \
	(!defined(CINNABAR_GIT_VERSION_ID) || !CINNABAR_PINNED(CINNABAR_GIT_VERSION_ID))
#error "store.c is written against git 2.47.3's fast-import; check it against this git version"
#endif
/*
 * fast-import flushes the pack being written before reading an object
 * back from it (gfi_unpack_entry); objects deflated on a second thread
 * are appended to the pack there first (see "Writing objects" below).
 */
#include "libgit.h"
#include "csum-file.h"
static void flush_pending_then_hashflush(struct hashfile *f);
static void flush_pending(void);
#define hashflush(f) flush_pending_then_hashflush(f)
#if !CINNABAR_GIT_NEW_API
static void fixup_written_pack(int pack_fd, unsigned char *new_pack_hash,
			       const char *pack_name, uint32_t object_count,
			       unsigned char *partial_pack_hash,
			       off_t partial_pack_offset);
#define fixup_pack_header_footer fixup_written_pack
#endif
#include "builtin/fast-import.c"
#undef hashflush
#undef fixup_pack_header_footer
#include "deflate-queue.h"
#include "sigchain.h"
#include "fatal-signal.h"
#include "blob-ids.h"
#include "store.h"
#include "pack-filter.h"
#include "filter-rows.h"
#include "idx-lookup.h"
#include "hg-delta.h"
#include "delta-stream.h"
#include "git-delta.h"
#if !CINNABAR_GIT_NEW_API
#include "streaming.h"
#endif

static int store_initialized;
/*
 * Streams reading the pack being written (open_written_entry): no
 * checkpoint ends it under them.
 */
static unsigned entries_being_read;
static struct tree_entry edit_roots[2];

/*
 * The edited trees in memory. fast-import holds every directory of a tree
 * read or edited since it was loaded, ~100 bytes an entry, so that two
 * trees of a wide manifest are most of the import's memory. Directories
 * written (their id known) can be let go of, leaving their entry and id:
 * load_tree() reads them back when an edit goes there. Entries let go of
 * are kept by fast-import for reuse, never freed: what counts is how many
 * it ever held at once (tree_entry_allocd). Once that passes the budget
 * and grew since the last sweep of a tree, the next store of that tree
 * sweeps it: of the directories it writes, it keeps those it writes and
 * lets go of the others (unload_tree), so that what stays is what the last
 * manifest edited. Reading a directory back costs: it is mostly in the
 * pack being written, whose pending objects are appended and mmap windows
 * remapped first, then a chain of deltas is undone. The budget (~27 MB of
 * entries) holds both trees of a 100k-file manifest whole: a budget below
 * the trees' size makes edits of random files read a directory back at
 * nearly every edit (doc/performance.md, "Memory bounded by the tip, not
 * the history"). A manifest given whole is written as it comes
 * (manifest.c): edit_tree_write_dir(). CINNABAR_TEST_TREE_BUDGET sets the
 * budget, in entries; 0 sweeps at every store (tests).
 */
#define TREE_BUDGET 262144
static unsigned long tree_budget;
static size_t swept_at[2];
static int sweeping;

/*
 * Checkpoints. fast-import keeps an entry (~72 bytes, plus its hash table
 * slot) for every object of the packs it wrote, for the whole session: on
 * a long history that table was most of the memory growth. Once the table
 * holds `checkpoint_objects` entries, the pack being written is finished
 * (indexed, kept with a .keep file, registered in the repository's object
 * store) and the table is emptied: later reads of its objects, and the
 * duplicate check of new objects (new_object_entry's in_some_pack), go
 * through the pack index instead. Only deltas do not cross the boundary
 * (the first version of each file or tree after a checkpoint is stored
 * whole). 131072 entries are ~12 MB at most (doc/performance.md,
 * "Memory bounded by the tip, not the history").
 *
 * Until store_finish(), the finished packs of the session are not part of
 * the repository's history: a failure removes them (store_abort, the
 * signal handlers below). Their .keep files name the process
 * ("cinnabar checkpoint <pid>"), so that packs left by a killed helper
 * (SIGKILL, out of memory) are removed by the next session.
 */
#define CHECKPOINT_OBJECTS 131072
static unsigned long checkpoint_objects;
static const char checkpoint_keep[] = "cinnabar checkpoint";
/*
 * Past store_finish, until the metadata ref is updated and store_unkeep
 * runs, the session's packs are final: their .keep files say "cinnabar
 * finished <pid>". A helper killed meanwhile leaves packs that a ref may
 * reach or not: the next session removes only their .keep files (git's gc
 * then removes what no ref reaches), where a plain "fast-import" one
 * would stay for ever.
 */
static const char finished_keep[] = "cinnabar finished";

/*
 * A finished pack of the session, its files (signal handlers read it),
 * the filter of its objects' ids (pack-filter.h) and its .idx read with
 * pread (idx-lookup.h): a new object is looked for in every finished
 * pack (the duplicate check), and so is an object read back (git's reads
 * try the packs in turn); the filter answers most of the packs that lack
 * it, the .idx the others. The filters of the FILTERS_IN_MEMORY newest
 * packs are in memory; older ones are in old_filters, a file read a row
 * at a time (filter-rows.h), their `slot` there (-1 when in memory).
 * CINNABAR_TEST_FILTERS_IN_MEMORY sets how many stay (tests).
 *
 * Each new object is asked of every finished pack's filter, so their
 * false positives add up with the packs: two bytes per id (pack-filter.h)
 * rather than one. A clone of 250,000 changesets (4.4 million objects,
 * 33 packs) read 1.8 million .idx windows past filters of a byte per id.
 */
struct session_pack {
	struct session_pack *next;
	struct packed_git *pack;
	char *files[3];
	struct pack_filter filter;
	int slot;
	struct idx_lookup idx;
};
#define FILTERS_IN_MEMORY 4
#define SESSION_FILTER_DENSITY PACK_FILTER_TWO_BYTES
static unsigned long filters_in_memory, filters_moved;
static struct filter_rows old_filters = FILTER_ROWS_INIT;
static struct session_pack *volatile session_packs;
static unsigned long checkpoints;

/* Lookups in finished packs past their filters, and those that found. */
static unsigned long idx_lookups, idx_found;
static pid_t store_pid;

/* The windows limit set below, unless configured (windows_limit_ours). */
#define WINDOWS_LIMIT (8 * 1024 * 1024)
static int windows_limit_ours;

void store_limit_memory(void)
{
	size_t *cache_limit = &CINNABAR_PACK_SETTING(delta_base_cache_limit);
	size_t *window_size = &CINNABAR_PACK_SETTING(packed_git_window_size);
	size_t *windows_limit = &CINNABAR_PACK_SETTING(packed_git_limit);

	/*
	 * Objects read back are mostly the last revision of a file or
	 * manifest, which needs no cache; git's 96MiB default cache of
	 * delta bases would only add to our peak memory, and any cache
	 * large enough to fill slowly over a long import (manifest trees
	 * read back when the delta base changes branch) makes memory grow
	 * with history. 2MiB holds what those reads need (doc/performance.md,
	 * "Memory bounded by the tip, not the history").
	 */
	if (*cache_limit > 2 * 1024 * 1024)
		*cache_limit = 2 * 1024 * 1024;
	/*
	 * Packs are read through mmap windows, 1 GiB each by default and up
	 * to 8 GiB or more in all: every page of a finished pack touched by
	 * a read (trees read back after a checkpoint) counted in the resident
	 * size until the end. Unless configured, windows of 1 MiB, 8 MiB in
	 * all: pages still in the page cache map again at no I/O cost
	 * (store_read_scattered widens that for a push and fsck).
	 */
	if (*window_size == DEFAULT_PACKED_GIT_WINDOW_SIZE)
		*window_size = 1024 * 1024;
	if (*windows_limit == DEFAULT_PACKED_GIT_LIMIT) {
		*windows_limit = WINDOWS_LIMIT;
		windows_limit_ours = 1;
	}
}

void store_read_scattered(int on)
{
	/*
	 * A push reads the trees of manifests from all along the history:
	 * checking the stored texts its deltas apply to (file-parents.c),
	 * then editing the trees of the manifests it imports back. A tree's
	 * delta chain lies in as many places of the pack as it has links,
	 * and 8 windows were remapped at nearly every read: a 1000-file push
	 * on manifest100k spent 0.3 s of its 1.2 s changegroup in mmap,
	 * munmap and page faults. fsck reads every object of the metadata
	 * in the order of its ids: on nginx's 26 MB of packs, reading the
	 * types of hg2git's values took 0.45 s, 0.13 s with the wider limit.
	 * 32 windows while they run: at most 24 MiB more resident.
	 */
	if (windows_limit_ours)
		CINNABAR_PACK_SETTING(packed_git_limit) =
			on ? 4 * WINDOWS_LIMIT : WINDOWS_LIMIT;
}

void store_read_all(int on)
{
	static size_t saved;
	static int widened;
	size_t *cache_limit = &CINNABAR_PACK_SETTING(delta_base_cache_limit);

	/*
	 * fsck reads every object, and each manifest's trees again when it
	 * compares a changeset with its parents' manifests: with the import's
	 * 2 MiB of delta bases kept, each of those trees is rebuilt from far
	 * down its delta chain. 32 MiB while it runs: on nginx, 2.6 s -> 2.25 s
	 * of fsck --full (8 MiB: 2.55 s; 96 MiB: 2.17 s), the helper's peak
	 * 98 -> 160 MB.
	 */
	store_read_scattered(on);
	if (on && !widened) {
		saved = *cache_limit;
		if (*cache_limit < 32 * 1024 * 1024)
			*cache_limit = 32 * 1024 * 1024;
	} else if (!on && widened) {
		*cache_limit = saved;
	}
	widened = on;
}

/* The largest object deflated in one zlib call: see "Writing objects". */
#define MAX_ONE_CALL (1UL << 30)
static unsigned long one_call_max = MAX_ONE_CALL;

/*
 * The longest chain of deltas written: pack.depth, 50 unless configured,
 * at most what git pack-objects allows (4095).
 */
#define DELTA_DEPTH 50
#define DELTA_DEPTH_MAX 4095
static unsigned long delta_depth_max = DELTA_DEPTH;

/*
 * pack.packSizeLimit (0: none): a pack that would grow past it is ended
 * and a new one started, keeping PACK_END_ROOM for its trailer.
 */
static off_t pack_size_limit;
#define PACK_END_ROOM (the_hash_algo->rawsz * 3)

/* What trace_stats() says: objects written, and those found stored. */
static unsigned long objects_written, duplicates, told_new;

/*
 * The level to deflate `len` bytes at. Unless the user chose one, objects
 * (or deltas) of fewer than STORE_BELOW bytes are stored: deflate makes
 * them hardly smaller, its header and checksum taking about what it
 * saves, and costs about the same per object whatever its size, while
 * most objects of a clone of small changes are that small
 * (doc/performance.md, "Writing objects").
 */
#define STORE_BELOW 128
static int store_small, compression_level;

static int level_for(size_t len)
{
	return store_small && len < STORE_BELOW ? Z_NO_COMPRESSION
						 : compression_level;
}

void store_init(void)
{
	if (store_initialized)
		return;
	reset_pack_idx_option(&pack_idx_opts);
	git_pack_config();
	/* git_pack_config() reads core.ignorecase again: see main.c. */
	ignore_case = 0;
	compression_level = cinnabar_pack_compression_level();
	/*
	 * Unless the user chose a compression level, favour speed: the pack
	 * is about 5% larger, and `git gc` recompresses it anyway.
	 */
	{
		const char *v;
		if (repo_config_get_value(the_repository,
					  "pack.compression", &v) &&
		    repo_config_get_value(the_repository,
					  "core.compression", &v)) {
			compression_level = Z_BEST_SPEED;
			store_small = 1;
		}
	}
	if (!repo_config_get_ulong(the_repository, "pack.depth",
				   &delta_depth_max) &&
	    delta_depth_max > DELTA_DEPTH_MAX)
		delta_depth_max = DELTA_DEPTH_MAX;
	{
		unsigned long limit;
		if (!repo_config_get_ulong(the_repository,
					   "pack.packsizelimit", &limit))
			pack_size_limit = limit;
	}
	one_call_max = git_env_ulong("CINNABAR_TEST_ONE_CALL_MAX", MAX_ONE_CALL);
	alloc_objects(object_entry_alloc);
	checkpoint_objects = git_env_ulong("CINNABAR_TEST_CHECKPOINT",
					   CHECKPOINT_OBJECTS);
	if (!checkpoint_objects)
		checkpoint_objects = 1;
	filter_rows_init(&old_filters, checkpoint_objects,
			 SESSION_FILTER_DENSITY);
	filters_in_memory = git_env_ulong("CINNABAR_TEST_FILTERS_IN_MEMORY",
					  FILTERS_IN_MEMORY);
	tree_budget = git_env_ulong("CINNABAR_TEST_TREE_BUDGET", TREE_BUDGET);
	CALLOC_ARRAY(atom_table, atom_table_sz);
	CALLOC_ARRAY(branch_table, branch_table_sz);
	CALLOC_ARRAY(avail_tree_table, avail_tree_table_sz);
	hashmap_init(&object_table, object_entry_hashcmp, NULL, 0);
	edit_roots[0].versions[0].mode = S_IFDIR;
	edit_roots[0].versions[1].mode = S_IFDIR;
	edit_roots[1].versions[0].mode = S_IFDIR;
	edit_roots[1].versions[1].mode = S_IFDIR;
	store_initialized = 1;
}

/*
 * The pack being written is git's `pack/tmp_pack_XXXXXX` (fast-import's
 * start_packfile); beside it, `<its name>.owner` says "cinnabar pack
 * <pid>", so that the pack a killed helper was writing (SIGKILL, out of
 * memory) is told from those of other git processes, and removed by the
 * next session (remove_stale_checkpoints). Gone when the pack is finished
 * or dropped.
 */
static char *pack_owner;
static const char pack_owner_msg[] = "cinnabar pack";

static void write_keep(const char *path, const char *msg);

static void own_pack(void)
{
	struct strbuf msg = STRBUF_INIT;

	pack_owner = xstrfmt("%s.owner", pack_data->pack_name);
	strbuf_addf(&msg, "%s %"PRIuMAX"\n", pack_owner_msg,
		    (uintmax_t)getpid());
	write_keep(pack_owner, msg.buf);
	strbuf_release(&msg);
}

static void disown_pack(void)
{
	if (!pack_owner)
		return;
	unlink(pack_owner);
	FREE_AND_NULL(pack_owner);
}

/*
 * Remove the packs of the session: the one being written and the finished
 * ones. Called from signal handlers: only async-signal-safe calls.
 */
static void unlink_session_files(void)
{
	struct session_pack *sp;
	int i;

	/* Not from a forked copy (fsck, push): the packs are its parent's. */
	if (getpid() != store_pid)
		return;
	if (pack_data)
		unlink(pack_data->pack_name);
	if (pack_owner)
		unlink(pack_owner);
	for (sp = session_packs; sp; sp = sp->next)
		for (i = 0; i < 3; i++)
			unlink(sp->files[i]);
}

/* Remove the packs of the session when a signal ends the helper. */
static void remove_pack_on_signal(int signo)
{
	unlink_session_files();
	sigchain_pop(signo);
	raise(signo);
}

/* The same on a crash. */
static void remove_pack_on_crash(void)
{
	unlink_session_files();
}

/* Write the .keep file of a pack with `msg` as its content. */
static void write_keep(const char *path, const char *msg)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	if (fd < 0 || write_in_full(fd, msg, strlen(msg)) < 0 || close(fd))
		die_errno("cannot write %s", path);
}

/*
 * Remove what a killed helper left in the pack directory, once no process
 * <pid> runs any more: the packs whose .keep file says "cinnabar checkpoint
 * <pid>", the .keep files saying "cinnabar finished <pid>" (their packs
 * stay), and the tmp_pack a "<tmp_pack>.owner" file names as its own.
 */
static void remove_stale_checkpoints(void)
{
	struct strbuf dir = STRBUF_INIT, buf = STRBUF_INIT;
	DIR *d;
	struct dirent *de;
	size_t len;

	strbuf_addf(&dir, "%s/pack/", repo_get_object_directory(the_repository));
	len = dir.len;
	d = opendir(dir.buf);
	while (d && (de = readdir(d))) {
		const char *p, *ext[] = { "pack", "idx", "keep" };
		char *end;
		long pid;
		int i, finished;
		int owner = ends_with(de->d_name, ".owner");

		if (!owner && !ends_with(de->d_name, ".keep"))
			continue;
		strbuf_setlen(&dir, len);
		strbuf_addstr(&dir, de->d_name);
		strbuf_reset(&buf);
		if (strbuf_read_file(&buf, dir.buf, 64) < 0)
			continue;
		finished = !owner && skip_prefix(buf.buf, finished_keep, &p);
		if ((!finished && !skip_prefix(buf.buf, owner ? pack_owner_msg :
					       checkpoint_keep, &p)) ||
		    *p++ != ' ')
			continue;
		pid = strtol(p, &end, 10);
		if (end == p || pid <= 0 || pid == getpid() ||
		    !kill(pid, 0) || errno != ESRCH)
			continue;
		if (owner) {
			/* The tmp_pack it names, then itself. */
			strbuf_setlen(&dir, dir.len - strlen(".owner"));
			unlink_or_warn(dir.buf);
			strbuf_addstr(&dir, ".owner");
			unlink_or_warn(dir.buf);
			continue;
		}
		if (finished) {
			unlink_or_warn(dir.buf);
			continue;
		}
		strbuf_setlen(&dir, dir.len - strlen("keep"));
		for (i = 0; i < 3; i++) {
			struct strbuf path = STRBUF_INIT;
			strbuf_addf(&path, "%s%s", dir.buf, ext[i]);
			unlink_or_warn(path.buf);
			strbuf_release(&path);
		}
	}
	if (d)
		closedir(d);
	strbuf_release(&dir);
	strbuf_release(&buf);
}

/* Forget fast-import's entries for the objects of finished packs. */
static void forget_objects(void)
{
	struct object_entry_pool *b, *next;

	hashmap_clear(&object_table);
	hashmap_init(&object_table, object_entry_hashcmp, NULL, 0);
	for (b = blocks; b; b = next) {
		next = b->next_pool;
		free(b);
	}
	blocks = NULL;
	alloc_count = 0;
	alloc_objects(object_entry_alloc);
}

/* Put the ids of the objects of pack `id` in the filter of `sp`. */
static void filter_objects(struct session_pack *sp, unsigned id)
{
	struct hashmap_iter iter;
	struct object_entry *e;

	pack_filter_init(&sp->filter, hashmap_get_size(&object_table),
			 SESSION_FILTER_DENSITY);
	hashmap_for_each_entry(&object_table, &iter, e, ent)
		if (e->pack_id == id)
			pack_filter_add(&sp->filter, e->idx.oid.hash);
}

/*
 * Whether finished pack `sp` may hold `oid`, by its filter; `*row_read`
 * says whether the row of `oid` in old_filters was read already.
 */
static int filter_may_hold(struct session_pack *sp,
			   const struct object_id *oid, int *row_read)
{
	if (sp->slot < 0)
		return pack_filter_may_hold(&sp->filter, oid->hash);
	if (!*row_read) {
		filter_rows_read(&old_filters, oid->hash);
		*row_read = 1;
	}
	return filter_rows_may_hold(&old_filters, sp->slot, oid->hash);
}

/* The offset of `oid` in finished pack `sp`, or 0. */
static off_t find_in_session_pack(struct session_pack *sp,
				  const struct object_id *oid, int *row_read)
{
	off_t offset;

	if (!filter_may_hold(sp, oid, row_read))
		return 0;
	if (sp->idx.fd >= 0)
		offset = idx_lookup_find(&sp->idx, oid->hash);
	else
		offset = cinnabar_find_in_pack(oid, sp->pack);
	idx_lookups++;
	idx_found += !!offset;
	return offset;
}

static int is_session_pack(struct packed_git *p)
{
	struct session_pack *sp;

	for (sp = session_packs; sp; sp = sp->next)
		if (sp->pack == p)
			return 1;
	return 0;
}

/*
 * Whether `oid` is in a pack of the repository (finished ones included).
 * Up to git 2.47, the repository's list has the session's packs first,
 * newest first, as they were added (install_packed_git puts a pack at the
 * head) and as session_packs lists them: they are told apart in one walk
 * of both lists, without looking for each pack in session_packs (with 34
 * finished packs, 600 comparisons a new object), unless the list was
 * ordered again (a pack added by another process, found by a read).
 * Later releases append a pack to the end of the list of its store:
 * each pack is looked for in session_packs.
 */
static int in_some_pack(const struct object_id *oid)
{
	struct session_pack *sp;
	struct packed_git *p;
	int row_read = 0;

	/* The filters' blocks, one cache miss each, read all at once. */
	for (sp = session_packs; sp && sp->slot < 0; sp = sp->next)
		pack_filter_prefetch(&sp->filter, oid->hash);
	for (sp = session_packs; sp; sp = sp->next)
		if (find_in_session_pack(sp, oid, &row_read))
			return 1;
#if CINNABAR_GIT_NEW_API
	repo_for_each_pack(the_repository, p)
		if (!is_session_pack(p) && cinnabar_find_in_pack(oid, p))
			return 1;
#else
	sp = session_packs;
	for (p = get_all_packs(the_repository); p; p = p->next) {
		if (sp && p == sp->pack) {
			sp = sp->next;
			continue;
		}
		if ((!sp || !is_session_pack(p)) &&
		    cinnabar_find_in_pack(oid, p))
			return 1;
	}
#endif
	return 0;
}

/*
 * The filter of the pack a checkpoint put past the filters_in_memory
 * newest goes to old_filters (one a checkpoint: the older ones went at
 * theirs, or were refused, which a later try would be too).
 */
static void filter_to_file(void)
{
	struct session_pack *sp = session_packs;
	unsigned long i;

	for (i = 0; sp && i < filters_in_memory; i++)
		sp = sp->next;
	if (!sp)
		return;
	sp->slot = filter_rows_add(&old_filters, &sp->filter);
	if (sp->slot >= 0) {
		pack_filter_release(&sp->filter);
		filters_moved++;
	}
}

/*
 * Make a pack end_packfile() registered a place to look objects up in:
 * up to git 2.47, install_packed_git() leaves it out of find_pack_entry()'s
 * list (the most recently used first); later releases have one list.
 */
static void add_to_pack_lookups(struct packed_git *p)
{
#if CINNABAR_GIT_NEW_API
	(void)p;
#else
	list_add(&p->mru, &the_repository->objects->packed_git_mru);
#endif
}

/* Finish the pack being written, keep it as part of the session. */
static void store_checkpoint(void)
{
	struct session_pack *sp;
	struct strbuf name = STRBUF_INIT;
	struct packed_git *p;
	const char *ext[] = { "pack", "idx", "keep" };
	int saved_limit = unpack_limit, before = pack_id, i;

	/* A small pack would become loose objects, which we cannot remove. */
	unpack_limit = 0;
	flush_pending();
	end_packfile();
	disown_pack();
	unpack_limit = saved_limit;
	if (pack_id == before)
		return;		/* no object written */
	p = all_packs[before];
	CALLOC_ARRAY(sp, 1);
	sp->pack = p;
	for (i = 0; i < 3; i++)
		sp->files[i] = xstrdup(cinnabar_pack_name(&name, p->hash,
							    ext[i]));
	strbuf_release(&name);
	filter_objects(sp, before);
	sp->slot = -1;
	if (idx_lookup_open(&sp->idx, sp->files[1]))
		warning("cannot read %s: looked up through git", sp->files[1]);
	sp->next = session_packs;
	session_packs = sp;
	filter_to_file();
	strbuf_addf(&name, "%s %"PRIuMAX"\n", checkpoint_keep,
		    (uintmax_t)getpid());
	write_keep(sp->files[2], name.buf);
	strbuf_release(&name);
	add_to_pack_lookups(p);
	forget_objects();
	checkpoints++;
}

/* A forked process has no worker thread: no object may be pending. */
static void before_fork(void)
{
	flush_pending();
	deflate_queue_atfork_prepare();
}

/* Start a pack when the first object of the session is stored. */
static void ensure_pack(void)
{
	static int handlers;
	store_init();
	if (pack_data && hashmap_get_size(&object_table) >= checkpoint_objects &&
	    !entries_being_read)
		store_checkpoint();
	if (!pack_data) {
		static int cleaned;
		if (!cleaned++)
			remove_stale_checkpoints();
		start_packfile();
		own_pack();
	}
	if (!handlers) {
		store_pid = getpid();
		sigchain_push_common(remove_pack_on_signal);
		on_fatal_signal(remove_pack_on_crash);
		pthread_atfork(before_fork, deflate_queue_atfork_parent,
			       deflate_queue_atfork_child);
		handlers = 1;
	}
}

/*
 * Writing objects into the pack. zlib's deflateInit allocates and clears
 * ~256 kB of state; fast-import's store_object sets one up for every
 * object, which for the small objects an import writes most (tree deltas
 * of ~100 bytes, commits) costs many times the compression itself. Here
 * the streams of one thread serve the whole session, reset between
 * objects, which gives the same bytes (deflate-queue.h):
 * store_object_reusing_zlib() writes an object as fast-import's
 * store_object() would, with those. An object too big for one zlib call
 * (one_call_max, MAX_ONE_CALL unless CINNABAR_TEST_ONE_CALL_MAX says
 * otherwise) goes through git's zlib wrapper (zlib.h's git_deflate, which
 * feeds zlib in steps) and is stored whole, neither a delta nor a base
 * waiting on the second thread. The output buffer is kept between objects
 * unless it grew past KEEP_OUTPUT.
 *
 * Objects are deflated on a second thread when there is a CPU for it
 * (deflate-queue.h) and no pack size limit: an object pushed there is
 * "pending", its entry in fast-import's table saying so by an offset of 1
 * with the pack_id of the pack being written (objects of other packs
 * have MAX_PACK_ID), until it is appended to the pack, in the order
 * pushed, by append_deflated(). Whatever reads the pack being written or
 * ends it first appends the pending objects: our own reads those up to
 * the object read (read_written()), fast-import's every one
 * (flush_pending()), as all go through gfi_unpack_entry(): with
 * objects pending, pack_data->pack_size is kept at 0, so that it flushes
 * the pack (hashflush, see the top of this file) before reading it.
 */
#define KEEP_OUTPUT (1UL << 20)
static struct object_deflater pack_deflater;
static unsigned long deflated_on_thread;
static struct strbuf pack_z_out = STRBUF_INIT;

static int is_pending(const struct object_entry *e)
{
	return e->idx.offset == 1 && e->pack_id != MAX_PACK_ID;
}

/* `len` bytes at `in`, deflated into pack_z_out. */
static void deflate_object(const void *in, size_t len)
{
	git_zstream s;
	int ret;

	if (len < one_call_max) {
		if (object_deflate(&pack_deflater, level_for(len), in, len,
				   &pack_z_out))
			die("cannot compress an object (zlib error)");
		return;
	}
	git_deflate_init(&s, level_for(len));
	strbuf_reset(&pack_z_out);
	strbuf_grow(&pack_z_out, git_deflate_bound(&s, len));
	s.next_in = (unsigned char *)in;
	s.avail_in = len;
	s.next_out = (unsigned char *)pack_z_out.buf;
	s.avail_out = pack_z_out.alloc - 1;
	while ((ret = git_deflate(&s, Z_FINISH)) == Z_OK)
		;
	if (ret != Z_STREAM_END)
		die("cannot compress an object (zlib error)");
	strbuf_setlen(&pack_z_out, s.total_out);
	git_deflate_end(&s);
}

/*
 * The pack's checksum. fast-import writes the pack's header first, with
 * no object count, and once the pack is ended, rewrites it with the count
 * and hashes the whole file again for its trailer, reading it back; git's
 * fixup_pack_header_footer() also hashes it a second time in that pass,
 * to compare what it reads with the checksum kept as it was written, the
 * check that the bytes on disk are the bytes written. Three passes of
 * SHA-1 over every byte, a fifth of the CPU of a clone of big files.
 * Here the pack is not hashed as it is written (the hashfile's skip_hash),
 * and the read-back is compared with the CRC-32 of what was written
 * instead, combined from the CRC-32 each entry has for the pack's index
 * (which git computes as it writes): one pass of SHA-1 and one of CRC-32,
 * the same bytes on disk, the same check of them.
 */
#if !CINNABAR_GIT_NEW_API
static uLong written_crc;	/* of the pack's entries, after its header */
static off_t written_len;

static void forget_written_crc(void)
{
	written_crc = crc32(0, NULL, 0);
	written_len = 0;
}

/*
 * crc32_combine() costs as much as a small entry's CRC-32 (a power of x
 * modulo the polynomial for the length, ~370 ns): the operator of each
 * length below CRC_OPS is made once (zlib 1.2.12 and later), and
 * applied in a quarter of that time. Most entries (tree deltas, small
 * objects) are that short.
 */
#define CRC_OPS 4096
static uLong *crc_ops;

static uLong combine_crc(uLong crc1, uLong crc2, off_t len2)
{
#if ZLIB_VERNUM >= 0x12c0
	if (len2 > 0 && len2 < CRC_OPS) {
		if (!crc_ops)
			CALLOC_ARRAY(crc_ops, CRC_OPS);
		/* (x^n mod P is never 0: 0 is "not made yet".) */
		if (!crc_ops[len2])
			crc_ops[len2] = crc32_combine_gen(len2);
		return crc32_combine_op(crc1, crc2, crc_ops[len2]);
	}
#endif
	return crc32_combine(crc1, crc2, len2);
}

static void note_written_crc(uLong crc, off_t len)
{
	if (!pack_file->skip_hash) {
		/*
		 * finalize_hashfile() leaves a skip_hash context alone, and
		 * OpenSSL's holds memory until it is finalized: done here,
		 * into nothing.
		 */
		unsigned char unused[GIT_MAX_RAWSZ];

		the_hash_algo->final_fn(unused, &pack_file->ctx);
		pack_file->skip_hash = 1;
	}
	written_crc = combine_crc(written_crc, crc, len);
	written_len += len;
}

#define FIXUP_BUFFER (1 << 20)

/*
 * CINNABAR_TEST_FLIP_PACK_BYTE=<n>: the tests' disk corruption, byte n
 * (modulo the entries' size) after the header changed on disk before the
 * read-back.
 */
static void test_flip_written_byte(int pack_fd)
{
	const char *env = getenv("CINNABAR_TEST_FLIP_PACK_BYTE");
	off_t at;
	unsigned char c;

	if (!env || !written_len)
		return;
	at = sizeof(struct pack_header) +
	     strtoumax(env, NULL, 10) % written_len;
	if (pread_in_full(pack_fd, &c, 1, at) != 1)
		die_errno("cannot read the pack");
	c ^= 1;
	if (lseek(pack_fd, at, SEEK_SET) != at ||
	    write_in_full(pack_fd, &c, 1) != 1)
		die_errno("cannot write the pack");
}

/*
 * fixup_pack_header_footer() for the pack being ended: the header's
 * object count set, the trailer's checksum computed from the file and
 * appended, the bytes read back checked against written_crc.
 * `partial_pack_offset` is the size of the pack written (pack_size);
 * `partial_pack_hash`, the hash finalize_hashfile() gave, is not used
 * (with skip_hash, zeros).
 */
static void fixup_written_pack(int pack_fd, unsigned char *new_pack_hash,
			       const char *pack_name, uint32_t object_count,
			       unsigned char *partial_pack_hash UNUSED,
			       off_t partial_pack_offset)
{
	git_hash_ctx ctx;
	struct pack_header hdr;
	unsigned char *buf;
	uLong crc = crc32(0, NULL, 0);
	off_t left;

	if (partial_pack_offset != written_len + (off_t)sizeof(hdr))
		BUG("pack of %"PRIuMAX" bytes, %"PRIuMAX" written in entries",
		    (uintmax_t)partial_pack_offset, (uintmax_t)written_len);
	if (pread_in_full(pack_fd, &hdr, sizeof(hdr), 0) != sizeof(hdr))
		die_errno("cannot read back the header of %s", pack_name);
	hdr.hdr_entries = htonl(object_count);
	if (lseek(pack_fd, 0, SEEK_SET) != 0 ||
	    write_in_full(pack_fd, &hdr, sizeof(hdr)) != sizeof(hdr))
		die_errno("cannot write the header of %s", pack_name);
	test_flip_written_byte(pack_fd);
	if (lseek(pack_fd, sizeof(hdr), SEEK_SET) != sizeof(hdr))
		die_errno("cannot read back %s", pack_name);
	the_hash_algo->init_fn(&ctx);
	the_hash_algo->update_fn(&ctx, &hdr, sizeof(hdr));
	buf = xmalloc(FIXUP_BUFFER);
	for (left = written_len; left; ) {
		ssize_t n = xread(pack_fd, buf, left < FIXUP_BUFFER ?
						left : FIXUP_BUFFER);
		if (n < 0)
			die_errno("cannot read back %s", pack_name);
		if (!n)
			die("%s is shorter than what was written (disk "
			    "corruption?)", pack_name);
		the_hash_algo->update_fn(&ctx, buf, n);
		crc = crc32(crc, buf, n);
		left -= n;
	}
	free(buf);
	if (crc != written_crc)
		die("%s differs from what was written (disk corruption?)",
		    pack_name);
	forget_written_crc();
	the_hash_algo->final_fn(new_pack_hash, &ctx);
	write_or_die(pack_fd, new_pack_hash, the_hash_algo->rawsz);
	fsync_component_or_die(FSYNC_COMPONENT_PACK, pack_fd, pack_name);
}
#else
static void forget_written_crc(void)
{
}

static void note_written_crc(uLong crc UNUSED, off_t len UNUSED)
{
}
#endif

/*
 * The entry of `e` at the end of the pack: its header (the whole object's
 * type and size, or OBJ_OFS_DELTA, the delta's size and the distance back
 * to `base_offset`), then `deflated`. gitformat-pack.txt.
 */
static void write_pack_entry(struct object_entry *e, enum object_type type,
			     size_t size, off_t base_offset,
			     const struct strbuf *deflated)
{
	unsigned char hdr[96];
	unsigned long hdrlen;

	e->pack_id = pack_id;
	e->idx.offset = pack_size;
	object_count++;		/* end_packfile() writes it in the header */
	objects_written++;
	crc32_begin(pack_file);
	hdrlen = encode_in_pack_object_header(hdr, sizeof(hdr),
					      base_offset ? OBJ_OFS_DELTA
							  : type, size);
	hashwrite(pack_file, hdr, hdrlen);
	pack_size += hdrlen;
	if (base_offset) {
		off_t ofs = e->idx.offset - base_offset;
		unsigned pos = sizeof(hdr) - 1;
		hdr[pos] = ofs & 127;
		while (ofs >>= 7)
			hdr[--pos] = 128 | (--ofs & 127);
		hashwrite(pack_file, hdr + pos, sizeof(hdr) - pos);
		pack_size += sizeof(hdr) - pos;
	}
	hashwrite(pack_file, deflated->buf, deflated->len);
	pack_size += deflated->len;
	e->idx.crc32 = crc32_end(pack_file);
	note_written_crc(e->idx.crc32, pack_size - e->idx.offset);
}

/* Append a pending object, deflated (`job`), to the pack. */
static void append_deflated(struct deflate_job *job)
{
	struct object_entry *e = job->entry, *base = job->base;

	if (job->failed)
		die("cannot compress an object (zlib error)");
	if (!is_pending(e) || (base && is_pending(base)))
		BUG("pending objects out of order");
	if (pack_size + PACK_END_ROOM + job->out.len < pack_size)
		die("the pack being written is too large");
	write_pack_entry(e, e->type, job->len, base ? base->idx.offset : 0,
			 &job->out);
	strbuf_release(&job->out);
}

/* Append the pending objects already deflated, or all of them (`wait`). */
static void append_pending(int wait)
{
	struct deflate_job job;

	while (!deflate_queue_pop(&job, wait))
		append_deflated(&job);
}

/* Append the oldest pending object, waiting for it to be deflated. */
static void append_one_pending(void)
{
	struct deflate_job job;

	if (!deflate_queue_pop(&job, 1))
		append_deflated(&job);
}

static void flush_pending(void)
{
	append_pending(1);
}

/* Set while read_written() reads: it appended what the read needs. */
static int reading_appended;

/* fast-import's flush of the pack before reading it back: see above. */
static void flush_pending_then_hashflush(struct hashfile *f)
{
	if (!reading_appended)
		flush_pending();
	hashflush(f);
}

/*
 * Read `e`, an object of the pack being written, appending the pending
 * objects up to it only: those pushed after it may still be deflating
 * (a delta base read back is most often an object pushed long before).
 * With objects still pending, pack_size goes back to 0 for fast-import's
 * own reads, which append them all (see above).
 */
static void *read_written(struct object_entry *e, unsigned long *size)
{
	void *buf;

	while (is_pending(e))
		append_one_pending();
	reading_appended = 1;
	buf = gfi_unpack_entry(e, size);
	reading_appended = 0;
	if (deflate_queue_pending())
		pack_data->pack_size = 0;
	return buf;
}

/*
 * Make `e` pending, its delta against `base` (or its content when NULL),
 * `len` bytes at `in` (xmalloc'ed and ours when `owned`, else copied), to
 * be deflated on the worker. Return 0, or -1 when the worker cannot take
 * it (`in` stays the caller's).
 */
static int push_pending(struct object_entry *e, char *in, size_t len,
			int owned, struct object_entry *base)
{
	int level = level_for(len);

	if (pack_size_limit)
		return -1;	/* whether a pack is full needs the size */
	append_pending(0);
	if (deflate_queue_push(in, len, owned, level, e, base)) {
		if (!deflate_queue_pending() || len > DEFLATE_QUEUE_MAX_OBJECT)
			return -1;
		/* Full: make room. */
		append_one_pending();
		if (deflate_queue_push(in, len, owned, level, e, base))
			return -1;
	}
	e->pack_id = pack_id;
	e->idx.offset = 1;
	pack_data->pack_size = 0;
	deflated_on_thread++;
	return 0;
}

static struct object_entry *in_current_pack(const struct object_id *oid)
{
	struct object_entry *e = find_object((struct object_id *)oid);
	/* Written or pending (an object of another pack has MAX_PACK_ID). */
	if (e && e->idx.offset && e->pack_id == pack_id)
		return e;
	return NULL;
}

/*
 * Whether an object that names `named` (a commit its tree or a parent, a
 * tree one of its entries) can be told new without looking for it in the
 * other packs: when `named` was first written in the pack being written.
 * Objects are written after those they name, and each was looked for in
 * the other packs (or told new this way) before it was written: had an
 * older pack held the object, it would have held `named` too, and `named`
 * would not have been written again. (A repository whose packs lack
 * objects their trees name could get a second copy of an object:
 * harmless to git.) On a long history, about half the objects are told
 * new this way, each a look in every finished pack's filter spared
 * (doc/performance.md).
 */
static int names_new_object(const struct object_id *named)
{
	if (!named || !in_current_pack(named))
		return 0;
	told_new++;
	return 1;
}

/*
 * The entry of object `oid` when it is to be written, NULL when it is
 * already stored (counted as a duplicate); `named` is an object it names,
 * or NULL (names_new_object).
 */
static struct object_entry *new_object_entry_with_id(enum object_type type,
						     const struct object_id *oid,
						     const struct object_id *named)
{
	struct object_entry *e = insert_object((struct object_id *)oid);

	if (e->idx.offset) {
		duplicates++;
		return NULL;
	} else if (!names_new_object(named) && in_some_pack(oid)) {
		e->type = type;
		e->pack_id = MAX_PACK_ID;
		e->idx.offset = 1; /* in another pack */
		duplicates++;
		return NULL;
	}
	e->type = type;
	return e;
}

/* The same, computing the id of the object into `oid` first. */
static struct object_entry *new_object_entry(enum object_type type,
					     const char *buf, size_t len,
					     struct object_id *oid,
					     const struct object_id *named)
{
	object_id_of(type, buf, len, oid);
	return new_object_entry_with_id(type, oid, named);
}

/*
 * Write `e` now: `len` bytes at `in`, its delta against `base` (an object
 * of this pack) or its content (`dat`, then NULL); `depth` is its depth
 * as a delta. Objects pending go first, keeping the order of the pack.
 */
static void write_now(struct object_entry *e, const char *in, size_t len,
		      struct object_entry *base, unsigned depth,
		      struct strbuf *dat)
{
	flush_pending();
	deflate_object(in, len);
	if ((pack_size_limit && !entries_being_read &&
	     pack_size + PACK_END_ROOM + pack_z_out.len > pack_size_limit) ||
	    pack_size + PACK_END_ROOM + pack_z_out.len < pack_size) {
		/* The pack is full: a new one, where no delta can go. */
		e->pack_id = pack_id + 1;
		cycle_packfile();
		if (base) {
			base = NULL;
			len = dat->len;
			deflate_object(dat->buf, len);
		}
	}
	e->depth = base ? depth : 0;
	write_pack_entry(e, e->type, len, base ? base->idx.offset : 0,
			 &pack_z_out);
	if (pack_z_out.alloc > KEEP_OUTPUT)
		strbuf_release(&pack_z_out);
}

/*
 * The delta of `dat` against `base` (a tree's previous version, or a
 * blob's previous revision), NULL when it would be over `max`. A tree edit
 * most often changes, adds or removes one entry, and the delta is then a
 * copy of what comes before it, the bytes that differ, and a copy of what
 * follows: made directly, without diff_delta's index of the base, which
 * costs more than the edit (doc/performance.md, "Writing objects").
 * Other changes go to diff_delta, which also finds copies within a longer
 * span: past ONE_SPAN_MAX bytes of difference, a direct delta would miss
 * those copies and make the pack larger.
 */
#define ONE_SPAN_MAX 128

static void *delta_against(const struct strbuf *base, const struct strbuf *dat,
			   unsigned long *len, unsigned long max)
{
	struct strbuf out = STRBUF_INIT;

	if (!git_delta_of_one_span(base->buf, base->len, dat->buf, dat->len,
				   ONE_SPAN_MAX, &out)) {
		size_t n;
		void *delta;

		if (out.len > max) {
			strbuf_release(&out);
			return NULL;
		}
		delta = strbuf_detach(&out, &n);
		*len = n;
		return delta;
	}
	return diff_delta(base->buf, base->len, dat->buf, dat->len, len, max);
}

/*
 * The version an object may be stored as a delta against: its data (not
 * ours: the caller's) and its depth as a delta in the pack being written.
 */
struct delta_base {
	struct strbuf data;
	unsigned depth;
};
#define DELTA_BASE_INIT { STRBUF_INIT, 0 }

/*
 * Store `dat` (its id `id`, or NULL to compute it), as a delta against
 * `last` (the data of `last_entry`, an object of this pack) when there is
 * one worth it; `last->depth` becomes the depth of the object stored.
 * `named` is an object it names, or NULL (names_new_object).
 */
static void store_object_reusing_zlib(enum object_type type,
				      struct strbuf *dat,
				      const struct object_id *id,
				      const struct object_id *named,
				      struct delta_base *last,
				      struct object_entry *last_entry,
				      struct object_id *oidout)
{
	struct object_id oid;
	struct object_entry *e, *base = NULL;
	unsigned long deltalen = 0;
	void *delta = NULL;
	int whole = dat->len >= one_call_max;

	if (id) {
		oidcpy(&oid, id);
		e = new_object_entry_with_id(type, &oid, named);
	} else {
		e = new_object_entry(type, dat->buf, dat->len, &oid, named);
	}
	if (oidout)
		oidcpy(oidout, &oid);
	if (!e)
		return;
	if (!whole && last && last_entry && last->data.len && last->data.buf &&
	    last->depth < delta_depth_max &&
	    dat->len > the_hash_algo->rawsz) {
		delta = delta_against(&last->data, dat, &deltalen,
				      dat->len - the_hash_algo->rawsz);
		if (delta)
			base = last_entry;
	}
	if (delta && !push_pending(e, delta, deltalen, 1, base)) {
		e->depth = last->depth + 1;
		delta = NULL;	/* the queue's now */
	} else if (!delta && !whole &&
		   !push_pending(e, dat->buf, dat->len, 0, NULL)) {
		e->depth = 0;
	} else {
		write_now(e, delta ? delta : dat->buf,
			  delta ? deltalen : dat->len, base,
			  last ? last->depth + 1 : 0, dat);
	}
	free(delta);
	if (last)
		last->depth = e->depth;
}

/* The id of a "<key> <hex>\n" line at `*p`, moving past it; -1 if none. */
static int header_id(const char **p, const char *end, const char *key,
		     struct object_id *oid)
{
	size_t key_len = strlen(key);

	if (end - *p <= (ptrdiff_t)(key_len + GIT_SHA1_HEXSZ) ||
	    memcmp(*p, key, key_len) || get_oid_hex(*p + key_len, oid) ||
	    (*p)[key_len + GIT_SHA1_HEXSZ] != '\n')
		return -1;
	*p += key_len + GIT_SHA1_HEXSZ + 1;
	return 0;
}

/*
 * What commit `buf` names for names_new_object: its tree, or its first
 * parent when the tree is not an object of this pack (a changeset's git
 * tree was written long before; its parent commit, just before it).
 */
static const struct object_id *commit_named(const char *buf, size_t len,
					    struct object_id *tree,
					    struct object_id *parent)
{
	const char *p = buf, *end = buf + len;

	if (header_id(&p, end, "tree ", tree))
		return NULL;
	if (in_current_pack(tree) || header_id(&p, end, "parent ", parent))
		return tree;
	return parent;
}

static void store_flat(enum object_type type, const char *buf, size_t len,
		       const struct object_id *id,
		       const struct object_id *named, struct object_id *result)
{
	struct strbuf data;
	struct object_id tree, parent;

	ensure_pack();
	if (!named && type == OBJ_COMMIT)
		named = commit_named(buf, len, &tree, &parent);
	/* Only read: the strbuf is never grown nor released. */
	data.buf = (char *)buf;
	data.len = len;
	data.alloc = len + 1;
	store_object_reusing_zlib(type, &data, id, named, NULL, NULL, result);
}

void store_object_buf(enum object_type type, const char *buf, size_t len,
		      struct object_id *result)
{
	store_flat(type, buf, len, NULL, NULL, result);
}

void store_object_with_id(enum object_type type, const char *buf, size_t len,
			  const struct object_id *id)
{
	store_flat(type, buf, len, id, NULL, NULL);
}

void store_tree_naming(const char *buf, size_t len,
		       const struct object_id *named, struct object_id *result)
{
	store_flat(OBJ_TREE, buf, len, NULL, named, result);
}

void store_blob_with_base(const char *buf, size_t len,
			  const struct object_id *id,
			  const struct object_id *base, const char *base_data,
			  size_t base_len)
{
	struct delta_base last = DELTA_BASE_INIT;
	struct object_entry *e;
	struct strbuf data;

	ensure_pack();
	data.buf = (char *)buf;
	data.len = len;
	data.alloc = len + 1;
	e = base ? in_current_pack(base) : NULL;
	if (!e) {
		store_object_reusing_zlib(OBJ_BLOB, &data, id, NULL, NULL, NULL,
					  NULL);
		return;
	}
	last.data.buf = (char *)base_data;
	last.data.len = base_len;
	last.depth = e->depth;
	store_object_reusing_zlib(OBJ_BLOB, &data, id, NULL, &last, e, NULL);
}

void *store_read_object(const struct object_id *oid, enum object_type *type,
			unsigned long *size)
{
	struct object_entry *e = NULL;
	struct session_pack *sp;
	int row_read = 0;

	if (store_initialized)
		e = find_object((struct object_id *)oid);
	if (e && e->idx.offset && e->pack_id != MAX_PACK_ID) {
		/* Written or pending. */
		*type = e->type;
		return read_written(e, size);
	}
	for (sp = session_packs; sp; sp = sp->next) {
		off_t offset = find_in_session_pack(sp, oid, &row_read);
		void *buf;
		if (!offset)
			continue;
		buf = cinnabar_unpack_entry(sp->pack, offset, type, size);
		/*
		 * Opening the pack mapped its .idx (git checks it against
		 * the pack) and left a few of its pages in memory, each
		 * pack's: a read needs no .idx, a later lookup maps it again.
		 */
		if (sp->pack->index_data)
			close_pack_index(sp->pack);
		if (buf)
			return buf;
		break;		/* damaged: git's read says what */
	}
	return cinnabar_read_object(oid, type, size);
}

void *store_read_object_typed(const struct object_id *oid,
			      enum object_type type, unsigned long *size)
{
	enum object_type actual;
	void *buf = store_read_object(oid, &actual, size);
	if (!buf)
		die("missing object %s (the repository or its cinnabar "
		    "metadata is damaged)", oid_to_hex(oid));
	if (actual != type)
		die("object %s is a %s, not a %s", oid_to_hex(oid),
		    type_name(actual), type_name(type));
	return buf;
}

static int is_prime(unsigned n)
{
	unsigned d;
	for (d = 3; d * d <= n; d += 2)
		if (!(n % d))
			return 0;
	return 1;
}

/*
 * fast-import's table of names (atoms: every path component the trees
 * hold) has a fixed 4451 chains, fine for a few thousand names but walked
 * through dozens of string compares per name with 100k files. Keep at
 * most one atom per chain on average, growing to the next odd prime
 * above the count and a quarter (the names' hash is a multiply-by-31
 * over the bytes, which wants an odd prime modulus). Every file has two
 * names (in the manifest's tree, its own with a '_' before it).
 * Checked before each edit that can load trees (a removal, a conflict
 * check, a directory written), not only before a set: an import that
 * removes old lines first loads their directories before it sets
 * anything. Up to ATOM_DOUBLING chains, the table at least doubles, so
 * that each name is rehashed a few times on the way to a large count
 * rather than at every check; past it, a quarter above the count, as
 * the memory of the largest manifests wants.
 */
#define ATOM_DOUBLING (1U << 19)

static void grow_atom_table(void)
{
	struct atom_str **old = atom_table;
	unsigned old_sz = atom_table_sz, size, i;

	if (atom_cnt <= atom_table_sz || atom_cnt >= (1U << 30))
		return;
	size = atom_cnt + atom_cnt / 4;
	if (size < 2 * old_sz && 2 * old_sz <= ATOM_DOUBLING)
		size = 2 * old_sz;
	for (size |= 1; !is_prime(size); size += 2)
		;
	CALLOC_ARRAY(atom_table, size);
	atom_table_sz = size;
	for (i = 0; i < old_sz; i++) {
		struct atom_str *a = old[i], *next;
		for (; a; a = next) {
			unsigned hc = hc_str(a->str_dat, a->str_len) % size;
			next = a->next_atom;
			a->next_atom = atom_table[hc];
			atom_table[hc] = a;
		}
	}
	free(old);
}

void edit_tree_load(enum edit_tree which, const struct object_id *tree)
{
	struct tree_entry *root = &edit_roots[which];
	store_init();
	grow_atom_table();
	if (root->tree)
		release_tree_content_recursive(root->tree);
	root->tree = NULL;
	if (tree) {
		oidcpy(&root->versions[0].oid, tree);
		oidcpy(&root->versions[1].oid, tree);
	} else {
		oidclr(&root->versions[0].oid, the_hash_algo);
		oidclr(&root->versions[1].oid, the_hash_algo);
	}
	load_tree(root);
}

void edit_tree_set(enum edit_tree which, const char *path,
		   const struct object_id *oid, unsigned mode)
{
	store_init();
	grow_atom_table();
	tree_content_set(&edit_roots[which], path, oid, mode, NULL);
}

/* The entry named by the `len` bytes at `name` in directory `dir`, or NULL. */
static struct tree_entry *child_entry(struct tree_entry *dir,
				      const char *name, size_t len)
{
	unsigned i;

	if (!dir->tree)
		load_tree(dir);
	for (i = 0; i < dir->tree->entry_count; i++) {
		struct tree_entry *e = dir->tree->entries[i];
		if (e->name->str_len == len &&
		    !fspathncmp(name, e->name->str_dat, len))
			return e;
	}
	return NULL;
}

/*
 * Walk `path` down from `root`: 1 when a leading part of it is a file, or
 * when it is a directory itself; 0 otherwise (absent, or a file).
 */
static int path_conflicts(struct tree_entry *root, const char *path)
{
	const char *slash = strchrnul(path, '/');
	struct tree_entry *e = child_entry(root, path, slash - path);

	if (!e || !e->versions[1].mode)
		return 0;	/* absent, or removed (kept until stored) */
	if (!*slash)
		return S_ISDIR(e->versions[1].mode);
	if (!S_ISDIR(e->versions[1].mode))
		return 1;
	return path_conflicts(e, slash + 1);
}

int edit_tree_conflict(enum edit_tree which, const char *path)
{
	store_init();
	grow_atom_table();
	return path_conflicts(&edit_roots[which], path);
}

void edit_tree_remove(enum edit_tree which, const char *path)
{
	store_init();
	grow_atom_table();
	tree_content_remove(&edit_roots[which], path, NULL, 1);
}

/*
 * Trees are written by our own walk rather than fast-import's store_tree():
 * the same objects (same sort, same bytes, same delta against the version
 * stored before in this pack), but fast-import formats each entry with
 * printf and sorts every directory twice per write, which on a wide
 * manifest is most of the cost of rewriting a large directory for a
 * one-line change (doc/performance.md, "Writing objects").
 */
/*
 * git's order of tree entries (tree.h's base_name_compare: a directory's
 * name sorts as if it ended with '/'), by the mode of version `v`.
 */
static int entry_order(const struct tree_entry *a, const struct tree_entry *b,
		       int v)
{
	return base_name_compare(a->name->str_dat, a->name->str_len,
				 a->versions[v].mode, b->name->str_dat,
				 b->name->str_len, b->versions[v].mode);
}

static int order_by_base(const void *a, const void *b)
{
	return entry_order(*(struct tree_entry *const *)a,
			   *(struct tree_entry *const *)b, 0);
}

static int order_by_written(const void *a, const void *b)
{
	return entry_order(*(struct tree_entry *const *)a,
			   *(struct tree_entry *const *)b, 1);
}

static void sort_entries(struct tree_content *t, int v)
{
	int (*cmp)(const void *, const void *) =
		v ? order_by_written : order_by_base;
	unsigned i;

	/* Mostly sorted already: the last write sorted them in place. */
	for (i = 1; i < t->entry_count; i++)
		if (cmp(&t->entries[i - 1], &t->entries[i]) > 0)
			break;
	if (i < t->entry_count)
		QSORT(t->entries, t->entry_count, cmp);
}

/* The previous version of the tree being written, and the one written. */
static struct strbuf tree_base = STRBUF_INIT, tree_written = STRBUF_INIT;

/*
 * The bytes of trees written lately, by id, in TREE_BYTES_SLOTS slots
 * chosen by the id's first bytes (a newer tree takes the slot), trees of
 * TREE_BYTES_MAX bytes or less: a directory written again is stored as a
 * delta against the version written before, whose bytes would otherwise
 * be formatted again from its entries (sorted first), as much as the new
 * version costs. An id names its bytes: a slot holding the id is right.
 * On a history whose commits each edit two directories of a hundred files
 * among three hundred, most writes find their base: 8 MB at most.
 */
#define TREE_BYTES_SLOTS 1024
#define TREE_BYTES_MAX (8 << 10)
static struct tree_bytes {
	struct object_id oid;
	struct strbuf bytes;
} *tree_bytes;

static struct tree_bytes *tree_bytes_slot(const struct object_id *oid)
{
	if (!tree_bytes) {
		unsigned i;
		CALLOC_ARRAY(tree_bytes, TREE_BYTES_SLOTS);
		for (i = 0; i < TREE_BYTES_SLOTS; i++)
			strbuf_init(&tree_bytes[i].bytes, 0);
	}
	return &tree_bytes[get_be32(oid->hash) % TREE_BYTES_SLOTS];
}

static void remember_tree_bytes(const struct object_id *oid,
				const struct strbuf *bytes)
{
	struct tree_bytes *slot;

	if (bytes->len > TREE_BYTES_MAX)
		return;
	slot = tree_bytes_slot(oid);
	oidcpy(&slot->oid, oid);
	strbuf_reset(&slot->bytes);
	strbuf_addbuf(&slot->bytes, bytes);
}

static const struct strbuf *remembered_tree_bytes(const struct object_id *oid)
{
	struct tree_bytes *slot = tree_bytes_slot(oid);
	return oideq(&slot->oid, oid) && slot->bytes.alloc ? &slot->bytes
							  : NULL;
}

static void forget_tree_bytes(void)
{
	unsigned i;

	for (i = 0; tree_bytes && i < TREE_BYTES_SLOTS; i++)
		strbuf_release(&tree_bytes[i].bytes);
	FREE_AND_NULL(tree_bytes);
}

/* "<octal mode> <name>\0<raw id>" for each present entry, sorted. */
static void format_tree(struct tree_content *t, int v, struct strbuf *out)
{
	size_t rawsz = the_hash_algo->rawsz;
	unsigned i;

	sort_entries(t, v);
	strbuf_reset(out);
	for (i = 0; i < t->entry_count; i++) {
		struct tree_entry *e = t->entries[i];
		unsigned mode = e->versions[v].mode & ~NO_DELTA;
		char digits[12], *d = digits + sizeof(digits);

		if (!e->versions[v].mode)
			continue;
		do {
			*--d = '0' + (mode & 7);
			mode >>= 3;
		} while (mode);
		strbuf_grow(out, sizeof(digits) + e->name->str_len + 2 + rawsz);
		strbuf_add(out, d, digits + sizeof(digits) - d);
		strbuf_addch(out, ' ');
		strbuf_add(out, e->name->str_dat, e->name->str_len + 1);
		strbuf_add(out, e->versions[v].oid.hash, rawsz);
	}
}

/*
 * Whether load_tree() gives back the contents of `e`, a written directory,
 * as they are: the same entries (versions[0] and [1] alike once written),
 * in the same order (sorted when written, as in the object), but the
 * delta depth it takes from the object's entry, which write_tree() uses
 * for a base in the pack being written; a directory written as a
 * duplicate of another object kept the depth of its previous version.
 */
static int reloads_same(struct tree_entry *e)
{
	struct object_entry *oe = find_object(&e->versions[1].oid);
	return !oe || oe->pack_id != pack_id ||
	       oe->depth == e->tree->delta_depth;
}

/*
 * Let go of the contents of `e`, a written directory, and of its
 * subdirectories', but those reloads_same() would not give back.
 */
static void unload_tree(struct tree_entry *e)
{
	struct tree_content *t = e->tree;
	int keep = !reloads_same(e);
	unsigned i;

	for (i = 0; i < t->entry_count; i++) {
		struct tree_entry *child = t->entries[i];
		if (child->tree) {
			unload_tree(child);
			keep |= !!child->tree;
		}
	}
	if (keep)
		return;
	release_tree_content_recursive(t);
	e->tree = NULL;
}

/*
 * A file or symlink of `t` whose version changed since it was written,
 * for names_new_object: the first that is an object of the pack being
 * written, of the first CHANGED_FILE_LOOKUPS (a directory made whole
 * would otherwise cost a lookup a file); NULL when there is none.
 */
#define CHANGED_FILE_LOOKUPS 2

static const struct object_id *changed_file(struct tree_content *t)
{
	unsigned i, lookups = 0;

	for (i = 0; i < t->entry_count && lookups < CHANGED_FILE_LOOKUPS;
	     i++) {
		struct tree_entry *e = t->entries[i];
		unsigned mode = e->versions[1].mode;

		if (!(S_ISREG(mode) || S_ISLNK(mode)) ||
		    oideq(&e->versions[0].oid, &e->versions[1].oid))
			continue;
		if (in_current_pack(&e->versions[1].oid))
			return &e->versions[1].oid;
		lookups++;
	}
	return NULL;
}

/*
 * Write the directories edited under `root` (those without an id), then
 * `root`; when sweeping, let go of the written directories found on the
 * way that were not edited.
 */
static void write_tree(struct tree_entry *root)
{
	struct delta_base base = DELTA_BASE_INIT;
	struct object_entry *stored = NULL;
	const struct object_id *named = NULL;
	struct tree_content *t;
	unsigned i, kept;

	if (!is_null_oid(&root->versions[1].oid))
		return;	/* unchanged since written */
	if (!root->tree)
		load_tree(root);
	t = root->tree;
	for (i = 0; i < t->entry_count; i++) {
		struct tree_entry *e = t->entries[i];
		if (!e->tree)
			continue;
		if (is_null_oid(&e->versions[1].oid)) {
			write_tree(e);
			/* (A removed directory has no tree: not named.) */
			if (!named && S_ISDIR(e->versions[1].mode))
				named = &e->versions[1].oid;
		} else if (sweeping) {
			unload_tree(e);
		}
	}
	if (!named)
		named = changed_file(t);

	if (!(root->versions[0].mode & NO_DELTA))
		stored = find_object(&root->versions[0].oid);
	if (S_ISDIR(root->versions[0].mode) && stored &&
	    stored->pack_id == pack_id) {
		const struct strbuf *bytes =
			remembered_tree_bytes(&root->versions[0].oid);
		/*
		 * The stored version's own bytes and depth: the entries'
		 * previous versions may not all be there (none, in a
		 * directory made again: a delta of the stored bytes then
		 * still serves).
		 */
		if (bytes) {
			base.depth = stored->depth;
		} else {
			format_tree(t, 0, &tree_base);
			bytes = &tree_base;
			base.depth = t->delta_depth;
		}
		/* Only read: the strbuf is never grown nor released. */
		base.data = *bytes;
	} else {
		stored = NULL;
	}
	format_tree(t, 1, &tree_written);
	store_object_reusing_zlib(OBJ_TREE, &tree_written, NULL, named, &base,
				  stored, &root->versions[1].oid);
	t->delta_depth = base.depth;
	remember_tree_bytes(&root->versions[1].oid, &tree_written);

	/* The written version becomes the base; removed entries go. */
	for (i = 0, kept = 0; i < t->entry_count; i++) {
		struct tree_entry *e = t->entries[i];
		if (!e->versions[1].mode) {
			release_tree_entry(e);
			continue;
		}
		e->versions[0].mode = e->versions[1].mode;
		oidcpy(&e->versions[0].oid, &e->versions[1].oid);
		t->entries[kept++] = e;
	}
	t->entry_count = kept;
}

void edit_tree_write_start(enum edit_tree which)
{
	ensure_pack();
	grow_atom_table();
	if (!edit_roots[which].tree)
		load_tree(&edit_roots[which]);
}

void edit_tree_write_dir(enum edit_tree which, const char *path)
{
	struct tree_entry *e = &edit_roots[which];

	grow_atom_table();
	while (e && *path) {
		const char *slash = strchrnul(path, '/');
		e = child_entry(e, path, slash - path);
		path = *slash ? slash + 1 : slash;
	}
	if (!e || !S_ISDIR(e->versions[1].mode) || !e->tree)
		BUG("edit_tree_write_dir: not a directory being edited");
	write_tree(e);
	unload_tree(e);
}

void edit_tree_write_end(enum edit_tree which, struct object_id *result)
{
	struct tree_entry *root = &edit_roots[which];

	/* A budget of 0 (tests) sweeps at every store. */
	sweeping = !tree_budget ||
		   (tree_entry_allocd > tree_budget * sizeof(struct tree_entry) &&
		    tree_entry_allocd > swept_at[which]);
	write_tree(root);
	if (sweeping)
		swept_at[which] = tree_entry_allocd;
	sweeping = 0;
	oidcpy(&root->versions[0].oid, &root->versions[1].oid);
	oidcpy(result, &root->versions[1].oid);
}

void edit_tree_store(enum edit_tree which, struct object_id *result)
{
	edit_tree_write_start(which);
	edit_tree_write_end(which, result);
}

/* Remove a pack of the session from the repository's object store. */
static void drop_pack(struct packed_git *p)
{
#if CINNABAR_GIT_NEW_API
	struct odb_source *source = the_repository->objects->sources;
	struct packfile_store *store =
		odb_source_files_downcast(source)->packed;

	packfile_list_remove(&store->packs, p);
	strmap_remove(&store->packs_by_path, p->pack_name, 0);
#else
	struct packed_git **pp;

	for (pp = &the_repository->objects->packed_git; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	if (p->mru.next)
		list_del_init(&p->mru);
	hashmap_remove(&the_repository->objects->pack_map, &p->packmap_ent,
		       p->pack_name);
#endif
	close_pack(p);
	/* all_packs[] still points to it: unkeep_all_packs() reads its name. */
}

/*
 * Take the session's packs out of the list the signal handlers read;
 * `drop` removes them, otherwise they become ordinary kept packs.
 */
static void end_session(int drop)
{
	struct session_pack *sp = session_packs, *next;
	int i;

	session_packs = NULL;
	for (; sp; sp = next) {
		next = sp->next;
		if (drop) {
			drop_pack(sp->pack);
			for (i = 0; i < 3; i++)
				unlink_or_warn(sp->files[i]);
		} else {
			write_keep(sp->files[2], "fast-import");
		}
		for (i = 0; i < 3; i++)
			free(sp->files[i]);
		pack_filter_release(&sp->filter);
		idx_lookup_close(&sp->idx);
		free(sp);
	}
	filter_rows_release(&old_filters);
}

static void trace_stats(void)
{
	if (!getenv("GIT_CINNABAR_TRACE"))
		return;
	fprintf(stderr, "cinnabar-helper: store: %lu objects written "
		"(%lu deflated on a second thread, %lu of them by the "
		"importer while it waited), %lu duplicates not "
		"written, %lu told new by an object of the pack they name, "
		"%lu checkpoints, %lu lookups in their packs past "
		"the filters (%lu found), %lu filters in a file\n",
		objects_written, deflated_on_thread,
		(unsigned long)deflate_queue_stolen(), duplicates, told_new,
		checkpoints, idx_lookups, idx_found, filters_moved);
}

/*
 * fast-import turns a pack of few objects (fastimport.unpackLimit, 100)
 * into loose objects, which keeps small fetches from piling up packs; but
 * that inflates every object again and deflates it at core.compression,
 * which for a few large objects is most of the fetch's time.
 * Past this size a pack stays a pack, whatever its count of objects.
 */
#define LOOSEN_MAX_PACK_BYTES (8UL << 20)

/* Name this process in the .keep files of the session's packs. */
static void mark_finished_keeps(void)
{
	struct strbuf name = STRBUF_INIT, msg = STRBUF_INIT;
	int k;

	strbuf_addf(&msg, "%s %"PRIuMAX"\n", finished_keep,
		    (uintmax_t)getpid());
	for (k = 0; k < pack_id; k++) {
		odb_pack_name(&name, all_packs[k]->hash, "keep");
		/* Those of earlier sessions are unkept already. */
		if (!access(name.buf, F_OK))
			write_keep(name.buf, msg.buf);
	}
	strbuf_release(&name);
	strbuf_release(&msg);
}

void store_finish(void)
{
	int before = pack_id, saved_limit = unpack_limit;

	if (!store_initialized)
		return;
	flush_pending();
	deflate_queue_stop();
	if (pack_data && pack_size > LOOSEN_MAX_PACK_BYTES)
		unpack_limit = 0;
	end_packfile();
	disown_pack();
	unpack_limit = saved_limit;
	if (pack_id != before)
		add_to_pack_lookups(all_packs[before]);
	end_session(0);
	mark_finished_keeps();
	forget_objects();
	forget_tree_bytes();
	trace_stats();
}

void store_unkeep(void)
{
	if (store_initialized)
		unkeep_all_packs();
}

void store_abort(void)
{
	int i;
	if (!store_initialized)
		return;
	deflate_queue_stop();
	if (pack_data) {
		close_pack_windows(pack_data);
		close(pack_data->pack_fd);
		unlink(pack_data->pack_name);
		FREE_AND_NULL(pack_data);
		forget_written_crc();
	}
	disown_pack();
	end_session(1);
	/* Forget the objects of the dropped packs, and trees built on them. */
	forget_objects();
	for (i = 0; i < 2; i++) {
		if (edit_roots[i].tree)
			release_tree_content_recursive(edit_roots[i].tree);
		edit_roots[i].tree = NULL;
		oidclr(&edit_roots[i].versions[0].oid, the_hash_algo);
		oidclr(&edit_roots[i].versions[1].oid, the_hash_algo);
	}
}
/*
 * Store blob `id` of `len` bytes from a delta computed elsewhere (git's
 * delta format, see git's Documentation/gitformat-pack.txt) against
 * `base`, which must be an object of the pack being written: this spares
 * computing a delta that the Mercurial data already gives. Mirrors what
 * store_object_reusing_zlib() does when it deltifies. Return -1, storing
 * nothing, when the base does not qualify.
 */
int store_blob_from_delta(size_t len, const struct object_id *id,
			  const struct object_id *base, const char *delta,
			  size_t delta_len)
{
	struct object_entry *b, *e;

	ensure_pack();
	b = in_current_pack(base);
	if (!b || b->type != OBJ_BLOB || b->depth >= delta_depth_max ||
	    delta_len >= len || len >= one_call_max)
		return -1;
	e = new_object_entry_with_id(OBJ_BLOB, id, NULL);
	if (!e)
		return 0;
	e->depth = b->depth + 1;
	if (push_pending(e, (char *)delta, delta_len, 0, b)) {
		flush_pending();
		deflate_object(delta, delta_len);
		write_pack_entry(e, OBJ_BLOB, delta_len, b->idx.offset,
				 &pack_z_out);
	}
	return 0;
}

/*
 * Blobs too large to hold, stored and read as streams (file.c, "Large
 * file revisions"). A blob stored from a stream is written whole, its
 * id known only once it is written: found to be a duplicate then, it is
 * cut off the pack again. One read back from the pack being written is
 * inflated from the file with pread (the objects before it appended
 * first); a delta there, which only store_blob_delta_with_id() writes
 * for such blobs, is applied as its base is read, when its copies go
 * forward (delta-stream.h); anything else is read through git's own
 * streams, or whole.
 */
#define STREAM_PIECE (1UL << 20)

#if !CINNABAR_GIT_NEW_API
/* The pack's running checksum is not used: see fixup_written_pack(). */
static void skip_pack_hash(void)
{
	if (!pack_file->skip_hash) {
		unsigned char unused[GIT_MAX_RAWSZ];
		the_hash_algo->final_fn(unused, &pack_file->ctx);
		pack_file->skip_hash = 1;
	}
}
#else
static void skip_pack_hash(void)
{
}
#endif

/* Write `len` bytes deflated by `z` into the pack, counting them. */
static void write_deflated_piece(git_zstream *z, const void *in, size_t len,
				 int flush, struct strbuf *out)
{
	int ret;

	z->next_in = (unsigned char *)in;
	z->avail_in = len;
	do {
		z->next_out = (unsigned char *)out->buf;
		z->avail_out = out->alloc - 1;
		ret = git_deflate(z, flush);
		if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
			die("cannot compress an object (zlib error)");
		hashwrite(pack_file, out->buf,
			  (unsigned char *)z->next_out - (unsigned char *)out->buf);
		pack_size += (unsigned char *)z->next_out -
			     (unsigned char *)out->buf;
	} while (z->avail_in || (flush == Z_FINISH && ret != Z_STREAM_END));
}

void store_blob_stream(struct stream *content, uint64_t size,
		       struct object_id *result)
{
	unsigned char hdr[96];
	unsigned long hdrlen;
	cinnabar_hash_ctx c;
	struct strbuf piece = STRBUF_INIT, out = STRBUF_INIT;
	struct object_entry *e;
	git_zstream z;
	uint64_t left = size;
	off_t offset;
	int level = -2;

	ensure_pack();
	flush_pending();
	/* Not under a stream of it: it would end past the limit. */
	if (pack_size_limit && !entries_being_read &&
	    pack_size + PACK_END_ROOM + size + size / 16 > pack_size_limit)
		cycle_packfile();
	if (pack_size + PACK_END_ROOM + size + size / 16 < pack_size)
		die("the pack being written is too large");
	skip_pack_hash();
	offset = pack_size;
	hdrlen = format_object_header((char *)hdr, sizeof(hdr), OBJ_BLOB, size);
	the_hash_algo->init_fn(&c);
	the_hash_algo->update_fn(&c, hdr, hdrlen);
	crc32_begin(pack_file);
	hdrlen = encode_in_pack_object_header(hdr, sizeof(hdr), OBJ_BLOB, size);
	hashwrite(pack_file, hdr, hdrlen);
	pack_size += hdrlen;
	strbuf_grow(&piece, STREAM_PIECE);
	strbuf_grow(&out, STREAM_PIECE + 1024);
	while (left) {
		/* Whole pieces: the first one tells the level. */
		size_t n = left < STREAM_PIECE ? left : STREAM_PIECE;
		if (stream_try_read_exact(content, piece.buf, n))
			BUG("a blob's stream ended before its size");
		if (level == -2) {
			level = level_for(size);
			if (object_deflate_level(&pack_deflater, &level,
						 piece.buf, n))
				die("cannot compress an object (zlib error)");
			git_deflate_init(&z, level);
		}
		the_hash_algo->update_fn(&c, piece.buf, n);
		write_deflated_piece(&z, piece.buf, n, 0, &out);
		left -= n;
	}
	if (level == -2)
		git_deflate_init(&z, level_for(size));
	write_deflated_piece(&z, NULL, 0, Z_FINISH, &out);
	git_deflate_end(&z);
	strbuf_release(&piece);
	strbuf_release(&out);
	the_hash_algo->final_oid_fn(result, &c);

	e = insert_object(result);
	if (e->idx.offset || in_some_pack(result)) {
		/* Stored already: cut it off again. */
		if (!e->idx.offset) {
			e->type = OBJ_BLOB;
			e->pack_id = MAX_PACK_ID;
			e->idx.offset = 1;
		}
		duplicates++;
		hashflush(pack_file);
		if (ftruncate(pack_file->fd, offset) ||
		    lseek(pack_file->fd, offset, SEEK_SET) != offset)
			die_errno("cannot truncate the pack being written");
		pack_file->total = offset;
		pack_size = offset;
		crc32_end(pack_file);
		return;
	}
	e->type = OBJ_BLOB;
	e->pack_id = pack_id;
	e->idx.offset = offset;
	e->depth = 0;
	object_count++;
	objects_written++;
	e->idx.crc32 = crc32_end(pack_file);
	note_written_crc(e->idx.crc32, pack_size - offset);
}

void store_hash_blob_stream(struct stream *content, uint64_t size,
			    struct object_id *result)
{
	char hdr[96];
	int hdrlen = format_object_header(hdr, sizeof(hdr), OBJ_BLOB, size);
	char *piece = xmalloc(STREAM_PIECE);
	cinnabar_hash_ctx c;

	the_hash_algo->init_fn(&c);
	the_hash_algo->update_fn(&c, hdr, hdrlen);
	while (size) {
		size_t n = stream_read(content, piece, size < STREAM_PIECE ?
						       size : STREAM_PIECE);
		if (!n)
			BUG("a blob's stream ended %"PRIuMAX" bytes short",
			    (uintmax_t)size);
		the_hash_algo->update_fn(&c, piece, n);
		size -= n;
	}
	free(piece);
	the_hash_algo->final_oid_fn(result, &c);
}

/* The entry of `base` when it can be a delta's base, else NULL. */
static struct object_entry *delta_base_entry(const struct object_id *base)
{
	struct object_entry *b = in_current_pack(base);

	if (!b || b->type != OBJ_BLOB || b->depth >= delta_depth_max)
		return NULL;
	return b;
}

int store_can_delta_against(const struct object_id *base, unsigned *depth)
{
	struct object_entry *b;

	ensure_pack();
	b = delta_base_entry(base);
	if (b)
		*depth = b->depth;
	return !!b;
}

void store_blob_delta_with_id(const struct object_id *oid,
			      const struct object_id *base, const char *delta,
			      size_t delta_len)
{
	struct object_entry *b = delta_base_entry(base), *e;

	if (!b)
		BUG("store_blob_delta_with_id without store_can_delta_against");
	e = insert_object((struct object_id *)oid);
	if (e->idx.offset) {
		duplicates++;
		return;
	}
	if (in_some_pack(oid)) {
		e->type = OBJ_BLOB;
		e->pack_id = MAX_PACK_ID;
		e->idx.offset = 1;
		duplicates++;
		return;
	}
	e->type = OBJ_BLOB;
	e->depth = b->depth + 1;
	flush_pending();
	deflate_object(delta, delta_len);
	write_pack_entry(e, OBJ_BLOB, delta_len, b->idx.offset, &pack_z_out);
	if (pack_z_out.alloc > KEEP_OUTPUT)
		strbuf_release(&pack_z_out);
}

/* An entry's data, inflated from the pack being written with pread. */
struct entry_reader {
	int fd;
	off_t pos;		/* of the next deflated byte */
	git_zstream z;
	int ended;
	unsigned char in[65536];
};

static size_t entry_read(struct stream *s, void *buf, size_t len)
{
	struct entry_reader *r = s->data;

	while (!r->ended) {
		int ret;

		if (!r->z.avail_in) {
			ssize_t n = pread(r->fd, r->in, sizeof(r->in), r->pos);
			if (n < 0)
				die_errno("cannot read the pack being written");
			if (!n)
				die("the pack being written ends in an "
				    "object (disk corruption?)");
			r->pos += n;
			r->z.next_in = r->in;
			r->z.avail_in = n;
		}
		r->z.next_out = buf;
		r->z.avail_out = len;
		ret = git_inflate(&r->z, 0);
		if (ret == Z_STREAM_END)
			r->ended = 1;
		else if (ret != Z_OK && ret != Z_BUF_ERROR)
			die("an object of the pack being written does not "
			    "inflate (disk corruption?)");
		if (r->z.avail_out < len)
			return len - r->z.avail_out;
	}
	return 0;
}

static void entry_release(struct stream *s)
{
	struct entry_reader *r = s->data;
	git_inflate_end(&r->z);
	free(r);
	entries_being_read--;
}

/*
 * The entry at `offset` of the pack being written (its pending objects
 * appended, the file flushed): its type, its size, the offset of its
 * delta base (a delta), and a stream of its data.
 */
static void open_written_entry(off_t offset, enum object_type *type,
			       uint64_t *size, off_t *base_offset,
			       struct stream *s)
{
	unsigned char hdr[32], c;
	struct entry_reader *r;
	ssize_t got = pread(pack_data->pack_fd, hdr, sizeof(hdr), offset);
	ssize_t i = 0;
	int shift = 4;

	if (got <= 0)
		die_errno("cannot read the pack being written");
	c = hdr[i++];
	*type = (c >> 4) & 7;
	*size = c & 15;
	while (c & 0x80 && i < got) {
		c = hdr[i++];
		*size |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	*base_offset = 0;
	if (*type == OBJ_OFS_DELTA && i < got) {
		uint64_t ofs;
		c = hdr[i++];
		ofs = c & 127;
		while (c & 128 && i < got) {
			c = hdr[i++];
			ofs = ((ofs + 1) << 7) | (c & 127);
		}
		*base_offset = offset - ofs;
	}
	if (i == got)
		die("an object of the pack being written is damaged (disk "
		    "corruption?)");
	r = xcalloc(1, sizeof(*r));
	entries_being_read++;
	r->fd = pack_data->pack_fd;
	r->pos = offset + i;
	git_inflate_init(&r->z);
	memset(s, 0, sizeof(*s));
	s->read = entry_read;
	s->release = entry_release;
	s->data = r;
}

/*
 * A stream of the blob at `offset` of the pack being written, its size
 * into `*size`; -1 (nothing opened) for one that is not a blob nor a
 * delta going forward against one.
 */
static int open_written_blob(off_t offset, struct stream *s, uint64_t *size)
{
	enum object_type type;
	off_t base_offset;
	struct stream data, base;
	struct strbuf delta = STRBUF_INIT;
	uint64_t len, base_len;

	open_written_entry(offset, &type, &len, &base_offset, &data);
	if (type == OBJ_BLOB) {
		*s = data;
		*size = len;
		return 0;
	}
	if (type != OBJ_OFS_DELTA)
		goto not_streamed;
	strbuf_grow(&delta, len);
	if (stream_try_read_exact(&data, delta.buf, len))
		die("an object of the pack being written is damaged (disk "
		    "corruption?)");
	strbuf_setlen(&delta, len);
	if (!git_delta_is_forward(delta.buf, delta.len, &base_len, size) ||
	    open_written_blob(base_offset, &base, &len))
		goto not_streamed;
	if (len != base_len)
		die("an object of the pack being written is damaged (disk "
		    "corruption?)");
	stream_release(&data);
	len = delta.len;
	stream_init_git_patch(s, &base, strbuf_detach(&delta, NULL), len);
	return 0;
not_streamed:
	stream_release(&data);
	strbuf_release(&delta);
	return -1;
}

/* The object of the pack being written that `oid` is, or NULL. */
static struct object_entry *written_blob(const struct object_id *oid)
{
	struct object_entry *e;

	if (!store_initialized)
		return NULL;
	e = in_current_pack(oid);
	if (!e)
		return NULL;
	if (e->type != OBJ_BLOB)
		die("object %s is a %s, not a blob", oid_to_hex(oid),
		    type_name(e->type));
	while (is_pending(e))
		append_one_pending();
	hashflush(pack_file);
	return e;
}

uint64_t store_blob_size(const struct object_id *oid)
{
	struct object_entry *e = written_blob(oid);
	unsigned long size;

	if (e) {
		enum object_type type;
		off_t base_offset;
		uint64_t len;
		struct stream data;
		unsigned char head[20];
		const unsigned char *p = head;
		size_t n, result;

		open_written_entry(e->idx.offset, &type, &len, &base_offset,
				   &data);
		if (type == OBJ_BLOB) {
			stream_release(&data);
			return len;
		}
		/* A delta: the result's size is its header's second. */
		n = stream_read(&data, head, sizeof(head));
		stream_release(&data);
		if (!git_delta_read_size(&p, head + n, &result) &&
		    !git_delta_read_size(&p, head + n, &result))
			return result;
		die("an object of the pack being written is damaged (disk "
		    "corruption?)");
	}
	if (cinnabar_object_info(oid, &size) != OBJ_BLOB)
		die("missing blob %s (the repository or its cinnabar "
		    "metadata is damaged)", oid_to_hex(oid));
	return size;
}

#if !CINNABAR_GIT_NEW_API
/* git's streams of an object (streaming.h). */
static size_t istream_read(struct stream *s, void *buf, size_t len)
{
	ssize_t n = read_istream(s->data, buf, len);
	if (n < 0)
		die("cannot read a blob of the repository (damaged?)");
	return n;
}

static void istream_release(struct stream *s)
{
	close_istream(s->data);
}

static void stream_init_git_istream(struct stream *s, struct git_istream *st)
{
	memset(s, 0, sizeof(*s));
	s->read = istream_read;
	s->release = istream_release;
	s->data = st;
}
#endif

void store_open_blob(const struct object_id *oid, struct stream *s,
		     uint64_t *size)
{
	struct object_entry *e = written_blob(oid);
	unsigned long len;
	void *buf;

	if (e && !open_written_blob(e->idx.offset, s, size))
		return;
#if !CINNABAR_GIT_NEW_API
	if (!e) {
		enum object_type type;
		struct git_istream *st = open_istream(the_repository, oid,
						      &type, &len, NULL);
		if (st && type == OBJ_BLOB) {
			stream_init_git_istream(s, st);
			*size = len;
			return;
		}
		if (st)
			close_istream(st);
	}
#endif
	buf = store_read_object_typed(oid, OBJ_BLOB, &len);
	stream_init_buf(s, buf, len, 1);
	*size = len;
}
