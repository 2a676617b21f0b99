/* Importing changegroups: see import.h. */
#include "libgit.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "config.h"
#include "meter.h"
#include "khash.h"
#include "bundle.h"
#include "changegroup.h"
#include "changeset.h"
#include "file.h"
#include "hg-delta.h"
#include "git-tree.h"
#include "graft.h"
#include "manifest.h"
#include "metadata.h"
#include "blob-ids.h"
#include "store.h"
#include "import.h"
#include "raw-commit.h"
#include "replace-map.h"
#include "changeset-spool.h"
#include "manifest-precheck.h"
#include "check-setting.h"
#include "id-verify.h"
#include "ewah/ewok.h"

void test_die_at(const char *phase)
{
	const char *at = getenv("CINNABAR_TEST_DIE_AT");
	const char *sig = getenv("CINNABAR_TEST_DIE_SIGNAL");
	if (at && !strcmp(at, phase)) {
		fflush(NULL);
		kill(git_env_bool("CINNABAR_TEST_DIE_GROUP", 0) ? 0 : getpid(),
		     sig ? atoi(sig) : SIGKILL);
	}
}

/* Rebuild a stored changeset's raw text. */
void changeset_text(const struct hg_oid *node, struct strbuf *out)
{
	const struct object_id *commit = hg2git(node);
	const struct object_id *note;
	struct hg_oid parents[2];
	char *commit_buf, *note_buf;
	unsigned long commit_len, note_len;
	struct raw_commit c;
	size_t i;

	if (!commit || !(note = notes_map_get(&metadata.git2hg, commit)))
		die("unknown delta base changeset %s (corrupt data, or a "
		    "repository missing history it should have)", hg_oid_to_hex(node));
	commit_buf = store_read_object_typed(commit, OBJ_COMMIT, &commit_len);
	note_buf = store_read_object_typed(note, OBJ_BLOB, &note_len);
	hg_oidcpy(&parents[0], &hg_null_oid);
	hg_oidcpy(&parents[1], &hg_null_oid);
	if (raw_commit_parse(&c, commit_buf, commit_len))
		die("commit %s is damaged", oid_to_hex(commit));
	for (i = 0; i < c.parents.nr && i < 2; i++)
		if (git2hg(&c.parents.oid[i], &parents[i]))
			die("commit %s has a parent unknown to the metadata",
			    oid_to_hex(commit));
	oid_array_clear(&c.parents);
	strbuf_reset(out);
	if (changeset_from_commit(out, commit_buf, commit_len, note_buf,
				  note_len, &parents[0], &parents[1]))
		die("git2hg note for %s is damaged", oid_to_hex(commit));
	free(commit_buf);
	free(note_buf);
}

/*
 * The file names the changesets of a changegroup list, counted as
 * Mercurial counts its files' progress against them. Only a 64-bit hash
 * of each name is kept (8 bytes a name, not the name): a collision merely
 * makes the estimate one short.
 */
static inline khint_t name_hash_bucket(uint64_t h)
{
	return (khint_t)(h ^ (h >> 32));
}

static inline int name_hash_equal(uint64_t a, uint64_t b)
{
	return a == b;
}

KHASH_INIT(file_names, uint64_t, char, 0, name_hash_bucket, name_hash_equal)

