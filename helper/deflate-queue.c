/* Deflating the objects of a pack: see deflate-queue.h. */
#include "git-compat-util.h"
#include "thread-utils.h"
#include "deflate-queue.h"

/*
 * Big objects that do not compress are stored at level 0, which costs a
 * copy, where even level 1 spends seconds per hundred megabytes for a few
 * bytes saved; git reads any level. Whether an object compresses is tried
 * on a few windows of it (start, middle, end) at level 1: unless they
 * shrink by more than 1/32 together, they are taken as incompressible.
 */
#define SAMPLE_FROM (1UL << 20)	/* smaller objects: the configured level */
#define SAMPLE_WINDOW 16384
#define SAMPLE_WINDOWS 3

/* 1 if the windows compress, 0 if not, -1 when zlib fails. */
static int compresses(struct object_deflater *d, const unsigned char *in,
		      size_t len)
{
	unsigned char out[SAMPLE_WINDOW + 1024];
	size_t i, total_in = 0, total_out = 0;

	if (!d->sample_ready) {
		if (deflateInit(&d->sample, Z_BEST_SPEED) != Z_OK)
			return -1;
		d->sample_ready = 1;
	}
	for (i = 0; i < SAMPLE_WINDOWS; i++) {
		size_t at = (len - SAMPLE_WINDOW) / (SAMPLE_WINDOWS - 1) * i;

		if (deflateReset(&d->sample) != Z_OK)
			return -1;
		d->sample.next_in = (Bytef *)in + at;
		d->sample.avail_in = SAMPLE_WINDOW;
		d->sample.next_out = out;
		d->sample.avail_out = sizeof(out);
		if (deflate(&d->sample, Z_FINISH) != Z_STREAM_END)
			return -1;
		total_in += SAMPLE_WINDOW;
		total_out += d->sample.total_out;
	}
	return total_out < total_in - total_in / 32;
}

int object_deflate_level(struct object_deflater *d, int *level,
			 const void *in, size_t len)
{
	int ret;

	if (len < SAMPLE_FROM || *level == Z_NO_COMPRESSION)
		return 0;
	ret = compresses(d, in, len);
	if (!ret)
		*level = Z_NO_COMPRESSION;
	return ret < 0 ? -1 : 0;
}

/*
 * `len` bytes at `in` as a zlib stream of stored blocks (RFC 1950; RFC
 * 1951, 3.2.4): what level 0 makes, without a zlib stream of its own
 * (one kept per level would be reset for each object, one switched
 * between levels set up again).
 */
static void store_uncompressed(const unsigned char *in, size_t len,
			       struct strbuf *out)
{
	unsigned long adler = adler32(0L, Z_NULL, 0);
	unsigned char hdr[5];

	strbuf_reset(out);
	strbuf_grow(out, len + len / 65535 * 5 + 11);
	/* Deflate, 32 kB window; the fastest level; a multiple of 31. */
	strbuf_add(out, "\x78\x01", 2);
	do {
		size_t n = len > 65535 ? 65535 : len;

		hdr[0] = n == len;	/* the last block; stored */
		hdr[1] = n & 0xff;
		hdr[2] = n >> 8;
		hdr[3] = ~n & 0xff;
		hdr[4] = (~n >> 8) & 0xff;
		strbuf_add(out, hdr, 5);
		strbuf_add(out, in, n);
		adler = adler32(adler, in, n);
		in += n;
		len -= n;
	} while (len);
	put_be32(hdr, adler);
	strbuf_add(out, hdr, 4);
}

/* A stream ready for an object at `level`: the one kept, when it fits. */
static int ready_stream(struct object_deflater *d, int level)
{
	if (d->z_ready && d->z_level != level) {
		deflateEnd(&d->z);
		d->z_ready = 0;
	}
	if (d->z_ready)
		return deflateReset(&d->z) == Z_OK ? 0 : -1;
	memset(&d->z, 0, sizeof(d->z));
	if (deflateInit(&d->z, level) != Z_OK)
		return -1;
	d->z_ready = 1;
	d->z_level = level;
	return 0;
}

int object_deflate(struct object_deflater *d, int level, const void *in,
		   size_t len, struct strbuf *out)
{
	if (object_deflate_level(d, &level, in, len))
		return -1;
	if (level == Z_NO_COMPRESSION) {
		store_uncompressed(in, len, out);
		return 0;
	}
	if (ready_stream(d, level))
		return -1;
	strbuf_reset(out);
	strbuf_grow(out, deflateBound(&d->z, len));
	d->z.next_in = (Bytef *)in;
	d->z.avail_in = len;
	d->z.next_out = (Bytef *)out->buf;
	d->z.avail_out = out->alloc - 1;
	if (deflate(&d->z, Z_FINISH) != Z_STREAM_END)
		return -1;
	strbuf_setlen(out, d->z.total_out);
	return 0;
}

void object_deflater_release(struct object_deflater *d)
{
	if (d->z_ready)
		deflateEnd(&d->z);
	if (d->sample_ready)
		deflateEnd(&d->sample);
	memset(d, 0, sizeof(*d));
}

/*
 * The queue: a ring of jobs. `pushed`, `deflated` and `popped` count the
 * jobs since the start; jobs [popped, deflated) are deflated, jobs
 * [deflated, pushed) wait for the worker. The pusher writes a slot only
 * once popped, the worker only the one at `deflated`: the counts, under
 * `lock`, say whose each slot is. At most QUEUE_JOBS jobs and QUEUE_BYTES
 * bytes to deflate are queued. A waiting worker is woken once WAKE_JOBS
 * jobs wait for it, or when the pusher waits; a waiting pusher once
 * WAKE_JOBS jobs (or all) are deflated: waking either for every object
 * (most are 100-byte tree deltas) cost more in system calls than it saved.
 */
