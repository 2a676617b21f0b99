/* The parsers' test entry point: see test-tool.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "delta.h"
#include "hg-id.h"
#include "hg-delta.h"
#include "block-text.h"
#include "input-stream.h"
#include "changegroup.h"
#include "bundle.h"
#include "revlog.h"
#include "manifest.h"
#include "words.h"
#include "test-tool.h"

static void read_all(FILE *in, struct strbuf *data)
{
	struct stream s;
	char buf[8192];
	size_t n;

	stream_init_blocks(&s, in);
	while ((n = stream_read(&s, buf, sizeof(buf))))
		strbuf_add(data, buf, n);
	stream_release(&s);
}

/* The number argument `arg` of `what`, at most `max`. */
static size_t size_arg(const char *arg, const char *what, size_t max)
{
	uintmax_t v;
	char *end;

	if (!arg || !*arg || !isdigit(*arg))
		die("test-tool %s needs a length", what);
	errno = 0;
	v = strtoumax(arg, &end, 10);
	if (*end || errno || v > max)
		die("test-tool %s: bad length '%s'", what, arg);
	return v;
}

static void add_hex(struct strbuf *out, const char *buf, size_t len)
{
	size_t i;

	if (!len)
		strbuf_addch(out, '-');
	for (i = 0; i < len; i++)
		strbuf_addf(out, "%02x", (unsigned char)buf[i]);
}

/*
 * hg-delta <base-len>: the input is the base then the delta; the result
 * the delta applied.  The same delta made a git delta must give the same
 * text (git's patch_delta), and hg_delta_result_len the same length.
 */
static void tool_hg_delta(const char **argv, const struct strbuf *in,
			  struct strbuf *result)
{
	size_t base_len = size_arg(argv[0], "hg-delta", in->len);
	const char *delta = in->buf + base_len;
	size_t delta_len = in->len - base_len, len;
	struct strbuf git = STRBUF_INIT;
	unsigned long git_len;
	void *text;

	if (hg_delta_apply(in->buf, base_len, delta, delta_len, result))
		die("malformed delta");
	if (hg_delta_result_len(delta, delta_len, base_len, &len) ||
	    len != result->len)
		BUG("hg_delta_result_len disagrees with hg_delta_apply");
	hg_delta_to_git(delta, delta_len, base_len, len, &git);
	/* patch_delta refuses deltas of less than 4 bytes: an empty text's. */
	if (len) {
		text = patch_delta(in->buf, base_len, git.buf, git.len,
				   &git_len);
		if (!text || git_len != len || memcmp(text, result->buf, len))
			BUG("hg_delta_to_git gives another text");
		free(text);
	}
	strbuf_release(&git);
}

static void add_block(const char *data, size_t len, void *cb_data)
{
	strbuf_add(cb_data, data, len);
}

/* block-text <base-len>: hg-delta's, through block texts. */
static void tool_block_text(const char **argv, const struct strbuf *in,
			    struct strbuf *result)
{
	size_t base_len = size_arg(argv[0], "block-text", in->len);
	struct block_text base = BLOCK_TEXT_INIT, text = BLOCK_TEXT_INIT;

	block_text_set(&base, in->buf, base_len);
	if (block_text_apply(&base, in->buf + base_len, in->len - base_len,
			     &text))
		die("malformed delta");
	block_text_each(&text, add_block, result);
	if (result->len != text.len)
		BUG("block text of %"PRIuMAX" bytes has blocks of %"PRIuMAX,
		    (uintmax_t)text.len, (uintmax_t)result->len);
	block_text_release(&base);
	block_text_release(&text);
}

/* A stream over the bytes of `buf`. */
struct buf_stream {
	const struct strbuf *buf;
	size_t pos;
};

static size_t buf_read(struct stream *s, void *out, size_t len)
{
	struct buf_stream *b = s->data;
	size_t n = b->buf->len - b->pos;

	if (n > len)
		n = len;
	memcpy(out, b->buf->buf + b->pos, n);
	b->pos += n;
	return n;
}

static void buf_release(struct stream *s UNUSED)
{
}

static void add_rest(struct strbuf *result, const struct buf_stream *b)
{
	strbuf_addf(result, "rest %"PRIuMAX"\n",
		    (uintmax_t)(b->buf->len - b->pos));
}

/*
 * cg-chunks: the chunks up to the empty one, a line each with the
 * payload in hex, then `rest <bytes after the empty chunk>`.
 */
static void tool_cg_chunks(const char **argv UNUSED, const struct strbuf *in,
			   struct strbuf *result)
{
	struct buf_stream b = { in, 0 };
	struct stream s = { buf_read, buf_release, &b, 0 };
	struct strbuf chunk = STRBUF_INIT;

	while (read_cg_chunk(&s, &chunk)) {
		add_hex(result, chunk.buf, chunk.len);
		strbuf_addch(result, '\n');
	}
	add_rest(result, &b);
	strbuf_release(&chunk);
}

/*
 * cg-revs <01|02|03>: a group of revision chunks up to the empty one, a
 * line each: node, p1, p2, delta base, changeset, the delta in hex; then
 * `rest <bytes>`.
 */
static void tool_cg_revs(const char **argv, const struct strbuf *in,
			 struct strbuf *result)
{
	int version = argv[0] ? changegroup_version(argv[0]) : 0;
	struct buf_stream b = { in, 0 };
	struct stream s = { buf_read, buf_release, &b, 0 };
	struct rev_chunk chunk = REV_CHUNK_INIT;
	struct hg_oid prev;
	int have_prev = 0;

