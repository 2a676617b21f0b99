/*
 * git-cinnabar-helper: the command loop. Every command is documented in
 * PROTOCOL.md; this file reads commands, dispatches them through the
 * table below, formats each answer from what the command's module
 * returns and flushes it, with the line writers of answer.h, which fsck's
 * problem and unlike-hg lines (fsck.c, fsck-files.c), streamed as they
 * come, use too. Only http's responses are written elsewhere
 * (http-client.c).
 */
#include "libgit.h"
#include "config.h"
#include "ancestry.h"
#include "answer.h"
#include "bundle.h"
#include "changegroup.h"
#include "changeset.h"
#include "http-client.h"
#include "import.h"
#include "stream-clone.h"
#include "metadata.h"
#include "file.h"
#include "fsck.h"
#include "check-setting.h"
#include "git-tree.h"
#include "graft.h"
#include "replace-map.h"
#include "manifest.h"
#include "push.h"
#include "data.h"
#include "compress.h"
#include "store.h"
#include "meter.h"
#include "id-verify.h"
#include "sha1/sha1-mb.h"
#include "sha1/sha1-test.h"
#include "test-tool.h"
#include "words.h"
#include <malloc.h>

#define PROTOCOL_VERSION 12
#ifndef CINNABAR_HELPER_VERSION
#define CINNABAR_HELPER_VERSION "0.1.0"
#endif
#ifndef CINNABAR_BUILD_ID
#define CINNABAR_BUILD_ID "unknown"
#endif

static FILE *out;

/* The last commands received, for crash reports (GIT_CINNABAR_TRACE). */
#define HISTORY 16
static char *history[HISTORY];
static unsigned history_pos;

static void remember(const char *line)
{
	free(history[history_pos % HISTORY]);
	history[history_pos++ % HISTORY] = without_userinfo(line);
}

static NORETURN void die_with_error_answer(const char *err, va_list params)
{
	static int dying;
	char msg[4096];
	unsigned i;
	const char *first;

	vsnprintf(msg, sizeof(msg), err, params);
	if (dying++)
		exit(128);
	/* A revision before the one this error is about may be bad. */
	first = verify_id_failed_before();
	if (first)
		xsnprintf(msg, sizeof(msg), "%s", first);
	store_abort();
	/*
	 * Past store_finish (the metadata ref not updated, or the answer not
	 * written), the packs are final and kept: without their .keep files,
	 * what no ref reaches is garbage git's gc removes.
	 */
	store_unkeep();
	for (i = 0; i < sizeof(msg) && msg[i]; i++)
		if (msg[i] == '\n')
			msg[i] = ' ';
	fprintf(out, "error %s\n", msg);
	fflush(out);
	if (getenv("GIT_CINNABAR_TRACE")) {
		fprintf(stderr, "cinnabar-helper: %s\nlast commands:\n", msg);
		for (i = history_pos > HISTORY ? history_pos - HISTORY : 0;
		     i < history_pos; i++)
			fprintf(stderr, "  %s\n", history[i % HISTORY]);
	}
	exit(128);
}

__attribute__((format (printf, 1, 2)))
static void answer(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	answer_vprintf(out, fmt, ap);
	va_end(ap);
}

static int get_hg(const char *arg, struct hg_oid *oid)
{
	return strlen(arg) != HG_HEXSZ || hg_oid_from_hex(arg, oid);
}

/* A word that is a git id, 40 hex digits and nothing more: 0. */
static int get_git(const char *arg, struct object_id *oid)
{
	return get_oid_hex(arg, oid) || arg[GIT_SHA1_HEXSZ];
}

static int in_repository;

static void need_repository(void)
{
	if (!in_repository)
		die("not a git repository (this command needs one)");
}

static void cmd_version(const char **argv UNUSED)
{
	answer("version %d %s %s\n", PROTOCOL_VERSION,
	       CINNABAR_HELPER_VERSION, CINNABAR_BUILD_ID);
}

static void cmd_capabilities(const char **argv UNUSED)
{
	answer("capabilities http zlib zstd bzip2\n");
}

