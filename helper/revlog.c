/* Revlogs: see revlog.h. */
#include "libgit.h"
#include <zlib.h>
#include <zstd.h>
#include "hg-delta.h"
#include "revlog.h"

#define ENTRY_SIZE 64
#define FLAG_INLINE (1U << 16)
#define FLAG_GENERALDELTA (1U << 17)
/*
 * revlog_text's bounds (see revlog.h): the bytes of texts kept for later
 * deltas; the work a revision costs (its text's length and a fixed part
 * for reading its chunk), the work each revision built earns and the
 * work allowed before any is earned.
 */
#define KEPT_BYTES (64 << 20)
#define CHUNK_COST 64
#define WORK_EARNED 16
#define WORK_START (64 << 20)
#define WORK_MAX ((uint64_t)1 << 62)

/* revlog_text's state. */
struct revlog_texts {
	uint32_t turn;		/* the revision it builds next */
	/* Per revision: the deltas against it still to build, its text. */
	uint32_t *pending;
	struct strbuf **kept;	/* while pending, if there was room; or NULL */
	size_t kept_bytes;
	struct strbuf last;	/* the last text built, when pending, not kept */
	int64_t last_rev;	/* its revision, or -1 */
	uint64_t chunks;	/* chunks read, for GIT_CINNABAR_TRACE */
	uint64_t work;		/* what it may still spend */
	uint32_t *chain;	/* the revisions a text is built from */
	size_t chain_alloc;
	struct strbuf delta, next;
};

static void read_at(int fd, void *buf, size_t len, uint64_t pos,
		    const char *name)
{
	ssize_t n = pread_in_full(fd, buf, len, pos);
	if (n < 0)
		die_errno("cannot read the %s", name);
	if ((size_t)n != len)
		die("the %s ends early (truncated stream)", name);
}

void revlog_open(struct revlog *rl, const char *name, int fd,
		 const struct revlog_extent *index,
		 const struct revlog_extent *data)
{
	unsigned char hdr[4];
	uint32_t header;

	memset(rl, 0, sizeof(*rl));
	rl->name = xstrdup(name);
	rl->fd = fd;
	rl->index_start = index->offset;
	rl->index_size = index->size;
	if (!rl->index_size)
		return;	/* an empty revlog */
	read_at(fd, hdr, 4, rl->index_start, name);
	header = get_be32(hdr);
	if ((header & 0xffff) != 1)
		die("the %s is a revlog of version %u, which we do not read",
		    name, header & 0xffff);
	if (header & ~(FLAG_INLINE | FLAG_GENERALDELTA) & ~0xffffU)
		die("the %s has revlog features %#x we do not read", name,
		    header >> 16);
	rl->is_inline = !!(header & FLAG_INLINE);
	rl->generaldelta = !!(header & FLAG_GENERALDELTA);
	if (rl->is_inline) {
		rl->data_start = rl->index_start;
		rl->data_size = rl->index_size;
		return;
	}
	if (rl->index_size % ENTRY_SIZE)
		die("the %s has a size that is not a whole number of entries "
		    "(corrupt stream)", name);
	rl->data_start = data->offset;
	rl->data_size = data->size;
}

static void texts_free(struct revlog *rl)
{
	struct revlog_texts *t = rl->texts;
	uint32_t rev;

	if (!t)
		return;
	if (getenv("GIT_CINNABAR_TRACE"))
		fprintf(stderr, "cinnabar-helper: revlog: %u texts of the %s "
			"built from %"PRIuMAX" chunks\n", t->turn, rl->name,
			(uintmax_t)t->chunks);
	for (rev = 0; rev < rl->nr; rev++) {
		if (t->kept[rev])
			strbuf_release(t->kept[rev]);
		free(t->kept[rev]);
	}
	free(t->kept);
	free(t->pending);
	free(t->chain);
	strbuf_release(&t->last);
	strbuf_release(&t->delta);
	strbuf_release(&t->next);
	FREE_AND_NULL(rl->texts);
}

void revlog_release(struct revlog *rl)
{
	texts_free(rl);
	free(rl->entries);
	free(rl->name);
	memset(rl, 0, sizeof(*rl));
	rl->fd = -1;
}

