/*
 * Input streams.
 *
 * Every byte the helper imports comes through a `struct stream`: a pull
 * interface (`stream_read`) over a source (a file descriptor, a block stream
 * from the Python side, an HTTP response) possibly wrapped in a decompressor
 * (zlib, zstd, bzip2). Parsers only ever call stream_read/stream_read_exact,
 * so they do not know where the bytes come from.
 */
#ifndef CINNABAR_INPUT_STREAM_H
#define CINNABAR_INPUT_STREAM_H

struct stream_idle;

struct stream {
	/* Read at most len bytes; return 0 at end of data. Dies on error. */
	size_t (*read)(struct stream *s, void *buf, size_t len);
	void (*release)(struct stream *s);
	void *data;
	/* Bytes handed out so far, for error messages and progress. */
	uint64_t offset;
	/*
	 * Hand `idle` (stream_set_idle) to the streams this one reads from;
	 * a file descriptor stream keeps it. NULL: no waiting to fill.
	 */
	void (*set_idle)(struct stream *s, struct stream_idle *idle);
};

size_t stream_read(struct stream *s, void *buf, size_t len);
/* Read exactly len bytes, or die saying the data ended early. */
void stream_read_exact(struct stream *s, void *buf, size_t len);
/* Read exactly len bytes, or return -1 if the data ends first. */
int stream_try_read_exact(struct stream *s, void *buf, size_t len);
void stream_release(struct stream *s);

/*
 * Work to do while a stream waits for its bytes (the server is slow to
 * send them), owned by whoever has the work (embedded in its state:
 * container_of): `work` is called, until the bytes come or it returns
 * 0, about every millisecond while it returns 1 (work remains that
 * cannot be done yet), at once again while it returns
 * STREAM_IDLE_MORE_NOW (work remains that can be: a piece at a time,
 * so that the bytes, when they come, are read soon).
 */
struct stream_idle {
	int (*work)(struct stream_idle *idle);
};
#define STREAM_IDLE_MORE_NOW 2

/*
 * Do `idle`'s work while `s` waits for the file descriptor it reads from,
 * through the decompressors and other streams between them (NULL for no
 * more work). Until it is set to NULL again, `idle` must outlive the
 * stream.
 */
void stream_set_idle(struct stream *s, struct stream_idle *idle);
/*
 * The `set_idle` of a stream whose `data` starts with the stream it reads
 * from (a decompressor's state, a bundle's).
 */
void stream_pass_idle(struct stream *s, struct stream_idle *idle);

/* A plain file descriptor (not closed on release). */
void stream_init_fd(struct stream *s, int fd);
/*
 * A file read from its start with pread, leaving the descriptor's offset
 * alone (another stream, or a writer, may use it): not closed on release,
 * and no idle work (the bytes are there).
 */
void stream_init_pread(struct stream *s, int fd);
/* A file; dies with a message naming it if it cannot be opened. */
void stream_init_file(struct stream *s, const char *path);
/*
 * A block stream read from `in` (the helper's command input): blocks of
 * "<len>\n<len bytes>", ended by a block of length 0 (see PROTOCOL.md).
 * On release, the rest of the block stream is read and dropped, so that the
 * next command is read from the right place.
 */
void stream_init_blocks(struct stream *s, FILE *in);

/* Decompressors reading from `inner` (which the new stream takes over). */
void stream_init_zlib(struct stream *s, struct stream *inner);
void stream_init_zstd(struct stream *s, struct stream *inner);
/* bzip2; if `truncated`, the stream lacks its "BZ" magic (HG10BZ). */
void stream_init_bz2(struct stream *s, struct stream *inner, int truncated);
/* `len` bytes already read from `inner`, then the rest of `inner`. */
void stream_init_prefixed(struct stream *s, struct stream *inner,
			  const char *prefix, size_t len);

/* `len` bytes at `buf`, freed on release when `owned` (xmalloc'ed). */
void stream_init_buf(struct stream *s, const char *buf, size_t len, int owned);
/*
 * The next `len` bytes of `outer` (which stays the caller's, and must
 * outlive the new stream); dies if `outer` ends before them.
 */
void stream_init_limited(struct stream *s, struct stream *outer,
			 uint64_t len);
/* Read and drop `len` bytes, or die as stream_read_exact() does. */
void stream_skip(struct stream *s, uint64_t len);

#endif
