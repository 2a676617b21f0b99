/* Input streams: see input-stream.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include <zlib.h>
#include <zstd.h>
#include <bzlib.h>
#include "input-stream.h"

size_t stream_read(struct stream *s, void *buf, size_t len)
{
	size_t n = len ? s->read(s, buf, len) : 0;
	s->offset += n;
	return n;
}

int stream_try_read_exact(struct stream *s, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		size_t n = stream_read(s, p, len);
		if (!n)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

void stream_read_exact(struct stream *s, void *buf, size_t len)
{
	if (stream_try_read_exact(s, buf, len))
		die("unexpected end of data at byte %"PRIuMAX
		    " (truncated or corrupt input)", (uintmax_t)s->offset);
}

void stream_release(struct stream *s)
{
	if (s->release)
		s->release(s);
	s->release = NULL;
	s->data = NULL;
}

void stream_set_idle(struct stream *s, struct stream_idle *idle)
{
	if (s->set_idle)
		s->set_idle(s, idle);
}

void stream_pass_idle(struct stream *s, struct stream_idle *idle)
{
	stream_set_idle((struct stream *)s->data, idle);
}

/* Looked at again this often while idle work remains but cannot be done. */
#define IDLE_POLL_MS 1

/* File descriptors. */

struct fd_stream {
	int fd;
	int close;
	struct stream_idle *idle;	/* work while waiting: input-stream.h */
};

/* Until `f` has bytes (or the end, or an error), do the idle work. */
static void wait_doing_idle_work(struct fd_stream *f)
{
	struct pollfd p = { .fd = f->fd, .events = POLLIN };
	int timeout = 0;

	while (!poll(&p, 1, timeout)) {
		int more = f->idle->work(f->idle);
		if (!more)
			return;
		timeout = more == STREAM_IDLE_MORE_NOW ? 0 : IDLE_POLL_MS;
	}
}

static size_t fd_read(struct stream *s, void *buf, size_t len)
{
	struct fd_stream *f = s->data;
	ssize_t n;

	if (f->idle)
		wait_doing_idle_work(f);
	n = xread(f->fd, buf, len);
	if (n < 0)
		die_errno("read error");
	return n;
}

static void fd_release(struct stream *s)
{
	struct fd_stream *f = s->data;
	if (f->close)
		close(f->fd);
	free(f);
}

static void fd_set_idle(struct stream *s, struct stream_idle *idle)
{
	struct fd_stream *f = s->data;
	f->idle = idle;
}

static void init_fd(struct stream *s, int fd, int close_it)
{
	struct fd_stream *f = xcalloc(1, sizeof(*f));
	f->fd = fd;
	f->close = close_it;
	memset(s, 0, sizeof(*s));
	s->read = fd_read;
	s->release = fd_release;
	s->data = f;
	s->set_idle = fd_set_idle;
}

void stream_init_fd(struct stream *s, int fd)
{
	init_fd(s, fd, 0);
}

/* A file read with pread from its own position (the bytes handed out). */
static size_t pread_read(struct stream *s, void *buf, size_t len)
{
	struct fd_stream *f = s->data;
	ssize_t n = pread(f->fd, buf, len, s->offset);

	while (n < 0 && (errno == EINTR || errno == EAGAIN))
		n = pread(f->fd, buf, len, s->offset);
	if (n < 0)
		die_errno("read error");
	return n;
}

void stream_init_pread(struct stream *s, int fd)
{
	init_fd(s, fd, 0);
	s->read = pread_read;
	s->set_idle = NULL;
}

void stream_init_file(struct stream *s, const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die_errno("cannot open '%s'", path);
	init_fd(s, fd, 1);
}

/* Block streams from the command input. */

struct block_stream {
	FILE *in;
	size_t left;	/* bytes left in the current block */
	int done;
};

static int next_block(struct block_stream *b)
{
	struct strbuf line = STRBUF_INIT;
	char *end;
	unsigned long len;

	if (strbuf_getline_lf(&line, b->in) == EOF)
		die("unexpected end of input in a block stream");
	len = strtoul(line.buf, &end, 10);
	if (!line.len || *end)
		die("malformed block header '%s'", line.buf);
	strbuf_release(&line);
	b->left = len;
	if (!len)
		b->done = 1;
	return !b->done;
}

static size_t block_read(struct stream *s, void *buf, size_t len)
{
	struct block_stream *b = s->data;
	size_t n;

	if (b->done)
		return 0;
	if (!b->left && !next_block(b))
		return 0;
	if (len > b->left)
		len = b->left;
	n = fread(buf, 1, len, b->in);
	if (!n)
		die("unexpected end of input in a block stream");
	b->left -= n;
	return n;
}

static void block_release(struct stream *s)
{
	struct block_stream *b = s->data;
	char buf[8192];
	while (block_read(s, buf, sizeof(buf)))
		;
	free(b);
}