static int32_t get_rev(const unsigned char *p)
{
	return (int32_t)get_be32(p);
}

static void check_entry(struct revlog *rl, const struct revlog_entry *e,
			uint32_t rev, unsigned flags)
{
	const char *node = hg_oid_to_hex(&e->node);
	uint64_t expected = rev ? rl->entries[rev - 1].offset +
				  rl->entries[rev - 1].chunk_len : 0;

	if (flags)
		die("revision %s of the %s has flags %#x we do not read",
		    node, rl->name, flags);
	if (e->offset != expected)
		die("revision %s of the %s does not follow the one before it "
		    "(corrupt stream)", node, rl->name);
	if (e->base < 0 || (uint32_t)e->base > rev)
		die("revision %s of the %s has a delta base past it "
		    "(corrupt stream)", node, rl->name);
	if (e->p1 < -1 || e->p2 < -1 || (e->p1 >= 0 && (uint32_t)e->p1 >= rev) ||
	    (e->p2 >= 0 && (uint32_t)e->p2 >= rev))
		die("revision %s of the %s has a parent past it "
		    "(corrupt stream)", node, rl->name);
	if (e->link < 0)
		die("revision %s of the %s has no changeset (corrupt stream)",
		    node, rl->name);
	if (e->text_len > REVLOG_MAX_TEXT)
		die("revision %s of the %s states a text of %u bytes, more than "
		    "a changegroup can carry (corrupt stream)", node, rl->name,
		    e->text_len);
}

static void parse_entry(struct revlog *rl, const unsigned char *p,
			struct revlog_entry *e)
{
	uint64_t offset_flags = get_be64(p);
	uint32_t rev = rl->nr;

	e->offset = rev ? offset_flags >> 16 : 0;
	e->chunk_len = get_be32(p + 8);
	e->text_len = get_be32(p + 12);
	e->base = get_rev(p + 16);
	e->link = get_rev(p + 20);
	e->p1 = get_rev(p + 24);
	e->p2 = get_rev(p + 28);
	memcpy(e->node.hash, p + 32, HG_RAWSZ);
	check_entry(rl, e, rev, offset_flags & 0xffff);
}

/* Where revision `rev`'s chunk starts in the data (or inline index). */
static uint64_t chunk_pos(const struct revlog *rl, uint32_t rev)
{
	uint64_t pos = rl->entries[rev].offset;
	if (rl->is_inline)
		pos += (uint64_t)(rev + 1) * ENTRY_SIZE;
	return pos;
}

/* Read the entry of revision rl->nr; NULL at the end of the index. */
static const struct revlog_entry *read_entry(struct revlog *rl)
{
	unsigned char buf[ENTRY_SIZE];
	struct revlog_entry *e;
	uint64_t end;

	if (rl->next_pos == rl->index_size) {
		if (!rl->is_inline && rl->nr &&
		    chunk_pos(rl, rl->nr - 1) +
		    rl->entries[rl->nr - 1].chunk_len != rl->data_size)
			die("the data of the %s does not end where its index "
			    "says (corrupt stream)", rl->name);
		return NULL;
	}
	if (rl->nr == INT32_MAX)
		die("the %s has too many revisions", rl->name);
	if (rl->index_size - rl->next_pos < ENTRY_SIZE)
		die("the %s ends in the middle of an entry (truncated stream)",
		    rl->name);
	read_at(rl->fd, buf, ENTRY_SIZE, rl->index_start + rl->next_pos,
		rl->name);
	ALLOC_GROW(rl->entries, rl->nr + 1, rl->alloc);
	e = &rl->entries[rl->nr];
	parse_entry(rl, buf, e);
	end = chunk_pos(rl, rl->nr) + e->chunk_len;
	if (end > rl->data_size)
		die("revision %s of the %s goes past the end of its data "
		    "(truncated stream)", hg_oid_to_hex(&e->node), rl->name);
	rl->next_pos = rl->is_inline ? end : rl->next_pos + ENTRY_SIZE;
	rl->nr++;
	return e;
}

