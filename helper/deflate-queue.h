/*
 * Deflating the objects of a pack, in place or on a second thread.
 *
 * Storing an object is: its id (SHA-1), maybe a delta against a base,
 * deflating that, then appending it to the pack. Deflating is a large part
 * of the CPU of a clone (doc/performance.md, "Writing objects"), and in
 * place it is all on the one thread that also does the rest. The pack
 * writer (store.c) may instead push the bytes to deflate, and go on with
 * the next objects while a worker thread deflates them in order; it pops
 * them back in the same order and appends them itself, and while it
 * waits for one it deflates the newest ones queued. Each object is
 * deflated by a stream reset for it, so the pack is byte for byte the one
 * deflating in place writes.
 *
 * The level an object is deflated at is the one asked for, except for
 * big objects that do not compress (already compressed or random data),
 * stored at level 0: see object_deflate(). At level 0 the stored blocks
 * are written without zlib's deflate (store.c asks for it for the
 * smallest objects).
 *
 * Only one thread (the pack writer's) may push, pop or stop; the worker
 * only reads what it is given and writes the job's output.
 */
#ifndef CINNABAR_DEFLATE_QUEUE_H
#define CINNABAR_DEFLATE_QUEUE_H

#include <zlib.h>
#include "strbuf.h"

/* The zlib streams of one thread, kept between objects. */
struct object_deflater {
	z_stream z, sample;
	int z_ready, z_level, sample_ready;
};

/*
 * Deflate `len` bytes at `in` at `level` (or 0, see above) into `out`
 * (reset first). Return 0, or -1 when zlib fails.
 */
int object_deflate(struct object_deflater *d, int level, const void *in,
		   size_t len, struct strbuf *out);
/*
 * The level object_deflate() uses for `len` bytes at `in` asked to
 * deflate at `*level`, into `*level` (the same, or 0 for big objects
 * that do not compress; a stream deflated in pieces passes its first).
 * Return 0, or -1 when zlib fails.
 */
int object_deflate_level(struct object_deflater *d, int *level,
			 const void *in, size_t len);
void object_deflater_release(struct object_deflater *d);

struct deflate_job {
	char *in;		/* freed by the worker once deflated */
	size_t len;
	int level;
	int failed;		/* zlib failed on it */
	struct strbuf out;	/* what deflating `in` made */
	void *entry, *base;	/* the pusher's, given back untouched */
};

/*
 * Objects bigger than this are not pushed (the queue would hold a copy
 * of them): deflate them in place once the queue is empty.
 */
#define DEFLATE_QUEUE_MAX_OBJECT (4UL << 20)

/*
 * Queue `len` bytes at `in` to be deflated at `level`, starting the
 * worker if need be: `in` is the queue's from now on when `owned`
 * (xmalloc'ed), else copied. Return 0, or -1 when the queue cannot take
 * them (full: pop first; too big; no worker on a single CPU, or in a
 * child process forked meanwhile): `in` is then still the caller's.
 */
int deflate_queue_push(char *in, size_t len, int owned, int level,
		       void *entry, void *base);

/*
 * Take the oldest job into `job` once deflated, waiting for it when
 * `wait`; the caller releases job->out. Return 0, or -1 when the queue is
 * empty (or, without `wait`, the oldest job is not deflated yet).
 */
int deflate_queue_pop(struct deflate_job *job, int wait);

/* How many jobs the pusher deflated itself, waiting for the worker. */
size_t deflate_queue_stolen(void);
/* Whether jobs are queued (deflated or not). */
int deflate_queue_pending(void);

/* Stop the worker, dropping the jobs queued. */
void deflate_queue_stop(void);

/*
 * Around fork(): `prepare` (the caller having popped every job) holds the
 * queue's lock through the fork; `parent` lets it go; `child` leaves the
 * child process without a worker (pushes fail there).
 */
void deflate_queue_atfork_prepare(void);
void deflate_queue_atfork_parent(void);
void deflate_queue_atfork_child(void);

#endif
