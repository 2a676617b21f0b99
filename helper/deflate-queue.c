/* Deflating the objects of a pack: see deflate-queue.h. */
#include "git-compat-util.h"
#include "config.h"
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
 * The queue: a ring of jobs. `pushed` and `popped` count the jobs since
 * the start; jobs [popped, pushed) are in the ring, each queued, taken (by
 * the worker or the pusher, deflating it) or deflated: `state`, under
 * `lock`, with `deflated`, the count of jobs deflated from the start in a
 * row. The worker takes the jobs in order from `next`; a pusher waiting
 * for the oldest job deflates the newest ones still queued meanwhile
 * (with a stream of its own, so the bytes are those the worker would
 * make), and waits only for the job the worker has. The pusher writes a
 * slot only once popped, the thread that took a job only its output. At
 * most QUEUE_JOBS jobs and QUEUE_BYTES bytes to deflate are queued. A
 * waiting worker is woken once WAKE_JOBS jobs wait for it, or when the
 * pusher waits: waking it for every object (most are 100-byte tree
 * deltas) cost more in system calls than it saved, and every 32 objects
 * still cost the pusher 4% of a long import's time (a wake-up is a
 * system call and often an interrupt to the other CPU).
 * CINNABAR_TEST_DEFLATE_ALTERNATE=1 (tests) leaves every other job to the
 * pusher, so that both deflate on every import.
 */
#define QUEUE_JOBS 1024
#define QUEUE_BYTES (16UL << 20)
#define WAKE_JOBS 256

enum job_state { JOB_QUEUED, JOB_TAKEN, JOB_DEFLATED };

struct deflate_queue {
	pthread_mutex_t lock;
	pthread_cond_t more, done;
	pthread_t worker;
	struct object_deflater deflater;	/* the worker's */
	struct object_deflater pusher_deflater;
	struct deflate_job ring[QUEUE_JOBS];
	unsigned char state[QUEUE_JOBS];
	size_t pushed, deflated, popped, bytes, next;
	size_t seen_deflated;	/* the pusher's last look at `deflated` */
	size_t stolen;		/* jobs the pusher deflated */
	int running, stopping, worker_waiting, pusher_waiting, no_worker;
	int alternate;
};

static struct deflate_queue queue = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* Job `i` is deflated: under `lock`. */
static void job_deflated(struct deflate_queue *q, size_t i)
{
	q->state[i % QUEUE_JOBS] = JOB_DEFLATED;
	while (q->deflated < q->pushed &&
	       q->state[q->deflated % QUEUE_JOBS] == JOB_DEFLATED)
		q->deflated++;
}

/* Deflate job `i`, taken, with `d`: called without `lock`. */
static void run_job(struct deflate_queue *q, struct object_deflater *d,
		    size_t i)
{
	struct deflate_job *job = &q->ring[i % QUEUE_JOBS];

	job->failed = object_deflate(d, job->level, job->in, job->len,
				     &job->out) < 0;
	FREE_AND_NULL(job->in);
}

/*
 * The worker's next job, taken, or -1 when told to stop: under `lock`.
 * Jobs before `deflated` need nothing; after it, the pusher may have
 * taken some.
 */
static ssize_t next_job(struct deflate_queue *q)
{
	for (;;) {
		if (q->next < q->deflated)
			q->next = q->deflated;
		while (q->next < q->pushed &&
		       (q->state[q->next % QUEUE_JOBS] != JOB_QUEUED ||
			(q->alternate && q->next % 2)))
			q->next++;
		if (q->stopping || q->next < q->pushed)
			break;
		q->worker_waiting = 1;
		pthread_cond_wait(&q->more, &q->lock);
		q->worker_waiting = 0;
	}
	if (q->stopping)
		return -1;
	q->state[q->next % QUEUE_JOBS] = JOB_TAKEN;
	return q->next++;
}

static void *deflate_worker(void *data)
{
	struct deflate_queue *q = data;
	ssize_t i;

	pthread_mutex_lock(&q->lock);
	while ((i = next_job(q)) >= 0) {
		pthread_mutex_unlock(&q->lock);
		run_job(q, &q->deflater, i);
		pthread_mutex_lock(&q->lock);
		job_deflated(q, i);
		if (q->pusher_waiting)
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
	q->alternate = git_env_bool("CINNABAR_TEST_DEFLATE_ALTERNATE", 0);
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
	q->state[q->pushed % QUEUE_JOBS] = JOB_QUEUED;
	q->pushed++;
	if (q->worker_waiting && q->pushed - q->next >= WAKE_JOBS)
		pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/*
 * The newest job still queued, taken for the pusher, or -1 when every
 * job is taken or deflated: under `lock`.
 */
static ssize_t steal_job(struct deflate_queue *q)
{
	size_t i = q->pushed;

	while (i > q->deflated)
		if (q->state[--i % QUEUE_JOBS] == JOB_QUEUED) {
			q->state[i % QUEUE_JOBS] = JOB_TAKEN;
			return i;
		}
	return -1;
}

int deflate_queue_pop(struct deflate_job *job, int wait)
{
	struct deflate_queue *q = &queue;

	if (q->popped == q->pushed)
		return -1;
	if (q->popped == q->seen_deflated) {
		pthread_mutex_lock(&q->lock);
		if (wait && q->popped == q->deflated && q->worker_waiting)
			pthread_cond_signal(&q->more);
		while (wait && q->popped == q->deflated) {
			ssize_t i = steal_job(q);

			if (i >= 0) {
				pthread_mutex_unlock(&q->lock);
				run_job(q, &q->pusher_deflater, i);
				pthread_mutex_lock(&q->lock);
				job_deflated(q, i);
				q->stolen++;
				continue;
			}
			q->pusher_waiting = 1;
			pthread_cond_wait(&q->done, &q->lock);
			q->pusher_waiting = 0;
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

size_t deflate_queue_stolen(void)
{
	return queue.stolen;
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
	q->pushed = q->deflated = q->popped = q->bytes = q->next = 0;
	q->seen_deflated = 0;
	object_deflater_release(&q->pusher_deflater);
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