const struct revlog_entry *revlog_next(struct revlog *rl)
{
	if (rl->next_rev == rl->nr && !read_entry(rl))
		return NULL;
	return &rl->entries[rl->next_rev++];
}

int revlog_is_full(const struct revlog *rl, uint32_t rev)
{
	return (uint32_t)rl->entries[rev].base == rev;
}

uint32_t revlog_delta_parent(const struct revlog *rl, uint32_t rev)
{
	if (revlog_is_full(rl, rev))
		BUG("revision %u is a full text", rev);
	return rl->generaldelta ? (uint32_t)rl->entries[rev].base : rev - 1;
}

/*
 * The most a chunk may decompress to: its text's length for a full text;
 * for a delta, the text's length plus a hunk header per byte of the base
 * and one (hunks do not overlap, so there are at most that many), and no
 * more than a changegroup chunk carries (a delta is sent as it is).
 */
static size_t chunk_limit(const struct revlog *rl, uint32_t rev)
{
	const struct revlog_entry *e = &rl->entries[rev];
	uint64_t base_len, limit;

	if (revlog_is_full(rl, rev))
		return e->text_len;
	base_len = rl->entries[revlog_delta_parent(rl, rev)].text_len;
	limit = e->text_len + 12 * (base_len + 1);
	return limit < REVLOG_MAX_TEXT ? limit : REVLOG_MAX_TEXT;
}

static NORETURN void too_large(const struct revlog *rl, uint32_t rev)
{
	die("revision %s of the %s decompresses past its stated length "
	    "(corrupt stream)", hg_oid_to_hex(&rl->entries[rev].node),
	    rl->name);
}

static NORETURN void corrupt(const struct revlog *rl, uint32_t rev,
			     const char *what)
{
	die("revision %s of the %s is not valid %s (corrupt stream)",
	    hg_oid_to_hex(&rl->entries[rev].node), rl->name, what);
}

static void inflate_chunk(const struct revlog *rl, uint32_t rev,
			  const struct strbuf *in, size_t limit,
			  struct strbuf *out)
{
	z_stream z;
	unsigned char buf[65536];
	int ret;

	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		die("cannot start zlib");
	z.next_in = (unsigned char *)in->buf;
	z.avail_in = in->len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		ret = inflate(&z, Z_NO_FLUSH);
		if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
			inflateEnd(&z);
			corrupt(rl, rev, "zlib data");
		}
		if (out->len + (sizeof(buf) - z.avail_out) > limit)
			too_large(rl, rev);
		strbuf_add(out, buf, sizeof(buf) - z.avail_out);
		if (ret == Z_BUF_ERROR && !z.avail_in)
			corrupt(rl, rev, "zlib data");
	} while (ret != Z_STREAM_END);
	inflateEnd(&z);
	if (z.avail_in)
		corrupt(rl, rev, "zlib data");
}

static void unzstd_chunk(const struct revlog *rl, uint32_t rev,
			 const struct strbuf *in, size_t limit,
			 struct strbuf *out)
{
	/* One context for every chunk: making one costs more than a chunk. */
	static ZSTD_DStream *d;
	ZSTD_inBuffer input = { in->buf, in->len, 0 };
	char buf[65536];
	size_t ret;
	unsigned long long stated = ZSTD_getFrameContentSize(in->buf, in->len);

	if (stated != ZSTD_CONTENTSIZE_UNKNOWN &&
	    stated != ZSTD_CONTENTSIZE_ERROR && stated > limit)
		too_large(rl, rev);
	if (!d && !(d = ZSTD_createDStream()))
		die("out of memory for zstd");
	ZSTD_initDStream(d);
	do {
		ZSTD_outBuffer output = { buf, sizeof(buf), 0 };
		ret = ZSTD_decompressStream(d, &output, &input);
		if (ZSTD_isError(ret))
			corrupt(rl, rev, "zstd data");
		if (out->len + output.pos > limit)
			too_large(rl, rev);
		strbuf_add(out, buf, output.pos);
		if (ret && input.pos == input.size && !output.pos)
			corrupt(rl, rev, "zstd data");
	} while (ret);
	if (input.pos != input.size)
		corrupt(rl, rev, "zstd data");
}