static void cmd_hg2git(const char **argv)
{
	struct hg_oid hg;
	const struct object_id *git;

	need_repository();
	if (!argv[0] || get_hg(argv[0], &hg))
		die("hg2git needs a 40-digit hg id");
	git = hg2git(&hg);
	answer("%s\n", git ? oid_to_hex(git) : oid_to_hex(cinnabar_null_oid()));
}

static void cmd_hg_prefix(const char **argv)
{
	struct hg_oid found;
	int matches;

	need_repository();
	matches = argv[0] ? hg_prefix_lookup(argv[0], argv[1], &found) : -1;
	if (matches < 0)
		die("hg-prefix needs 1 to 40 hex digits, then optionally "
		    "changeset, manifest or file");
	if (matches == 1)
		answer("1 %s\n", hg_oid_to_hex(&found));
	else
		answer("%d\n", matches);
}

static void cmd_git2hg(const char **argv)
{
	struct object_id git;
	struct hg_oid hg = { { 0 } };

	need_repository();
	if (!argv[0] || get_git(argv[0], &git))
		die("git2hg needs a 40-digit git id");
	git2hg(&git, &hg);	/* the null id when it has none */
	answer("%s\n", hg_oid_to_hex(&hg));
}

static void cmd_is_ancestor(const char **argv)
{
	struct object_id ancestor, descendant;
	int ret;

	need_repository();
	if (!argv[0] || !argv[1] || argv[2] || get_git(argv[0], &ancestor) ||
	    get_git(argv[1], &descendant))
		die("is-ancestor needs two 40-digit git ids");
	ret = is_ancestor(&ancestor, &descendant);
	answer("%s\n", ret < 0 ? "missing" : ret ? "1" : "0");
}

/* The answer to heads and bundle-heads: a count, then a line a head. */
struct heads_answer {
	size_t count;
	struct strbuf lines;
};

static void add_head(const struct hg_oid *node, const struct object_id *commit,
		     const char *branch, void *data)
{
	struct heads_answer *a = data;
	a->count++;
	strbuf_addf(&a->lines, "%s %s %s\n", hg_oid_to_hex(node),
		    commit ? oid_to_hex(commit) : "?", branch);
}

static void answer_heads(struct heads_answer *a)
{
	answer("%"PRIuMAX"\n%s", (uintmax_t)a->count, a->lines.buf);
	strbuf_release(&a->lines);
}

static void cmd_heads(const char **argv UNUSED)
{
	struct heads_answer a = { 0, STRBUF_INIT };

	need_repository();
	for_each_changeset_head(add_head, &a);
	answer_heads(&a);
}

static void cmd_heads_with_children(const char **argv UNUSED)
{
	struct heads_answer a = { 0, STRBUF_INIT };

	need_repository();
	for_each_changeset_head_with_child(add_head, &a);
	answer_heads(&a);
}

static void cmd_bundle_heads(const char **argv)
{
	struct heads_answer a = { 0, STRBUF_INIT };
	struct stream raw;
	struct bundle b;

	need_repository();
	if (!argv[0])
		die("bundle-heads needs a path");
	stream_init_file(&raw, argv[0]);
	bundle_open(&b, &raw, 0);
	list_bundle_heads(&b, add_head, &a);
	bundle_release(&b);
	answer_heads(&a);
}

static void run_import(struct stream *raw, int cg_version)
{
	struct bundle b;
	struct import_stats stats;
	bundle_open(&b, raw, cg_version);
	import_bundle(&b, &stats);
	bundle_check_end(&b);
	bundle_release(&b);
	answer("ok %u %u %u\n", stats.changesets, stats.manifests, stats.files);
}

