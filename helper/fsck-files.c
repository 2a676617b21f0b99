/* Checking the ids of file revisions, maybe in two processes: see fsck-files.h. */
#include "libgit.h"
#include "meter.h"
#include "hg-id.h"
#include "import.h"
#include "metadata.h"
#include "store.h"
#include "fsck-changes.h"
#include "answer.h"
#include "fsck-files.h"

struct file_check {
	struct hg_oid node, a, b, manifest;
	struct object_id blob;
	char *path;
	size_t order;
	int merge;		/* its manifest has two parents */
};

/*
 * By path, then in the order queued (parents first): the revisions of a
 * file are stored as a chain of git deltas, each against the previous
 * one, so reading them in that order needs only the last one in git's
 * cache of delta bases, when reading them manifest after manifest would
 * need one for every file at once.
 */
static int file_check_cmp(const void *a, const void *b)
{
	const struct file_check *x = a, *y = b;
	int cmp = strcmp(x->path, y->path);
	return cmp ? cmp : x->order < y->order ? -1 : x->order > y->order;
}

#define DEFAULT_SPLIT 4096

void file_checks_add(struct file_checks *fc, const struct hg_oid *node,
		     const struct hg_oid *a, const struct hg_oid *b,
		     const char *path, size_t len,
		     const struct hg_oid *manifest,
		     const struct object_id *blob, int merge)
{
	struct file_check *c;
	size_t i;

	ALLOC_GROW(fc->items, fc->nr + 1, fc->alloc);
	c = &fc->items[fc->nr++];
	hg_oidcpy(&c->node, node);
	hg_oidcpy(&c->a, a);
	hg_oidcpy(&c->b, b);
	hg_oidcpy(&c->manifest, manifest);
	oidcpy(&c->blob, blob);
	c->path = xmemdupz(path, len);
	c->order = fc->nr - 1;
	c->merge = merge;
	for (i = 0; i < len; i++)
		if (c->path[i] == '\n')
			c->path[i] = ' ';	/* one line per problem */
}

/*
 * The pair of candidate parents that gives the revision's id from its
 * text ("\1\n<files-meta entry>\1\n" when it has one, then its blob),
 * in p[0], p[1]; -1 when none does.
 */
static int matching_parents(const struct file_check *c, const char *meta,
			    size_t meta_len, const char *blob,
			    size_t blob_len, const struct hg_oid **p)
{
	const struct hg_oid *tries[][2] = {
		{ &c->a, &c->b }, { &c->a, &hg_null_oid },
		{ &c->b, &hg_null_oid }, { &hg_null_oid, &hg_null_oid },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		struct hg_hasher h;
		struct hg_oid id;
		if (i && hg_oideq(tries[i][0], tries[i - 1][0]) &&
		    hg_oideq(tries[i][1], tries[i - 1][1]))
			continue;
		hg_hasher_init(&h, tries[i][0], tries[i][1]);
		if (meta) {
			hg_hasher_update(&h, "\1\n", 2);
			hg_hasher_update(&h, meta, meta_len);
			hg_hasher_update(&h, "\1\n", 2);
		}
		hg_hasher_update(&h, blob, blob_len);
		hg_hasher_final(&h, &id);
		if (hg_oideq(&id, &c->node)) {
			p[0] = tries[i][0];
			p[1] = tries[i][1];
			return 0;
		}
	}
	return -1;
}

/* The parents of a revision, for people: "a and b", "a", "none". */
static const char *parents_text(struct strbuf *buf, const struct hg_oid *x,
				const struct hg_oid *y)
{
	strbuf_reset(buf);
	if (!hg_oid_is_null(x))
		strbuf_addstr(buf, hg_oid_to_hex(x));
	if (!hg_oid_is_null(x) && !hg_oid_is_null(y))
		strbuf_addstr(buf, " and ");
	if (!hg_oid_is_null(y))
		strbuf_addstr(buf, hg_oid_to_hex(y));
	if (!buf->len)
		strbuf_addstr(buf, "none");
	return buf->buf;
}