/*
 * The length of the text revision `rev`'s chunk `chunk` makes: its own for
 * a full text, what its hunks make of the base's stated length for a
 * delta (which, checked for every revision in turn, is the base's true
 * length).
 */
static uint64_t text_len(const struct revlog *rl, uint32_t rev,
			 const struct strbuf *chunk)
{
	uint32_t base;
	size_t len;

	if (revlog_is_full(rl, rev))
		return chunk->len;
	base = revlog_delta_parent(rl, rev);
	if (hg_delta_result_len(chunk->buf, chunk->len,
				rl->entries[base].text_len, &len))
		corrupt(rl, rev, "delta");
	return len;
}

void revlog_chunk(struct revlog *rl, uint32_t rev, struct strbuf *out)
{
	static struct strbuf raw = STRBUF_INIT;
	const struct revlog_entry *e = &rl->entries[rev];
	size_t limit = chunk_limit(rl, rev);

	strbuf_reset(out);
	strbuf_reset(&raw);
	strbuf_grow(&raw, e->chunk_len);
	read_at(rl->fd, raw.buf, e->chunk_len,
		rl->data_start + chunk_pos(rl, rev), rl->name);
	strbuf_setlen(&raw, e->chunk_len);
	if (!raw.len)
		;
	else if (raw.buf[0] == '\0' || raw.buf[0] == 'u') {
		size_t skip = raw.buf[0] == 'u';
		if (raw.len - skip > limit)
			too_large(rl, rev);
		strbuf_add(out, raw.buf + skip, raw.len - skip);
	} else if (raw.buf[0] == 'x') {
		inflate_chunk(rl, rev, &raw, limit, out);
	} else if (raw.buf[0] == '\x28') {
		unzstd_chunk(rl, rev, &raw, limit, out);
	} else {
		die("revision %s of the %s has a compression we do not know "
		    "(%#x)", hg_oid_to_hex(&e->node), rl->name,
		    (unsigned char)raw.buf[0]);
	}
	if (text_len(rl, rev, out) != e->text_len)
		die("revision %s of the %s is not of its stated length "
		    "(corrupt stream)", hg_oid_to_hex(&e->node), rl->name);
	if (raw.alloc > (1 << 24))
		strbuf_release(&raw);
}

/*
 * Start building texts: read the rest of the index, and count the deltas
 * against each revision.
 */
static struct revlog_texts *texts_start(struct revlog *rl)
{
	struct revlog_texts *t = xcalloc(1, sizeof(*t));
	uint32_t rev;

	while (read_entry(rl))
		;
	CALLOC_ARRAY(t->pending, rl->nr);
	CALLOC_ARRAY(t->kept, rl->nr);
	for (rev = 0; rev < rl->nr; rev++)
		if (!revlog_is_full(rl, rev))
			t->pending[revlog_delta_parent(rl, rev)]++;
	t->work = WORK_START;
	t->last_rev = -1;
	strbuf_init(&t->last, 0);
	strbuf_init(&t->delta, 0);
	strbuf_init(&t->next, 0);
	return t;
}

static uint64_t chunk_cost(const struct revlog *rl, uint32_t rev)
{
	return (uint64_t)rl->entries[rev].text_len + CHUNK_COST;
}

static void spend(struct revlog *rl, uint32_t rev)
{
	struct revlog_texts *t = rl->texts;
	uint64_t cost = chunk_cost(rl, rev);

	if (cost > t->work)
		die("the %s has delta chains that would take too long to "
		    "rebuild (corrupt stream)", rl->name);
	t->work -= cost;
}

/* Keep `text`, revision `rev`'s, when a delta still to build needs it. */
static void keep(struct revlog *rl, uint32_t rev, const struct strbuf *text)
{
	struct revlog_texts *t = rl->texts;
	struct strbuf *kept;

	if (!t->pending[rev] || t->kept[rev] ||
	    t->kept_bytes + text->len > KEPT_BYTES)
		return;
	kept = t->kept[rev] = xmalloc(sizeof(*kept));
	strbuf_init(kept, text->len);
	strbuf_addbuf(kept, text);
	t->kept_bytes += kept->alloc;
}