static void cmd_import(const char **argv)
{
	struct stream raw;
	int cg_version = 0;

	need_repository();

	if (!argv[0] || !argv[1])
		die("import needs a source");
	if (!strcmp(argv[0], "file")) {
		stream_init_file(&raw, argv[1]);
	} else if (!strcmp(argv[0], "revlogs")) {
		stream_init_revlogs(&raw, argv[1]);
		cg_version = 2;
	} else if (!strcmp(argv[0], "stdin")) {
		if (strcmp(argv[1], "bundle") &&
		    !(starts_with(argv[1], "cg") &&
		      (cg_version = changegroup_version(argv[1] + 2))))
			die("unknown import kind '%s'", argv[1]);
		stream_init_blocks(&raw, stdin);
	} else {
		die("unknown import source '%s'", argv[0]);
	}
	run_import(&raw, cg_version);
}

static void cmd_http(const char **argv)
{
	int cg_version = 0;
	if (!argv[0] || !argv[1])
		die("http needs a mode and a URL");
	if (!strcmp(argv[0], "import"))
		need_repository();
	if (argv[2] && strcmp(argv[2], "bundle") &&
	    !(starts_with(argv[2], "cg") &&
	      (cg_version = changegroup_version(argv[2] + 2))))
		die("unknown import kind '%s'", argv[2]);
	http_command(argv[0], argv[1], cg_version, stdin, out, run_import);
}

static void cmd_progress(const char **argv)
{
	if (!argv[0] || (strcmp(argv[0], "on") && strcmp(argv[0], "off")))
		die("progress needs 'on' or 'off'");
	meter_show(!strcmp(argv[0], "on"));
	answer("ok\n");
}

static void cmd_changegroup(const char **argv)
{
	struct object_id *commits;
	struct hg_oid *nodes;
	struct strbuf line = STRBUF_INIT;
	unsigned long count, i;
	int version;

	need_repository();
	if (!argv[0] || !argv[1] || !argv[2] ||
	    !(version = changegroup_version(argv[0])) || version == 3)
		die("changegroup needs a version (01 or 02), a path and a count");
	count = strtoul(argv[2], NULL, 10);
	ALLOC_ARRAY(commits, count + 1);
	for (i = 0; i < count; i++) {
		if (strbuf_getline_lf(&line, stdin) == EOF ||
		    get_oid_hex(line.buf, &commits[i]) ||
		    (line.len != GIT_SHA1_HEXSZ &&
		     (line.len < GIT_SHA1_HEXSZ + 2 ||
		      line.buf[GIT_SHA1_HEXSZ] != ' ')))
			die("changegroup expects %lu commit ids", count);
		if (line.len > GIT_SHA1_HEXSZ)
			push_set_branch(&commits[i],
					line.buf + GIT_SHA1_HEXSZ + 1);
	}
	strbuf_release(&line);
	ALLOC_ARRAY(nodes, count + 1);
	create_changegroup(version, argv[1], commits, count, nodes);
	fprintf(out, "ok %lu\n", count);
	for (i = 0; i < count; i++)
		fprintf(out, "%s %s\n", oid_to_hex(&commits[i]),
			hg_oid_to_hex(&nodes[i]));
	answer_flush(out);
	free(nodes);
	free(commits);
}

static void cmd_graft(const char **argv)
{
	struct strbuf line = STRBUF_INIT;
	unsigned long count, i, added = 0;
	struct object_id oid;

	need_repository();
	if (!argv[0])
		die("graft needs a count");
	count = strtoul(argv[0], NULL, 10);
	for (i = 0; i < count; i++) {
		if (strbuf_getline_lf(&line, stdin) == EOF ||
		    get_oid_hex(line.buf, &oid) ||
		    line.len != GIT_SHA1_HEXSZ)
			die("graft expects %lu commit ids", count);
		added += !graft_add_candidate(&oid);
	}
	strbuf_release(&line);
	answer("ok %lu\n", added);
}

static void cmd_graft_stats(const char **argv UNUSED)
{
	struct graft_stats s;

	graft_get_stats(&s);
	answer("ok %u %u %u %u %lu\n", s.candidates, s.grafted, s.not_grafted,
	       s.replaced, (unsigned long)replace_map_size());
}