void stream_init_blocks(struct stream *s, FILE *in)
{
	struct block_stream *b = xcalloc(1, sizeof(*b));
	b->in = in;
	memset(s, 0, sizeof(*s));
	s->read = block_read;
	s->release = block_release;
	s->data = b;
}

/*
 * Decompressors. Each owns a copy of its inner stream, and checks the
 * compressed data to its very end: the end of stream marker, with its
 * checksum (zlib's adler32, bzip2's CRCs, zstd's optional checksum), is
 * read and verified when the decompressed data is read to its end, and
 * nothing may follow it: every source ends where its bundle ends.
 *
 * Their state, and that of the prefixed stream below, starts with that
 * inner stream, which is what waits for the bytes: stream_pass_idle.
 */

static void check_no_trailing_data(struct stream *inner, size_t left,
				   const char *what)
{
	char c;
	if (left || stream_read(inner, &c, 1))
		die("unexpected data after the end of the %s-compressed data "
		    "(corrupt input)", what);
}

#define INBUF_SIZE 65536

struct zlib_stream {
	struct stream inner;
	z_stream z;
	unsigned char in[INBUF_SIZE];
	int end;
};

static size_t zlib_read(struct stream *s, void *buf, size_t len)
{
	struct zlib_stream *zs = s->data;
	if (zs->end)
		return 0;
	zs->z.next_out = buf;
	zs->z.avail_out = len;
	while (zs->z.avail_out == len) {
		int ret;
		if (!zs->z.avail_in) {
			zs->z.avail_in = stream_read(&zs->inner, zs->in,
						     sizeof(zs->in));
			zs->z.next_in = zs->in;
			if (!zs->z.avail_in)
				die("the zlib-compressed data ends early (truncated input)");
		}
		ret = inflate(&zs->z, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			zs->end = 1;
			check_no_trailing_data(&zs->inner, zs->z.avail_in,
					       "zlib");
			break;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			die("corrupt zlib-compressed data (%s)",
			    zs->z.msg ? zs->z.msg : "error");
	}
	return len - zs->z.avail_out;
}

static void zlib_release(struct stream *s)
{
	struct zlib_stream *zs = s->data;
	inflateEnd(&zs->z);
	stream_release(&zs->inner);
	free(zs);
}

void stream_init_zlib(struct stream *s, struct stream *inner)
{
	struct zlib_stream *zs = xcalloc(1, sizeof(*zs));
	zs->inner = *inner;
	if (inflateInit(&zs->z) != Z_OK)
		die("cannot initialize zlib");
	memset(s, 0, sizeof(*s));
	s->read = zlib_read;
	s->release = zlib_release;
	s->set_idle = stream_pass_idle;
	s->data = zs;
}

struct zstd_stream {
	struct stream inner;
	ZSTD_DStream *d;
	ZSTD_inBuffer input;
	char in[INBUF_SIZE];
	int end;
};

static size_t zstd_read(struct stream *s, void *buf, size_t len)
{
	struct zstd_stream *zs = s->data;
	ZSTD_outBuffer out = { buf, len, 0 };
	while (!out.pos && !zs->end) {
		size_t ret;
		if (zs->input.pos == zs->input.size) {
			zs->input.size = stream_read(&zs->inner, zs->in,
						     sizeof(zs->in));
			zs->input.src = zs->in;
			zs->input.pos = 0;
			if (!zs->input.size)
				die("the zstd-compressed data ends early (truncated input)");
		}
		ret = ZSTD_decompressStream(zs->d, &out, &zs->input);
		if (ZSTD_isError(ret))
			die("corrupt zstd-compressed data (%s)",
			    ZSTD_getErrorName(ret));
		if (!ret) {
			zs->end = 1;
			check_no_trailing_data(&zs->inner, zs->input.size -
					       zs->input.pos, "zstd");
		}
	}
	return out.pos;
}

static void zstd_release(struct stream *s)
{
	struct zstd_stream *zs = s->data;
	ZSTD_freeDStream(zs->d);
	stream_release(&zs->inner);
	free(zs);
}

void stream_init_zstd(struct stream *s, struct stream *inner)
{
	struct zstd_stream *zs = xcalloc(1, sizeof(*zs));
	zs->inner = *inner;
	zs->d = ZSTD_createDStream();
	if (!zs->d || ZSTD_isError(ZSTD_initDStream(zs->d)))
		die("cannot initialize zstd");
	memset(s, 0, sizeof(*s));
	s->read = zstd_read;
	s->release = zstd_release;
	s->set_idle = stream_pass_idle;
	s->data = zs;
}

struct bz2_stream {
	struct stream inner;
	bz_stream bz;
	char in[INBUF_SIZE];
	int end;
};

static size_t bz2_read(struct stream *s, void *buf, size_t len)
{
	struct bz2_stream *bs = s->data;
	if (bs->end)
		return 0;
	bs->bz.next_out = buf;
	bs->bz.avail_out = len;
	while (bs->bz.avail_out == len) {
		int ret;
		if (!bs->bz.avail_in) {
			bs->bz.avail_in = stream_read(&bs->inner, bs->in,
						      sizeof(bs->in));
			bs->bz.next_in = bs->in;
			if (!bs->bz.avail_in)
				die("the bzip2-compressed data ends early (truncated input)");
		}
		ret = BZ2_bzDecompress(&bs->bz);
		if (ret == BZ_STREAM_END) {
			bs->end = 1;
			check_no_trailing_data(&bs->inner, bs->bz.avail_in,
					       "bzip2");
			break;
		}
		if (ret != BZ_OK)
			die("corrupt bzip2-compressed data (error %d)", ret);
	}
	return len - bs->bz.avail_out;
}

static void bz2_release(struct stream *s)
{
	struct bz2_stream *bs = s->data;
	BZ2_bzDecompressEnd(&bs->bz);
	stream_release(&bs->inner);
	free(bs);
}

void stream_init_bz2(struct stream *s, struct stream *inner, int truncated)
{
	struct bz2_stream *bs = xcalloc(1, sizeof(*bs));
	bs->inner = *inner;
	if (BZ2_bzDecompressInit(&bs->bz, 0, 0) != BZ_OK)
		die("cannot initialize bzip2");
	if (truncated) {
		/* The stream lacks its magic: start the input with it. */
		memcpy(bs->in, "BZ", 2);
		bs->bz.next_in = bs->in;
		bs->bz.avail_in = 2;
	}
	memset(s, 0, sizeof(*s));
	s->read = bz2_read;
	s->release = bz2_release;
	s->set_idle = stream_pass_idle;
	s->data = bs;
}

/* A stream that first returns some bytes already read, then `inner`. */
struct prefixed {
	struct stream inner;
	struct strbuf prefix;
	size_t pos;
};

static size_t prefixed_read(struct stream *s, void *buf, size_t len)
{
	struct prefixed *p = s->data;
	if (p->pos < p->prefix.len) {
		if (len > p->prefix.len - p->pos)
			len = p->prefix.len - p->pos;
		memcpy(buf, p->prefix.buf + p->pos, len);
		p->pos += len;
		return len;
	}
	return stream_read(&p->inner, buf, len);
}

static void prefixed_release(struct stream *s)
{
	struct prefixed *p = s->data;
	stream_release(&p->inner);
	strbuf_release(&p->prefix);
	free(p);
}

void stream_init_prefixed(struct stream *s, struct stream *inner,
				 const char *prefix, size_t len)
{
	struct prefixed *p = xcalloc(1, sizeof(*p));
	p->inner = *inner;
	strbuf_init(&p->prefix, len);
	strbuf_add(&p->prefix, prefix, len);
	memset(s, 0, sizeof(*s));
	s->read = prefixed_read;
	s->release = prefixed_release;
	s->set_idle = stream_pass_idle;
	s->data = p;
}


/* Bytes in memory. */

struct buf_stream {
	const char *buf;
	size_t len, pos;
	char *owned;
};

static size_t buf_read(struct stream *s, void *buf, size_t len)
{
	struct buf_stream *b = s->data;
	if (len > b->len - b->pos)
		len = b->len - b->pos;
	memcpy(buf, b->buf + b->pos, len);
	b->pos += len;
	return len;
}

static void buf_release(struct stream *s)
{
	struct buf_stream *b = s->data;
	free(b->owned);
	free(b);
}

void stream_init_buf(struct stream *s, const char *buf, size_t len, int owned)
{
	struct buf_stream *b = xcalloc(1, sizeof(*b));
	b->buf = buf;
	b->len = len;
	b->owned = owned ? (char *)buf : NULL;
	memset(s, 0, sizeof(*s));
	s->read = buf_read;
	s->release = buf_release;
	s->data = b;
}

/* The next bytes of another stream. */

struct limited {
	struct stream *outer;
	uint64_t left;
};

static size_t limited_read(struct stream *s, void *buf, size_t len)
{
	struct limited *l = s->data;
	size_t n;

	if (!l->left)
		return 0;
	if (len > l->left)
		len = l->left;
	n = stream_read(l->outer, buf, len);
	if (!n)
		die("unexpected end of data at byte %"PRIuMAX
		    " (truncated or corrupt input)", (uintmax_t)l->outer->offset);
	l->left -= n;
	return n;
}

static void limited_release(struct stream *s)
{
	free(s->data);
}

static void limited_set_idle(struct stream *s, struct stream_idle *idle)
{
	struct limited *l = s->data;
	stream_set_idle(l->outer, idle);
}

void stream_init_limited(struct stream *s, struct stream *outer,
			 uint64_t len)
{
	struct limited *l = xcalloc(1, sizeof(*l));
	l->outer = outer;
	l->left = len;
	memset(s, 0, sizeof(*s));
	s->read = limited_read;
	s->release = limited_release;
	s->set_idle = limited_set_idle;
	s->data = l;
}

void stream_skip(struct stream *s, uint64_t len)
{
	char buf[16384];

	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		stream_read_exact(s, buf, n);
		len -= n;
	}
}