/* A revision whose parents Mercurial's commit would not give it. */
static void report_parents(const struct file_check *c, int copy,
			   const struct hg_oid **p, FILE *out)
{
	struct strbuf has = STRBUF_INIT, there = STRBUF_INIT;

	answer_messagef(out, "unlike-hg", "file revision %s ('%s', in manifest "
		"%s) has parents %s%s, where the parent manifests have %s: "
		"Mercurial gives a new revision %s",
		hg_oid_to_hex(&c->node), c->path,
		hg_oid_to_hex(&c->manifest), parents_text(&has, p[0], p[1]),
		copy ? " and copy metadata" : "",
		parents_text(&there, &c->a, &c->b),
		copy ? "with copy metadata no parent outside merges"
		     : "the path's revisions in the parent manifests");
	strbuf_release(&has);
	strbuf_release(&there);
}

/*
 * Check one revision; return 1 and write a problem line if it is bad (an
 * unlike-hg line about its parents is not a problem).
 */
static unsigned check_one(const struct file_check *c, FILE *out)
{
	struct object_id key;
	const struct object_id *meta_oid;
	const struct hg_oid *p[2];
	char *meta = NULL, *blob;
	const char *src;
	unsigned long meta_len = 0, blob_len;
	size_t src_len;
	int good;

	hg_oid_to_git(&key, &c->node);
	meta_oid = notes_map_get(&metadata.files_meta, &key);
	if (meta_oid)
		meta = store_read_object_typed(meta_oid, OBJ_BLOB, &meta_len);
	blob = store_read_object_typed(&c->blob, OBJ_BLOB, &blob_len);
	good = !matching_parents(c, meta, meta_len, blob, blob_len, p);
	src = meta ? file_meta_copy(meta, meta_len, &src_len) : NULL;
	if (good && src && src_len == strlen(c->path) &&
	    !memcmp(src, c->path, src_len))
		answer_messagef(out, "unlike-hg", "file revision %s ('%s', in "
			"manifest %s) is recorded as a copy of its own path: "
			"Mercurial records copies from other paths only",
			hg_oid_to_hex(&c->node), c->path,
			hg_oid_to_hex(&c->manifest));
	else if (good && !file_parents_like_hg(c->merge, !!src, &c->a, &c->b,
					       p[0], p[1]))
		report_parents(c, !!src, p, out);
	free(meta);
	free(blob);
	if (good)
		return 0;
	answer_messagef(out, "problem", "file revision %s ('%s', in manifest "
		"%s): its blob %s and files-meta do not give that id (the blob "
		"or its metadata was changed)",
		hg_oid_to_hex(&c->node), c->path,
		hg_oid_to_hex(&c->manifest), oid_to_hex(&c->blob));
	return 1;
}

/*
 * Check the queued revisions not taken yet, a run of CHUNK at a time, in
 * turn with the other process (fc->next is shared with it); return the
 * number of problems written.
 */
#define CHUNK 64

static size_t take_chunk(struct file_checks *fc)
{
	if (!fc->next)
		return fc->done ? fc->nr : (fc->done = 1, 0);
	return __atomic_fetch_add(fc->next, CHUNK, __ATOMIC_RELAXED);
}

/*
 * How far both processes went, for the meter: the revisions taken so far
 * (the other process's count is not known here, the shared counter is).
 */
static size_t taken_so_far(struct file_checks *fc, size_t checked)
{
	size_t taken;

	if (!fc->next)
		return checked;
	taken = __atomic_load_n(fc->next, __ATOMIC_RELAXED);
	return taken < fc->nr ? taken : fc->nr;
}

static unsigned check_taken(struct file_checks *fc, FILE *out,
			    struct meter *progress)
{
	unsigned problems = 0;
	size_t from, i, checked = 0;

	while ((from = take_chunk(fc)) < fc->nr) {
		size_t to = fc->next ? from + CHUNK : fc->nr;
		for (i = from; i < to && i < fc->nr; i++) {
			problems += check_one(&fc->items[i], out);
			meter_update(progress, taken_so_far(fc, ++checked));
		}
	}
	return problems;
}

static FILE *child_out;