static void cmd_finish(const char **argv UNUSED)
{
	struct object_id result;
	struct ref_transaction *update = NULL;
	struct meter *meter;
	int changed;

	need_repository();
	test_die_at("finish");
	/* What the import's streams held (zstd's window: 2.5 MB). */
	release_free_memory();
	/* The metadata's parts, then the packs made final. */
	meter = meter_start(_("Writing metadata"), METADATA_PARTS + 1, NULL);
	changed = metadata_store(&result, meter);
	/*
	 * The refs locked and their new values written before the objects
	 * are made final: a ref that cannot be written fails the finish
	 * while they can still be dropped (store_finish turns a small pack
	 * into loose objects, which could not).
	 */
	if (changed)
		update = metadata_prepare_ref(&result);
	store_finish();
	meter_update(meter, METADATA_PARTS + 1);
	meter_stop(&meter);
	if (changed)
		metadata_commit_ref(update, &result);
	store_unkeep();
	answer("ok %s\n", oid_to_hex(&result));
}

/* Drop the work not finished, and the caches that may refer to it. */
static void drop_work(void)
{
	store_abort();
	git_tree_reset_caches();
	manifest_reset_cache();
	file_reset_cache();
}

static void cmd_abort(const char **argv UNUSED)
{
	/* Back to the state at start: nothing refers to dropped objects. */
	drop_work();
	if (in_repository)
		metadata_load();
	answer("ok\n");
}

static void cmd_metadata(const char **argv)
{
	struct object_id commit;

	need_repository();
	if (!argv[0] || get_oid_hex(argv[0], &commit) || argv[0][40] ||
	    argv[1])
		die("metadata needs a metadata commit id");
	drop_work();
	metadata_load_commit(&commit);
	answer("ok\n");
}

/* The CHECK_* flags cinnabar.check turns on. */
static unsigned configured_checks(void)
{
	static const unsigned each[] = {
		CHECK_NODEID, CHECK_MANIFESTS, CHECK_FILES
	};
	unsigned flags = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(each); i++)
		if (check_enabled(each[i]))
			flags |= each[i];
	return flags;
}

/*
 * The checks of a fsck of our own metadata: all, and a changeset's commit
 * may be a grafted one when the repository grafted (cinnabar.grafted,
 * which cinnabar/graft.py sets). Metadata received is never so trusted.
 */
static unsigned local_fsck_checks(void)
{
	int grafted = 0;

	if (repo_config_get_bool(the_repository, "cinnabar.grafted", &grafted))
		grafted = 0;
	return CHECK_ALL | (grafted ? FSCK_GRAFTED : 0);
}

/* Read `count` lines of commit ids into `commits`; dies otherwise. */
static void read_commit_ids(unsigned long count, struct oid_array *commits)
{
	struct strbuf line = STRBUF_INIT;
	unsigned long i;

	for (i = 0; i < count; i++) {
		struct object_id oid;
		if (strbuf_getline_lf(&line, stdin) == EOF ||
		    get_oid_hex(line.buf, &oid) || line.len != GIT_SHA1_HEXSZ)
			die("fsck expects %lu commit ids", count);
		oid_array_append(commits, &oid);
	}
	strbuf_release(&line);
}

/* "<word>" alone, or "<word> <count>" when `counted`. */
static int fsck_mode(const char **argv, const char *word, int counted)
{
	return argv[0] && !strcmp(argv[0], word) &&
	       (counted ? argv[1] && !argv[2] : !argv[1]);
}

/*
 * fsck checks the notes trees, not the caches of them made before: the
 * maps are read again, their caches made again from the trees.
 */
static void distrust_id_caches(void)
{
	struct object_id commit;

	oidcpy(&commit, &metadata.commit);
	notes_map_trust_cache = 0;
	metadata_load_commit(&commit);
	notes_map_trust_cache = 1;
}

