/* Compressing a file as Mercurial's bundles do: see compress.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "gettext.h"
#include "meter.h"
#include <zlib.h>
#include <zstd.h>
#include <bzlib.h>
#include "import.h"
#include "compress.h"

#define CHUNK 65536

/*
 * An encoder takes the input in pieces (`last` set on the final one, which
 * may be empty) and appends what it makes of them to `out`.
 */
struct encoder {
	void (*feed)(struct encoder *e, const char *buf, size_t len, int last,
		     struct strbuf *out);
	void (*release)(struct encoder *e);
	void *state;
};

static void none_feed(struct encoder *e UNUSED, const char *buf, size_t len,
		      int last UNUSED, struct strbuf *out)
{
	strbuf_add(out, buf, len);
}

static void zlib_feed(struct encoder *e, const char *buf, size_t len,
		      int last, struct strbuf *out)
{
	z_stream *z = e->state;
	int ret;

	z->next_in = (Bytef *)buf;
	z->avail_in = len;
	do {
		strbuf_grow(out, CHUNK);
		z->next_out = (Bytef *)out->buf + out->len;
		z->avail_out = CHUNK;
		ret = deflate(z, last ? Z_FINISH : Z_NO_FLUSH);
		if (ret == Z_STREAM_ERROR)
			die("zlib compression failed");
		strbuf_setlen(out, out->len + CHUNK - z->avail_out);
	} while (z->avail_in || (last && ret != Z_STREAM_END));
}

static void zlib_release(struct encoder *e)
{
	deflateEnd(e->state);
	free(e->state);
}

static void bzip2_feed(struct encoder *e, const char *buf, size_t len,
		       int last, struct strbuf *out)
{
	bz_stream *bz = e->state;
	int ret;

	bz->next_in = (char *)buf;
	bz->avail_in = len;
	do {
		strbuf_grow(out, CHUNK);
		bz->next_out = out->buf + out->len;
		bz->avail_out = CHUNK;
		ret = BZ2_bzCompress(bz, last ? BZ_FINISH : BZ_RUN);
		if (ret < 0)
			die("bzip2 compression failed (error %d)", ret);
		strbuf_setlen(out, out->len + CHUNK - bz->avail_out);
	} while (bz->avail_in || (last && ret != BZ_STREAM_END));
}

static void bzip2_release(struct encoder *e)
{
	BZ2_bzCompressEnd(e->state);
	free(e->state);
}

static void zstd_feed(struct encoder *e, const char *buf, size_t len,
		      int last, struct strbuf *out)
{
	ZSTD_inBuffer in = { buf, len, 0 };
	size_t left;

	do {
		ZSTD_outBuffer o;
		strbuf_grow(out, CHUNK);
		o.dst = out->buf + out->len;
		o.size = CHUNK;
		o.pos = 0;
		left = ZSTD_compressStream2(e->state, &o, &in,
					    last ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			die("zstd compression failed: %s",
			    ZSTD_getErrorName(left));
		strbuf_setlen(out, out->len + o.pos);
	} while (in.pos < in.size || (last && left));
}

static void zstd_release(struct encoder *e)
{
	ZSTD_freeCCtx(e->state);
}

static int encoder_init(struct encoder *e, const char *engine, off_t size)
{
	memset(e, 0, sizeof(*e));
	if (!strcmp(engine, "none")) {
		e->feed = none_feed;
	} else if (!strcmp(engine, "zlib")) {
		z_stream *z = xcalloc(1, sizeof(*z));
		if (deflateInit(z, Z_DEFAULT_COMPRESSION) != Z_OK)
			die("cannot start zlib compression");
		e->feed = zlib_feed;
		e->release = zlib_release;
		e->state = z;
	} else if (!strcmp(engine, "bzip2")) {
		bz_stream *bz = xcalloc(1, sizeof(*bz));
		if (BZ2_bzCompressInit(bz, 9, 0, 0) != BZ_OK)
			die("cannot start bzip2 compression");
		e->feed = bzip2_feed;
		e->release = bzip2_release;
		e->state = bz;
	} else if (!strcmp(engine, "zstd")) {
		ZSTD_CCtx *cctx = ZSTD_createCCtx();
		if (!cctx ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(
				cctx, ZSTD_c_compressionLevel, 3)) ||
		    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, size)))
			die("cannot start zstd compression");
		e->feed = zstd_feed;
		e->release = zstd_release;
		e->state = cctx;
	} else {
		return -1;
	}
	return 0;
}

static void encoder_release(struct encoder *e)
{
	if (e->release)
		e->release(e);
}

uintmax_t compress_file(const char *engine, const char *source,
			const char *dest)
{
	struct encoder e;
	struct strbuf buf = STRBUF_INIT, packed = STRBUF_INIT;
	struct meter *progress;
	struct stat st;
	uint64_t read_total = 0, written = 0;
	int in_fd;
	FILE *f;

	if (!engine || !source || !dest)
		die("compress needs an engine, a source file and a "
		    "destination file");
	in_fd = open(source, O_RDONLY);
	if (in_fd < 0 || fstat(in_fd, &st))
		die_errno("cannot read '%s'", source);
	if (encoder_init(&e, engine, st.st_size))
		die("unknown compression engine '%s' (none, zlib, bzip2, zstd)",
		    engine);
	f = fopen(dest, "ab");
	if (!f)
		die_errno("cannot open '%s'", dest);
	progress = meter_start(_("Compressing"), st.st_size, &read_total);
	strbuf_grow(&buf, CHUNK);
	for (;;) {
		ssize_t n = xread(in_fd, buf.buf, CHUNK);
		if (n < 0)
			die_errno("cannot read '%s'", source);
		strbuf_reset(&packed);
		e.feed(&e, buf.buf, n, !n, &packed);
		if (fwrite(packed.buf, 1, packed.len, f) != packed.len)
			die_errno("cannot write '%s'", dest);
		written += packed.len;
		read_total += n;
		meter_update(progress, read_total);
		if (!n)
			break;
	}
	meter_stop(&progress);
	if (fclose(f))
		die_errno("cannot write '%s'", dest);
	close(in_fd);
	encoder_release(&e);
	strbuf_release(&buf);
	strbuf_release(&packed);
	return written;
}
