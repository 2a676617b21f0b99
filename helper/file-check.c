/* Checking the ids of file revisions, maybe in two processes: see file-check.h. */
#include "cache.h"
#include "progress.h"
#include "hg-id.h"
#include "file.h"
#include "import.h"
#include "file-check.h"

struct file_check {
	struct hg_oid node, a, b, manifest;
	struct object_id blob;
	char *path;
	size_t order;
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
		     const struct object_id *blob)
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
	for (i = 0; i < len; i++)
		if (c->path[i] == '\n')
			c->path[i] = ' ';	/* one line per problem */
}

/* Whether some pair of candidate parents gives the revision's id. */
static int id_matches(const struct file_check *c, const struct strbuf *text)
{
	const struct hg_oid *tries[][2] = {
		{ &c->a, &c->b }, { &c->a, &hg_null_oid },
		{ &c->b, &hg_null_oid }, { &hg_null_oid, &hg_null_oid },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		struct hg_oid h;
		if (i && hg_oideq(tries[i][0], tries[i - 1][0]) &&
		    hg_oideq(tries[i][1], tries[i - 1][1]))
			continue;
		hg_hash(tries[i][0], tries[i][1], text->buf, text->len, &h);
		if (hg_oideq(&h, &c->node))
			return 1;
	}
	return 0;
}

/* Check items [from, to); return the number of problems written. */
static unsigned check_range(struct file_checks *fc, size_t from, size_t to,
			    FILE *out, struct progress *progress)
{
	struct strbuf text = STRBUF_INIT;
	unsigned problems = 0;
	size_t i;

	for (i = from; i < to; i++) {
		display_progress(progress, i - from + 1);
		const struct file_check *c = &fc->items[i];
		file_text(&c->node, &text);
		if (id_matches(c, &text))
			continue;
		fprintf(out, "problem file revision %s ('%s', in manifest "
			"%s): its blob %s and files-meta do not give that id "
			"(the blob or its metadata was changed)\n",
			hg_oid_to_hex(&c->node), c->path,
			hg_oid_to_hex(&c->manifest), oid_to_hex(&c->blob));
		problems++;
	}
	strbuf_release(&text);
	file_reset_cache();
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

static NORETURN void run_child(struct file_checks *fc, size_t from,
			       void (*also)(FILE *out))
{
	int signals[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(signals); i++)
		signal(signals[i], SIG_DFL);
	set_die_routine(die_in_child);
	check_range(fc, from, fc->nr, child_out, NULL);
	if (also)
		also(child_out);
	fputs("done\n", child_out);
	_exit(fflush(child_out) || ferror(child_out) ? 1 : 0);
}

static size_t split_min(void)
{
	const char *env = getenv("CINNABAR_TEST_FSCK_SPLIT");
	return env ? strtoul(env, NULL, 10) : DEFAULT_SPLIT;
}

void file_checks_start(struct file_checks *fc, FILE *out,
		       void (*also)(FILE *out))
{
	struct progress *progress = NULL;
	size_t split = fc->nr;

	fc->problems = 0;
	fc->child = 0;
	QSORT(fc->items, fc->nr, file_check_cmp);
	if (fc->nr >= 2 && fc->nr >= split_min()) {
		fflush(out);
		fflush(stderr);
		child_out = tmpfile();
		if (child_out) {
			split = 0;
			fc->child = fork();
			if (!fc->child)
				run_child(fc, split, also);
			if (fc->child < 0) {
				fc->child = 0;
				split = fc->nr;
				fclose(child_out);
			}
		}
	}
	fc->child_out = fc->child ? child_out : NULL;
	if (show_progress)
		progress = start_delayed_progress(_("Checking files"), split);
	fc->problems += check_range(fc, 0, split, out, progress);
	stop_progress(&progress);
	if (also && !fc->child)
		also(out);
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
			fprintf(out, "%s\n", line.buf);
			problems++;
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
	size_t i;

	if (fc->child)
		fc->problems += collect_child(fc, out);
	fc->child = 0;
	for (i = 0; i < fc->nr; i++)
		free(fc->items[i].path);
	FREE_AND_NULL(fc->items);
	fc->nr = fc->alloc = 0;
	return fc->problems;
}