static void cmd_fsck(const char **argv)
{
	struct oid_array commits = OID_ARRAY_INIT, grafts = OID_ARRAY_INIT;
	struct fsck_counts counts;
	int full = fsck_mode(argv, "full", 0);
	int received = fsck_mode(argv, "received", 0) ||
		       fsck_mode(argv, "received", 1);

	need_repository();
	if (!full && !received && !fsck_mode(argv, "commits", 1))
		die("fsck needs 'full', 'received [<count>]' or "
		    "'commits <count>'");
	if (argv[1])
		read_commit_ids(strtoul(argv[1], NULL, 10),
				received ? &grafts : &commits);
	if (!received)
		distrust_id_caches();
	if (received)
		fsck_metadata(NULL, configured_checks(), &grafts, out, &counts);
	else
		fsck_metadata(full ? NULL : &commits, local_fsck_checks(),
			      NULL, out, &counts);
	answer("ok %u %u %u %u\n", counts.changesets, counts.manifests,
	       counts.files, counts.problems);
	oid_array_clear(&commits);
	oid_array_clear(&grafts);
}

/* A block stream (PROTOCOL.md, "Framing"). */
static void write_blocks(const struct strbuf *data)
{
	size_t pos, n;
	for (pos = 0; pos < data->len; pos += n) {
		n = data->len - pos < 65536 ? data->len - pos : 65536;
		fprintf(out, "%"PRIuMAX"\n", (uintmax_t)n);
		fwrite(data->buf + pos, 1, n, out);
	}
	fputs("0\n", out);
}

/* One entry as `git config --list -z` writes it: `<key>[\n<value>]\0`. */
static int list_config_entry(const char *key, const char *value,
			     const struct config_context *ctx UNUSED,
			     void *data)
{
	struct strbuf *list = data;

	strbuf_addstr(list, key);
	if (value) {
		strbuf_addch(list, '\n');
		strbuf_addstr(list, value);
	}
	strbuf_addch(list, '\0');
	return 0;
}

static void cmd_config(const char **argv UNUSED)
{
	struct strbuf list = STRBUF_INIT;

	repo_config(the_repository, list_config_entry, &list);
	fputs("ok\n", out);
	write_blocks(&list);
	answer_flush(out);
	strbuf_release(&list);
}

static void cmd_data(const char **argv)
{
	struct hg_data d = HG_DATA_INIT;

	need_repository();
	hg_data_lookup(argv[0], argv[0] ? argv[1] : NULL, &d);
	switch (d.result) {
	case HG_DATA_AMBIGUOUS:
		answer("ambiguous %"PRIuMAX"\n", (uintmax_t)d.matches);
		break;
	case HG_DATA_OTHER:
		answer("other %s\n", d.other);
		break;
	case HG_DATA_UNKNOWN:
		answer("unknown\n");
		break;
	case HG_DATA_FOUND:
		fprintf(out, "ok %s\n", hg_oid_to_hex(&d.found));
		write_blocks(&d.text);
		answer_flush(out);
		break;
	}
	strbuf_release(&d.text);
}

/* Test hook: see PROTOCOL.md, "Test hooks". */
static void cmd_test_sha1(const char **argv)
{
	const char *path = sha1_test_path();
	unsigned seed, count, bad;

	if (argv[0] && !strcmp(argv[0], "speed")) {
		sha1_test_speed(argv[1] ? strtoul(argv[1], NULL, 10) : 64);
		answer("ok %s\n", path);
		return;
	}
	if (!argv[0] || !argv[1])
		die("test-sha1 needs a seed and a count");
	seed = strtoul(argv[0], NULL, 10);
	count = strtoul(argv[1], NULL, 10);
	bad = sha1_test_messages(seed, count);
	if (bad)
		die("test-sha1: %u of %u digests wrong (%s)", bad, count, path);
	answer("ok %u %s\n", count, path);
}

/* Test hook: see PROTOCOL.md, "Test hooks". */
static void cmd_test_tool(const char **argv)
{
	struct strbuf result = STRBUF_INIT;

	test_tool(argv, stdin, &result);
	fputs("ok\n", out);
	write_blocks(&result);
	answer_flush(out);
	strbuf_release(&result);
}