/* A delta against `rev` was built: let its text go after the last one. */
static void release(struct revlog *rl, uint32_t rev)
{
	struct revlog_texts *t = rl->texts;
	struct strbuf *kept = t->kept[rev];

	if (--t->pending[rev] || !kept)
		return;
	t->kept_bytes -= kept->alloc;
	strbuf_release(kept);
	FREE_AND_NULL(t->kept[rev]);
}

/* Revision `rev`'s text when kept or built last, else NULL. */
static const struct strbuf *held_text(const struct revlog *rl, uint32_t rev)
{
	const struct revlog_texts *t = rl->texts;

	if (t->kept[rev])
		return t->kept[rev];
	return t->last_rev == rev ? &t->last : NULL;
}

/*
 * Hold `text`, revision `rev`'s, for the deltas against it still to
 * build: kept while there is room, else as the last text built.
 */
static void hold(struct revlog *rl, uint32_t rev, const struct strbuf *text)
{
	struct revlog_texts *t = rl->texts;

	keep(rl, rev, text);
	if (!t->pending[rev] || t->kept[rev])
		return;
	strbuf_reset(&t->last);
	strbuf_addbuf(&t->last, text);
	t->last_rev = rev;
}

/* Apply revision `rev`'s delta to its base's text in `text`. */
static void apply_chunk(struct revlog *rl, uint32_t rev, struct strbuf *text)
{
	struct revlog_texts *t = rl->texts;

	revlog_chunk(rl, rev, &t->delta);
	strbuf_reset(&t->next);
	if (hg_delta_apply(text->buf, text->len, t->delta.buf, t->delta.len,
			   &t->next))
		corrupt(rl, rev, "delta");
	strbuf_swap(text, &t->next);
}

/*
 * The revisions whose chunks make `rev`'s text, `rev` first, ending with a
 * full text or a delta against a held text; each paid for.
 */
static size_t text_chain(struct revlog *rl, uint32_t rev)
{
	struct revlog_texts *t = rl->texts;
	size_t nr = 0;

	for (;;) {
		spend(rl, rev);
		t->chunks++;
		ALLOC_GROW(t->chain, nr + 1, t->chain_alloc);
		t->chain[nr++] = rev;
		if (revlog_is_full(rl, rev) ||
		    held_text(rl, revlog_delta_parent(rl, rev)))
			return nr;
		rev = revlog_delta_parent(rl, rev);
	}
}

/* Build revision `rev`'s text into `out`, keeping what later ones need. */
static void build_text(struct revlog *rl, uint32_t rev, struct strbuf *out)
{
	struct revlog_texts *t = rl->texts;
	size_t nr = text_chain(rl, rev);
	uint32_t start = t->chain[--nr];

	strbuf_reset(out);
	if (revlog_is_full(rl, start)) {
		revlog_chunk(rl, start, out);
	} else {
		uint32_t base = revlog_delta_parent(rl, start);
		strbuf_addbuf(out, held_text(rl, base));
		apply_chunk(rl, start, out);
	}
	while (nr--) {
		keep(rl, start, out);
		start = t->chain[nr];
		apply_chunk(rl, start, out);
	}
}

void revlog_text(struct revlog *rl, uint32_t rev, struct strbuf *out)
{
	struct revlog_texts *t;

	if (!rl->texts && !rev)
		rl->texts = texts_start(rl);
	t = rl->texts;
	if (!t || rev != t->turn)
		BUG("revlog_text: revision %u out of turn", rev);
	t->turn++;
	t->work += WORK_EARNED * chunk_cost(rl, rev);
	if (t->work > WORK_MAX)
		t->work = WORK_MAX;
	build_text(rl, rev, out);
	if (!revlog_is_full(rl, rev))
		release(rl, revlog_delta_parent(rl, rev));
	hold(rl, rev, out);
	if (t->turn == rl->nr)
		texts_free(rl);	/* the last one: nothing is kept */
}