/* In the forked copy: a fatal error goes to the parent, nothing else runs. */
static NORETURN void die_in_child(const char *err, va_list params)
{
	fputs("fatal ", child_out);
	vfprintf(child_out, err, params);
	fputc('\n', child_out);
	fflush(child_out);
	_exit(128);
}

static NORETURN void run_child(struct file_checks *fc)
{
	int signals[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(signals); i++)
		signal(signals[i], SIG_DFL);
	set_die_routine(die_in_child);
	if (fc->also)
		fc->also(child_out, fc->also_data);
	check_taken(fc, child_out, NULL);
	fputs("done\n", child_out);
	_exit(fflush(child_out) || ferror(child_out) ? 1 : 0);
}

static size_t split_min(void)
{
	const char *env = getenv("CINNABAR_TEST_FSCK_SPLIT");
	return env ? strtoul(env, NULL, 10) : DEFAULT_SPLIT;
}

/* The counter of revisions taken, shared with the forked copy. */
static size_t *shared_counter(void)
{
	void *p = mmap(NULL, sizeof(size_t), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*(size_t *)p = 0;
	return p;
}

void file_checks_start(struct file_checks *fc, FILE *out,
		       void (*also)(FILE *out, void *data), void *data)
{
	fc->problems = 0;
	fc->child = 0;
	fc->next = NULL;
	fc->done = 0;
	fc->also = also;
	fc->also_data = data;
	QSORT(fc->items, fc->nr, file_check_cmp);
	if (fc->nr < 2 || fc->nr < split_min())
		return;
	fflush(out);
	fflush(stderr);
	child_out = tmpfile();
	if (!child_out)
		return;
	fc->next = shared_counter();
	if (fc->next)
		fc->child = fork();
	if (!fc->child) {
		if (fc->next)
			run_child(fc);
		fclose(child_out);
		return;
	}
	if (fc->child < 0) {
		fc->child = 0;
		munmap(fc->next, sizeof(size_t));
		fc->next = NULL;
		fclose(child_out);
		return;
	}
	fc->child_out = child_out;
	fc->also = NULL;	/* done by the other process */
}

/* Copy the child's problem lines; die as it did if it died. */
static unsigned collect_child(struct file_checks *fc, FILE *out)
{
	struct strbuf line = STRBUF_INIT;
	unsigned problems = 0;
	int status, done = 0;

	while (waitpid(fc->child, &status, 0) < 0)
		if (errno != EINTR)
			die_errno("cannot wait for the file check process");
	rewind(fc->child_out);
	while (strbuf_getline_lf(&line, fc->child_out) != EOF) {
		const char *rest;
		if (skip_prefix(line.buf, "problem ", &rest)) {
			answer_message(out, "problem", rest, strlen(rest));
			problems++;
		} else if (skip_prefix(line.buf, "unlike-hg ", &rest)) {
			answer_message(out, "unlike-hg", rest, strlen(rest));
		} else if (skip_prefix(line.buf, "fatal ", &rest)) {
			die("%s", rest);
		} else if (!strcmp(line.buf, "done")) {
			done = 1;
		}
	}
	fclose(fc->child_out);
	strbuf_release(&line);
	if (!done || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the process checking file revisions failed");
	return problems;
}

unsigned file_checks_finish(struct file_checks *fc, FILE *out)
{
	struct meter *progress = meter_start(_("Checking files"), fc->nr,
					     NULL);
	size_t i;

	fc->problems += check_taken(fc, out, progress);
	/* The meter ends when both processes did, on the count of both. */
	if (fc->child)
		fc->problems += collect_child(fc, out);
	fc->child = 0;
	meter_update(progress, fc->nr);
	meter_stop(&progress);
	if (fc->also)
		fc->also(out, fc->also_data);
	if (fc->next)
		munmap(fc->next, sizeof(size_t));
	fc->next = NULL;
	for (i = 0; i < fc->nr; i++)
		free(fc->items[i].path);
	FREE_AND_NULL(fc->items);
	fc->nr = fc->alloc = 0;
	return fc->problems;
}