/* FNV-1a. */
static uint64_t name_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--) {
		h ^= (unsigned char)*name++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void count_file_names(kh_file_names_t *names, const struct strbuf *text)
{
	struct hg_changeset cs;
	const char *p, *end, *eol;
	int ret;

	if (parse_changeset(&cs, text->buf, text->len) || !cs.has_files)
		return;	/* a malformed changeset is refused when stored */
	for (p = cs.files.buf, end = p + cs.files.len; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (eol > p)
			kh_put_file_names(names, name_hash(p, eol - p), &ret);
	}
}

/*
 * Read the changeset group, verifying ids, into `spool`. Only the last
 * text is kept in memory: the usual base of the next delta. A meter
 * named `title` counts them against `announced` (0: unknown), unless
 * `title` is NULL. `names`, when not NULL, gets the file names they list.
 */
static void read_changesets(struct stream *cg, int version,
			    struct changeset_spool *spool, const char *title,
			    uint64_t announced, kh_file_names_t *names)
{
	struct rev_chunk chunk = REV_CHUNK_INIT;
	struct meter *meter = title ? meter_start(title, announced,
						  &cg->offset)
				    : NULL;
	struct spooled_changeset cs = SPOOLED_CHANGESET_INIT;
	struct strbuf base = STRBUF_INIT;
	const struct hg_oid *prev = NULL;

	meter_estimate(meter, announced);
	changeset_spool_init(spool);
	while (read_rev_chunk(cg, version, prev, &chunk)) {
		struct hg_oid check;

		if (prev && hg_oideq(&chunk.delta_base, prev))
			strbuf_swap(&base, &cs.text);
		else if (hg_oid_is_null(&chunk.delta_base))
			strbuf_reset(&base);
		else
			changeset_text(&chunk.delta_base, &base);
		strbuf_reset(&cs.text);
		if (hg_delta_apply(base.buf, base.len, chunk.delta,
				   chunk.delta_len, &cs.text))
			die("malformed changeset %s in the changegroup "
			    "(corrupt data)", hg_oid_to_hex(&chunk.node));
		if (check_enabled(CHECK_NODEID)) {
			hg_hash(&chunk.p1, &chunk.p2, cs.text.buf,
				cs.text.len, &check);
			if (!hg_oideq(&check, &chunk.node))
				die("changeset %s does not match its contents "
				    "(corrupt data)", hg_oid_to_hex(&chunk.node));
		}
		learn_git_tree_of_changeset(&chunk.p1);
		learn_git_tree_of_changeset(&chunk.p2);
		hg_oidcpy(&cs.node, &chunk.node);
		hg_oidcpy(&cs.p1, &chunk.p1);
		hg_oidcpy(&cs.p2, &chunk.p2);
		changeset_spool_add(spool, &cs);
		if (names)
			count_file_names(names, &cs.text);
		prev = &cs.node;
		meter_update(meter, spool->nr);
		if (spool->nr == 1)
			test_die_at("changesets");
	}
	changeset_spool_rewind(spool);
	meter_stop(&meter);
	strbuf_release(&base);
	strbuf_release(&cs.text);
	rev_chunk_release(&chunk);
}

/*
 * A buffer reused from one revision to the next keeps its size: after a
 * full text (the first manifest, ~64 bytes a file; a changeset listing
 * every file) it would stay that size for the whole import, when what
 * follows is small. One past 1 MiB is let go of after its revision.
 */
static void shrink_reused(struct strbuf *buf)
{
	if (buf->alloc > (1UL << 20))
		strbuf_release(buf);
}

/*
 * The second pass over the manifests (manifest.h): `cg` holds those the
 * first pass imported, `imported` the bit of each of the group's `total`.
 */
static void import_manifests(struct stream *cg, size_t total,
			     struct bitmap *imported,
			     struct manifest_precheck *precheck,
			     struct id_verify *verify,
			     struct import_stats *stats)
{
	struct rev_chunk chunk = REV_CHUNK_INIT;
	struct meter *meter = meter_start(_("Storing manifests"), total, NULL);
	struct hg_oid prev;
	unsigned n, read = 0, prechecked = 0;

	for (n = 0; n < total; n++) {
		int checked;

		manifest_precheck_advance(precheck, n + 1);
		checked = manifest_prechecked(precheck, n);
		prechecked += checked;
		if (bitmap_get(imported, n)) {
			if (!read_rev_chunk(cg, 2, read ? &prev : NULL, &chunk))
				BUG("the manifests' second pass ended early");
			import_manifest_git_tree(verify, &chunk, n, checked);
			hg_oidcpy(&prev, &chunk.node);
			shrink_reused(&chunk.raw);
			read++;
		}
		meter_update(meter, n + 1);
		if (n == 0)
			test_die_at("git-trees");
	}
	if (getenv("GIT_CINNABAR_TRACE")) {
		unsigned made, read_back;
		manifest_text_counts(&made, &read_back);
		fprintf(stderr, "cinnabar-helper: manifests: %u imported, %u "
			"of them checked as they came\n", n, prechecked);
		fprintf(stderr, "cinnabar-helper: manifests: %u stored texts "
			"made from their trees, %u read back\n", made,
			read_back);
	}
	stats->manifests += n;
	meter_stop(&meter);
	rev_chunk_release(&chunk);
}

/*
 * The files' revisions; the meter counts the files (as Mercurial does)
 * against `names`, the count of the names the changesets list.
 */
static void import_files(struct stream *cg, int version, size_t names,
			 struct manifest_precheck *precheck,
			 struct id_verify *verify, int *between,
			 struct import_stats *stats)
{
	struct rev_chunk chunk = REV_CHUNK_INIT;
	struct strbuf name = STRBUF_INIT;
	struct meter *meter = meter_start(_("Receiving files"), names,
					  &cg->offset);
	unsigned n = 0, nr_files = 0;

	meter_estimate(meter, names);
	*between = 1;
	while (read_cg_chunk(cg, &name)) {
		struct hg_oid prev;
		int first = 1;
		file_reset_cache();
		while (read_rev_chunk_head(cg, version, first ? NULL : &prev,
					   &chunk, file_big_text_min())) {
			/* A large one is stored as it is read. */
			*between = 0;
			import_file(verify, &chunk, cg);
			*between = 1;
			manifest_precheck_advance(precheck, 0);
			hg_oidcpy(&prev, &chunk.node);
			first = 0;
			meter_update(meter, nr_files + 1);
			if (++n == 1)
				test_die_at("files");
		}
		nr_files++;
	}
	*between = 0;
	file_flush();
	stats->files += n;
	meter_stop(&meter);
	strbuf_release(&name);
	rev_chunk_release(&chunk);
}

/* The changeset's branch: its "branch" extra, or "default". */
static const char *changeset_branch(const struct hg_changeset *cs,
				    size_t *len)
{
	const char *branch = changeset_extra_branch(cs, len);
	if (branch)
		return branch;
	*len = 7;
	return "default";
}

/*
 * What store_commit appends to a commit's message while the commit already
 * stands for another changeset: a newline, as git-cinnabar 0.7 does (the
 * git2hg note's patch then removes it), or a NUL byte, as git-cinnabar
 * 0.6 did, with `cinnabar.compat=0.6` (or GIT_CINNABAR_COMPAT=0.6).
 */
static char conflict_filler(void)
{
	static int filler = -1;
	const char *v;

	if (filler >= 0)
		return filler;
	filler = '\n';
	v = getenv("GIT_CINNABAR_COMPAT");
	if (!v && repo_config_get_string_tmp(the_repository,
					       "cinnabar.compat", &v))
		v = NULL;
	if (v && !strcmp(v, "0.6"))
		filler = '\0';
	else if (v)
		warning("ignoring invalid value for cinnabar.compat: '%s' "
			"(only 0.6 is known)", v);
	return filler;
}

void changeset_commit_id(struct strbuf *commit, const struct hg_oid *node,
			 char filler, struct object_id *result)
{
	for (;;) {
		struct hg_oid other;

		object_id_of(OBJ_COMMIT, commit->buf, commit->len, result);
		if (git2hg(result, &other) || hg_oideq(&other, node))
			return;
		strbuf_addch(commit, filler);
	}
}

/* Store the commit, lengthening its message while it maps elsewhere. */
static void store_commit(struct strbuf *commit, const struct hg_oid *node,
			 struct object_id *result)
{
	changeset_commit_id(commit, node, conflict_filler(), result);
	store_object_with_id(OBJ_COMMIT, commit->buf, commit->len, result);
}

/* Import changeset `c`; 0 when it was stored already. */
static int import_changeset(struct spooled_changeset *c)
{
	struct hg_changeset cs;
	struct object_id parents[2], tree, commit_oid, note_oid, replaced;
	struct hg_oid hg_parents[2];
	struct strbuf commit = STRBUF_INIT, note = STRBUF_INIT;
	const char *branch;
	size_t branch_len;
	int nr = 0, i;

	if (hg2git(&c->node))
		return 0;
	if (parse_changeset(&cs, c->text.buf, c->text.len))
		die("malformed changeset %s", hg_oid_to_hex(&c->node));
	for (i = 0; i < 2; i++) {
		const struct hg_oid *p = i ? &c->p2 : &c->p1;
		const struct object_id *git;
		if (hg_oid_is_null(p))
			continue;
		if (!(git = hg2git(p)))
			die("changeset %s has a parent (%s) that is neither "
			    "in the repository nor in the data received",
			    hg_oid_to_hex(&c->node), hg_oid_to_hex(p));
		hg_oidcpy(&hg_parents[nr], p);
		/* A replacement's children are the replaced commit's. */
		oidcpy(&parents[nr++], replace_original(git));
	}
	if (hg_oid_is_null(&cs.manifest)) {
		store_object_buf(OBJ_TREE, "", 0, &tree);
	} else if (git_tree_for_stored_manifest(&cs.manifest, &tree)) {
		die("changeset %s refers to a manifest (%s) that was not "
		    "received", hg_oid_to_hex(&c->node),
		    hg_oid_to_hex(&cs.manifest));
	}
	changeset_commit(&commit, &cs, &tree, parents, nr);
	switch (graft_find(&c->node, &c->p1, &c->p2, c->text.buf, c->text.len,
			   &tree, parents, nr, &commit, &replaced)) {
	case GRAFT_ONTO:
		oidcpy(&commit_oid, &replaced);
		break;
	case GRAFT_REPLACE:
		store_commit(&commit, &c->node, &commit_oid);
		set_replace(&replaced, &commit_oid);
		break;
	case GRAFT_NONE:
		store_commit(&commit, &c->node, &commit_oid);
		break;
	}
	changeset_note(&note, &c->node, &c->p1, &c->p2, c->text.buf,
		       c->text.len, commit.buf, commit.len);
	store_object_buf(OBJ_BLOB, note.buf, note.len, &note_oid);
	notes_map_set(&metadata.git2hg, &commit_oid, &note_oid);
	set_hg2git(&c->node, &commit_oid);
	branch = changeset_branch(&cs, &branch_len);
	add_changeset_head(&c->node, hg_parents, nr, branch, branch_len,
			   &commit_oid);
	strbuf_release(&commit);
	strbuf_release(&note);
	return 1;
}

static void import_changesets(struct changeset_spool *spool,
			      struct import_stats *stats)
{
	struct meter *meter = meter_start(_("Storing changesets"), spool->nr,
					  NULL);
	struct spooled_changeset cs = SPOOLED_CHANGESET_INIT;
	size_t n = 0;

	while (changeset_spool_next(spool, &cs)) {
		stats->changesets += import_changeset(&cs);
		shrink_reused(&cs.text);
		meter_update(meter, ++n);
	}
	meter_stop(&meter);
	strbuf_release(&cs.text);
}

/*
 * Manifests come before the files they list, but storing a manifest's
 * git tree needs the files' blobs: the manifests are spooled to a
 * temporary file (not memory) as they arrive, and read back from it by
 * the first pass (manifest.h), which imports each one's tree and commit
 * and writes it, its delta against the one before, to `linear`, another
 * temporary file, for the second pass once the files are in. The first
 * pass goes behind the arrival: a manifest is imported while the server
 * is slow to send (reading what it sends comes first: a server kept
 * waiting sends the files later, and would then be the only one at
 * work), and those left once the files are in, before the second pass.
 * Their ids are checked meanwhile, from the same spool
 * (manifest-precheck.h).
 */
struct manifest_spool {
	int fd;
	int version;
	size_t spooled;
	struct manifest_precheck *precheck;
	/*
	 * The first pass: manifest `next` is the next it reads back. It
	 * stores objects while idle only `between` the objects of the
	 * changegroup's other parts, never while one is being stored.
	 */
	int between;
	/* Tests: not while the manifests come (CINNABAR_TEST_TREES_LATE). */
	int late;
	unsigned idle_imported;		/* for the trace */
	struct stream read_back;
	size_t next;
	struct hg_oid next_prev;	/* the node of manifest next - 1 */
	struct rev_chunk chunk;
	struct strbuf rebased;
	FILE *linear;
	struct bitmap *imported;	/* a bit per manifest it imported */
	struct stream_idle idle;
};

/* The first pass over the spooled manifests before index `upto`. */
static void import_manifest_trees(struct manifest_spool *s, size_t upto)
{
	while (s->next < s->spooled && s->next < upto) {
		struct hg_oid node;

		if (!read_cg_chunk(&s->read_back, &s->chunk.raw))
			BUG("manifest spool out of step");
		parse_rev_chunk(s->version, s->next ? &s->next_prev : NULL,
				&s->chunk);
		hg_oidcpy(&node, &s->chunk.node);
		if (import_manifest_tree(&s->chunk, &s->rebased)) {
			write_rev_chunk(s->linear, 2, &s->chunk);
			bitmap_set(s->imported, s->next);
		}
		strbuf_reset(&s->rebased);
		shrink_reused(&s->chunk.raw);
		hg_oidcpy(&s->next_prev, &node);
		if (++s->next == 1)
			test_die_at("manifests");
	}
}

/*
 * While the changegroup is slow to come: the early id check's work, then
 * one manifest of the first pass.
 */
static int import_while_idle(struct stream_idle *idle)
{
	struct manifest_spool *s =
		container_of(idle, struct manifest_spool, idle);
	int check = manifest_precheck_idle(s->precheck);

	if (!s->between || s->next == s->spooled)
		return check;
	import_manifest_trees(s, s->next + 1);
	s->idle_imported++;
	return s->next < s->spooled ? STREAM_IDLE_MORE_NOW : check;
}

static void manifest_spool_init(struct manifest_spool *s, int version,
				struct manifest_precheck *precheck)
{
	FILE *f = tmpfile();

	memset(s, 0, sizeof(*s));
	if (!f || !(s->linear = tmpfile()))
		die_errno("cannot create a temporary file");
	/* The file has no name: the duplicated descriptor keeps it alive. */
	s->fd = xdup(fileno(f));
	fclose(f);
	s->version = version;
	s->precheck = precheck;
	stream_init_pread(&s->read_back, s->fd);
	s->chunk = (struct rev_chunk)REV_CHUNK_INIT;
	strbuf_init(&s->rebased, 0);
	s->imported = bitmap_new();
	s->idle.work = import_while_idle;
	s->late = git_env_bool("CINNABAR_TEST_TREES_LATE", 0);
}

/* Every manifest through the first pass, and its spool ended. */
static void manifest_spool_end(struct manifest_spool *s)
{
	if (getenv("GIT_CINNABAR_TRACE"))
		fprintf(stderr, "cinnabar-helper: manifests: %u of %zu trees "
			"stored while the server was slow to send\n",
			s->idle_imported, s->spooled);
	import_manifest_trees(s, SIZE_MAX);
	manifest_trees_end();
	write_cg_end(s->linear);
	if (fflush(s->linear) || lseek(fileno(s->linear), 0, SEEK_SET) < 0)
		die_errno("cannot write a temporary file");
}

static void manifest_spool_release(struct manifest_spool *s)
{
	stream_release(&s->read_back);
	close(s->fd);
	fclose(s->linear);
	bitmap_free(s->imported);
	strbuf_release(&s->rebased);
	rev_chunk_release(&s->chunk);
}

/*
 * Spool the manifest group, checking each chunk is well formed, and
 * counting the manifests into `count`.
 */
static void spool_manifests(struct stream *cg, struct manifest_spool *s,
			    size_t changesets, size_t *count,
			    struct id_verify *verify)
{
	struct rev_chunk rev = REV_CHUNK_INIT;
	struct strbuf *chunk = &rev.raw;
	struct hg_oid prev;
	unsigned char hdr[4];
	struct meter *meter;

	/* Mercurial counts the manifests against the changesets. */
	meter = meter_start(_("Receiving manifests"), changesets, &cg->offset);
	meter_estimate(meter, changesets);
	manifest_precheck_start(s->precheck, s->version, s->fd, verify);
	s->between = !s->late;
	while (read_cg_chunk(cg, chunk)) {
		put_be32(hdr, chunk->len + 4);
		if (write_in_full(s->fd, hdr, 4) < 0 ||
		    write_in_full(s->fd, chunk->buf, chunk->len) < 0)
			die_errno("cannot write a temporary file");
		/* Refused now if malformed, before the files are read. */
		parse_rev_chunk(s->version, s->spooled ? &prev : NULL, &rev);
		s->spooled++;
		manifest_precheck_spooled(s->precheck);
		hg_oidcpy(&prev, &rev.node);
		meter_update(meter, s->spooled);
	}
	s->between = 0;
	manifest_precheck_spool_end(s->precheck);
	meter_stop(&meter);
	*count = s->spooled;
	put_be32(hdr, 0);
	if (write_in_full(s->fd, hdr, 4) < 0)
		die_errno("cannot write a temporary file");
	rev_chunk_release(&rev);
}

/*
 * Give the heap's free pages back to the system between the phases of an
 * import. Each phase frees what it held (the manifest texts of the early
 * id check, the manifests' last text, a changeset's text listing every
 * file), but glibc returns memory only from the top of the heap: freed
 * pages below something still in use stay resident, and the next
 * phase's peak comes on top of them (doc/performance.md, "Memory
 * bounded by the tip, not the history").
 */
void release_free_memory(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

static void import_changegroup(struct stream *cg, int version,
			       uint64_t nbchanges, struct import_stats *stats)
{
	struct changeset_spool changesets;
	struct stream manifests;
	struct manifest_precheck precheck;
	struct id_verify verify;
	kh_file_names_t *names = meter_shown() ? kh_init_file_names() : NULL;
	struct manifest_spool spool;
	size_t nr_manifests, nr_names = 0;

	read_changesets(cg, version, &changesets, _("Receiving changesets"),
			nbchanges, names);
	if (names) {
		nr_names = kh_size(names);
		kh_destroy_file_names(names);
	}
	id_verify_init(&verify);
	manifest_precheck_init(&precheck);
	manifest_spool_init(&spool, version, &precheck);
	stream_set_idle(cg, &spool.idle);
	spool_manifests(cg, &spool, changesets.nr, &nr_manifests, &verify);
	release_free_memory();
	import_files(cg, version, nr_names, &precheck, &verify, &spool.between,
		     stats);
	stream_set_idle(cg, NULL);
	file_reset_cache();
	manifest_spool_end(&spool);
	release_free_memory();
	stream_init_fd(&manifests, fileno(spool.linear));
	import_manifests(&manifests, nr_manifests, spool.imported, &precheck,
			 &verify, stats);
	stream_release(&manifests);
	manifest_spool_release(&spool);
	manifest_reset_cache();
	verify_id_finish(&verify);
	manifest_precheck_release(&precheck);
	id_verify_release(&verify);
	release_free_memory();
	import_changesets(&changesets, stats);
	changeset_spool_release(&changesets);
	release_free_memory();
}

void import_bundle(struct bundle *b, struct import_stats *stats)
{
	struct stream *cg;
	int version;
	memset(stats, 0, sizeof(*stats));
	while (bundle_next_changegroup(b, &cg, &version)) {
		if (version == 3)
			die("changegroup version 03 is not supported yet");
		import_changegroup(cg, version, b->nbchanges, stats);
	}
}

KHASH_INIT(node_pos, struct object_id, size_t, 1, oidhash_by_value,
	   oideq_by_value)

/* Clear the head flag of `parent` when it is on the same branch. */
static void clear_parent_head(kh_node_pos_t *pos, const struct hg_oid *parent,
			      char **branches, int *is_head, size_t i)
{
	struct object_id key;
	khiter_t it;
	if (hg_oid_is_null(parent))
		return;
	hg_oid_to_git(&key, parent);
	it = kh_get_node_pos(pos, key);
	if (it != kh_end(pos) &&
	    !strcmp(branches[kh_value(pos, it)], branches[i]))
		is_head[kh_value(pos, it)] = 0;
}

void list_bundle_heads(struct bundle *b, each_head_fn fn, void *data)
{
	struct stream *cg;
	int version;
	struct changeset_spool spool = { 0 };
	struct spooled_changeset c = SPOOLED_CHANGESET_INIT;
	struct hg_oid *nodes;
	size_t i;
	char **branches;
	int *is_head;
	kh_node_pos_t *pos = kh_init_node_pos();

	if (bundle_next_changegroup(b, &cg, &version))
		read_changesets(cg, version, &spool, NULL, 0, NULL);
	ALLOC_ARRAY(nodes, spool.nr + 1);
	CALLOC_ARRAY(branches, spool.nr + 1);
	CALLOC_ARRAY(is_head, spool.nr + 1);
	for (i = 0; spool.f && changeset_spool_next(&spool, &c); i++) {
		struct hg_changeset cs;
		struct object_id key;
		const char *branch;
		size_t len;
		khiter_t it;
		int ret;
		if (parse_changeset(&cs, c.text.buf, c.text.len))
			die("malformed changeset %s", hg_oid_to_hex(&c.node));
		branch = changeset_branch(&cs, &len);
		branches[i] = xmemdupz(branch, len);
		is_head[i] = 1;
		hg_oidcpy(&nodes[i], &c.node);
		clear_parent_head(pos, &c.p1, branches, is_head, i);
		clear_parent_head(pos, &c.p2, branches, is_head, i);
		hg_oid_to_git(&key, &c.node);
		it = kh_put_node_pos(pos, key, &ret);
		kh_value(pos, it) = i;
	}
	for (i = 0; i < spool.nr; i++)
		if (is_head[i])
			fn(&nodes[i], hg2git(&nodes[i]), branches[i], data);
	for (i = 0; i < spool.nr; i++)
		free(branches[i]);
	free(branches);
	free(is_head);
	free(nodes);
	strbuf_release(&c.text);
	changeset_spool_release(&spool);
	kh_destroy_node_pos(pos);
}