static void cmd_compress(const char **argv)
{
	uintmax_t n = compress_file(argv[0], argv[0] ? argv[1] : NULL,
				    argv[0] && argv[1] ? argv[2] : NULL);
	answer("ok %"PRIuMAX"\n", n);
}

struct command {
	const char *name;
	void (*fn)(const char **argv);
};

static const struct command commands[] = {
	{ "version", cmd_version },
	{ "capabilities", cmd_capabilities },
	{ "config", cmd_config },
	{ "hg2git", cmd_hg2git },
	{ "git2hg", cmd_git2hg },
	{ "is-ancestor", cmd_is_ancestor },
	{ "hg-prefix", cmd_hg_prefix },
	{ "heads", cmd_heads },
	{ "heads-with-children", cmd_heads_with_children },
	{ "bundle-heads", cmd_bundle_heads },
	{ "import", cmd_import },
	{ "http", cmd_http },
	{ "progress", cmd_progress },
	{ "changegroup", cmd_changegroup },
	{ "graft", cmd_graft },
	{ "graft-stats", cmd_graft_stats },
	{ "finish", cmd_finish },
	{ "abort", cmd_abort },
	{ "fsck", cmd_fsck },
	{ "metadata", cmd_metadata },
	{ "data", cmd_data },
	{ "compress", cmd_compress },
	{ "test-sha1", cmd_test_sha1 },
	{ "test-tool", cmd_test_tool },
};

static int run_command_line(const struct strbuf *line)
{
	static struct strbuf buf = STRBUF_INIT;
	const char *argv[MAX_WORDS + 1];
	size_t i;

	split_words(line, &buf, argv);
	if (!strcmp(argv[0], "quit"))
		return 0;
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(argv[0], commands[i].name)) {
			commands[i].fn(argv + 1);
			return 1;
		}
	}
	die("unknown helper command '%s'", argv[0]);
}

int cmd_main(int argc UNUSED, const char **argv UNUSED)
{
	struct strbuf line = STRBUF_INIT;
	const char *progress = getenv("GIT_CINNABAR_PROGRESS");
	int nongit = 0;

	/*
	 * fast-import sets up a new zlib stream (a few hundred KiB) for every
	 * object it stores: keep such blocks on the heap instead of mapping
	 * and unmapping fresh pages each time.
	 */
	mallopt(M_MMAP_THRESHOLD, 8 * 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
	/*
	 * GNUTLS_NO_IMPLICIT_INIT: set by cinnabar/helper.py when we are
	 * started, so that GnuTLS, loaded only as a dependency of libcurl's
	 * LDAP support (libcurl itself uses OpenSSL here, or initialises
	 * GnuTLS explicitly when built on it), skips its load-time setup.
	 * Dropped again at once: what we run (credential helpers) starts as
	 * usual.
	 */
	unsetenv("GNUTLS_NO_IMPLICIT_INIT");
	out = stdout;
	set_die_routine(die_with_error_answer);
	cinnabar_setup_git_directory_gently(&nongit);
	in_repository = !nongit;
	if (in_repository)
		setup_history_walks();
	repo_config(the_repository, git_default_config, NULL);
	/*
	 * Mercurial paths are bytes: "README" and "readme" are two files.
	 * fast-import's tree code compares names with fspathcmp(), which
	 * folds case when core.ignorecase is set (git's default on macOS and
	 * Windows) and would merge them.  The helper never touches a work
	 * tree, so nothing else wants the setting.  git_default_config()
	 * sets it again wherever it runs: store.c and http-client.c reset it
	 * after git_pack_config() and http_init().
	 */
	ignore_case = 0;
	store_limit_memory();
	meter_show(progress ? git_env_bool("GIT_CINNABAR_PROGRESS", 0)
			    : isatty(2));
	if (in_repository)
		metadata_load();
	while (strbuf_getline_lf(&line, stdin) != EOF) {
		remember(line.buf);
		if (!line.len)
			continue;
		if (!run_command_line(&line))
			break;
	}
	strbuf_release(&line);
	store_abort();
	return 0;
}