#define QUEUE_JOBS 1024
#define QUEUE_BYTES (16UL << 20)
#define WAKE_JOBS 32

struct deflate_queue {
	pthread_mutex_t lock;
	pthread_cond_t more, done;
	pthread_t worker;
	struct object_deflater deflater;	/* the worker's */
	struct deflate_job ring[QUEUE_JOBS];
	size_t pushed, deflated, popped, bytes;
	size_t seen_deflated;	/* the pusher's last look at `deflated` */
	size_t wake_pusher_at;	/* when the pusher waits: `deflated` to reach */
	int running, stopping, worker_waiting, no_worker;
};

static struct deflate_queue queue = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* The worker's next job, NULL when told to stop: under `lock`. */
static struct deflate_job *next_job(struct deflate_queue *q)
{
	while (!q->stopping && q->deflated == q->pushed) {
		q->worker_waiting = 1;
		pthread_cond_wait(&q->more, &q->lock);
		q->worker_waiting = 0;
	}
	return q->stopping ? NULL : &q->ring[q->deflated % QUEUE_JOBS];
}

static void *deflate_worker(void *data)
{
	struct deflate_queue *q = data;
	struct deflate_job *job;

	pthread_mutex_lock(&q->lock);
	while ((job = next_job(q))) {
		pthread_mutex_unlock(&q->lock);
		job->failed = object_deflate(&q->deflater, job->level, job->in,
					     job->len, &job->out) < 0;
		FREE_AND_NULL(job->in);
		pthread_mutex_lock(&q->lock);
		q->deflated++;
		if (q->wake_pusher_at && q->deflated >= q->wake_pusher_at)
			pthread_cond_signal(&q->done);
	}
	pthread_mutex_unlock(&q->lock);
	object_deflater_release(&q->deflater);
	return NULL;
}

static int start_worker(struct deflate_queue *q)
{
	if (q->no_worker)
		return -1;
	if (online_cpus() < 2 ||
	    pthread_create(&q->worker, NULL, deflate_worker, q)) {
		q->no_worker = 1;
		return -1;
	}
	q->running = 1;
	return 0;
}

int deflate_queue_push(char *in, size_t len, int owned, int level,
		       void *entry, void *base)
{
	struct deflate_queue *q = &queue;
	struct deflate_job *job;

	if (len > DEFLATE_QUEUE_MAX_OBJECT ||
	    q->pushed - q->popped == QUEUE_JOBS ||
	    (q->bytes && q->bytes + len > QUEUE_BYTES) ||
	    (!q->running && start_worker(q)))
		return -1;
	job = &q->ring[q->pushed % QUEUE_JOBS];
	job->in = owned ? in : xmemdupz(in, len);
	job->len = len;
	job->level = level;
	job->failed = 0;
	strbuf_init(&job->out, 0);
	job->entry = entry;
	job->base = base;
	q->bytes += len;
	pthread_mutex_lock(&q->lock);
	q->pushed++;
	if (q->worker_waiting && q->pushed - q->deflated >= WAKE_JOBS)
		pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

int deflate_queue_pop(struct deflate_job *job, int wait)
{
	struct deflate_queue *q = &queue;

	if (q->popped == q->pushed)
		return -1;
	if (q->popped == q->seen_deflated) {
		pthread_mutex_lock(&q->lock);
		while (wait && q->popped == q->deflated) {
			if (q->worker_waiting)
				pthread_cond_signal(&q->more);
			q->wake_pusher_at = q->pushed - q->popped > WAKE_JOBS ?
					    q->popped + WAKE_JOBS : q->pushed;
			pthread_cond_wait(&q->done, &q->lock);
			q->wake_pusher_at = 0;
		}
		q->seen_deflated = q->deflated;
		pthread_mutex_unlock(&q->lock);
		if (q->popped == q->seen_deflated)
			return -1;
	}
	*job = q->ring[q->popped % QUEUE_JOBS];
	q->bytes -= job->len;
	q->popped++;
	return 0;
}

int deflate_queue_pending(void)
{
	return queue.popped != queue.pushed;
}

void deflate_queue_stop(void)
{
	struct deflate_queue *q = &queue;

	if (q->running) {
		pthread_mutex_lock(&q->lock);
		q->stopping = 1;
		pthread_cond_signal(&q->more);
		pthread_mutex_unlock(&q->lock);
		if (!pthread_equal(pthread_self(), q->worker))
			pthread_join(q->worker, NULL);
		q->running = q->stopping = 0;
	}
	for (; q->popped != q->pushed; q->popped++) {
		struct deflate_job *job = &q->ring[q->popped % QUEUE_JOBS];
		FREE_AND_NULL(job->in);
		strbuf_release(&job->out);
	}
	q->pushed = q->deflated = q->popped = q->bytes = 0;
	q->seen_deflated = 0;
}

void deflate_queue_atfork_prepare(void)
{
	if (deflate_queue_pending())
		BUG("fork with objects still to deflate");
	pthread_mutex_lock(&queue.lock);
}

void deflate_queue_atfork_parent(void)
{
	pthread_mutex_unlock(&queue.lock);
}

void deflate_queue_atfork_child(void)
{
	pthread_mutex_unlock(&queue.lock);
	queue.running = 0;
	queue.no_worker = 1;
}