	if (!version)
		die("test-tool cg-revs needs a changegroup version");
	while (read_rev_chunk(&s, version, have_prev ? &prev : NULL, &chunk)) {
		strbuf_addf(result, "%s ", hg_oid_to_hex(&chunk.node));
		strbuf_addf(result, "%s ", hg_oid_to_hex(&chunk.p1));
		strbuf_addf(result, "%s ", hg_oid_to_hex(&chunk.p2));
		strbuf_addf(result, "%s ", hg_oid_to_hex(&chunk.delta_base));
		strbuf_addf(result, "%s ", hg_oid_to_hex(&chunk.changeset));
		add_hex(result, chunk.delta, chunk.delta_len);
		strbuf_addch(result, '\n');
		hg_oidcpy(&prev, &chunk.node);
		have_prev = 1;
	}
	add_rest(result, &b);
	rev_chunk_release(&chunk);
}

/*
 * bundle: a bundle (bundle.h); a line per changegroup in it: its version,
 * then its bytes in hex (`-` for none).
 */
static void tool_bundle(const char **argv UNUSED, const struct strbuf *in,
			struct strbuf *result)
{
	struct buf_stream b = { in, 0 };
	struct stream raw = { buf_read, buf_release, &b, 0 }, *cg;
	struct strbuf data = STRBUF_INIT;
	struct bundle bundle;
	char buf[8192];
	size_t n;
	int version;

	bundle_open(&bundle, &raw, 0);
	while (bundle_next_changegroup(&bundle, &cg, &version)) {
		strbuf_reset(&data);
		while ((n = stream_read(cg, buf, sizeof(buf))))
			strbuf_add(&data, buf, n);
		strbuf_addf(result, "%d ", version);
		add_hex(result, data.buf, data.len);
		strbuf_addch(result, '\n');
	}
	bundle_check_end(&bundle);
	bundle_release(&bundle);
	strbuf_release(&data);
}

/*
 * revlog <index-len>: the input is the index then the data file (none
 * when inline); a line per revision: its entry (rev, base, link, p1, p2,
 * node, text length) and its full text in hex.
 */
static void tool_revlog(const char **argv, const struct strbuf *in,
			struct strbuf *result)
{
	size_t index_len = size_arg(argv[0], "revlog", in->len);
	struct revlog_extent index = { 0, index_len };
	struct revlog_extent data = { index_len, in->len - index_len };
	struct strbuf text = STRBUF_INIT;
	struct revlog rl;
	uint32_t rev;
	FILE *f = tmpfile();

	if (!f || fwrite(in->buf, 1, in->len, f) != in->len || fflush(f))
		die_errno("cannot write a temporary file");
	revlog_open(&rl, "revlog", fileno(f), &index, &data);
	/* All the entries first, as a stream clone reads its changelog. */
	while (revlog_next(&rl))
		;
	for (rev = 0; rev < rl.nr; rev++) {
		const struct revlog_entry *e = &rl.entries[rev];

		revlog_text(&rl, rev, &text);
		strbuf_addf(result, "%"PRIu32" %"PRId32" %"PRId32" %"PRId32
			    " %"PRId32" %s %"PRIu32" ", rev, e->base, e->link,
			    e->p1, e->p2, hg_oid_to_hex(&e->node), e->text_len);
		add_hex(result, text.buf, text.len);
		strbuf_addch(result, '\n');
	}
	revlog_release(&rl);
	strbuf_release(&text);
	fclose(f);
}

/* manifest: a line per manifest line: node, flag ('-' for none), path. */
static void tool_manifest(const char **argv UNUSED, const struct strbuf *in,
			  struct strbuf *result)
{
	const char *p = in->buf, *end = in->buf + in->len;
	struct manifest_line line;

	while (p < end) {
		if (manifest_line_parse(&p, end, &line))
			die("malformed manifest line at byte %"PRIuMAX,
			    (uintmax_t)(p - in->buf));
		strbuf_addf(result, "%s %c ", hg_oid_to_hex(&line.oid),
			    line.flag ? line.flag : '-');
		strbuf_add(result, line.path, line.path_len);
		strbuf_addch(result, '\n');
	}
}

/* words: the input a command line (no LF); each word, then a NUL. */
static void tool_words(const char **argv UNUSED, const struct strbuf *in,
		       struct strbuf *result)
{
	const char *word[MAX_WORDS + 1];
	struct strbuf buf = STRBUF_INIT;
	int i;

	split_words(in, &buf, word);
	for (i = 0; word[i]; i++) {
		strbuf_addstr(result, word[i]);
		strbuf_addch(result, '\0');
	}
	strbuf_release(&buf);
}

static const struct {
	const char *name;
	void (*fn)(const char **argv, const struct strbuf *in,
		   struct strbuf *result);
} parsers[] = {
	{ "hg-delta", tool_hg_delta },
	{ "block-text", tool_block_text },
	{ "cg-chunks", tool_cg_chunks },
	{ "cg-revs", tool_cg_revs },
	{ "bundle", tool_bundle },
	{ "revlog", tool_revlog },
	{ "manifest", tool_manifest },
	{ "words", tool_words },
};

void test_tool(const char **argv, FILE *in, struct strbuf *result)
{
	struct strbuf data = STRBUF_INIT;
	size_t i;

	if (!argv[0])
		die("test-tool needs a parser name");
	for (i = 0; i < ARRAY_SIZE(parsers); i++) {
		if (!strcmp(argv[0], parsers[i].name)) {
			read_all(in, &data);
			parsers[i].fn(argv + 1, &data, result);
			strbuf_release(&data);
			return;
		}
	}
	die("test-tool has no parser '%s'", argv[0]);
}
