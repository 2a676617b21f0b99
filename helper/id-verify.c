/* Verifying Mercurial ids on worker threads: see id-verify.h. */
#include "libgit.h"
#include "thread-utils.h"
#include "id-verify.h"
#include "sha1/sha1-lanes.h"

#define MAX_WORKERS 4
/*
 * With the multi-lane SHA-1 (sha1/sha1-lanes.h), each worker hashes up to
 * 16 (AVX-512), 8 (AVX2) or 2 (SHA instructions) texts at once; with 16
 * or 8 lanes, below MB_MIN_LANES texts the one-lane code is cheaper
 * (either way a lane runs at about a fifth of the SHA instructions' speed
 * on one message); with 2, both must be busy. The one-lane code looks at
 * the queue again every ONE_LANE_RUN blocks (256 kB).
 */
#define MB_MIN_LANES 6
#define ONE_LANE_RUN 4096
/*
 * Texts share their blocks, so each one in flight costs the blocks made
 * for it (a few blocks per hunk of its delta): beyond the importer's two
 * and one per worker, more are taken only while the blocks made for the
 * texts taken add up to less than this.
 */
#define MAX_TEXT_BYTES (3 << 20)
/*
 * Flat texts (file revisions) are copied into a shared text to be hashed
 * on a worker; larger ones are hashed in place, not to hold a second copy.
 */
#define MAX_COPIED_TEXT (4 << 20)
/*
 * Waking the workers for each small text (file revisions, the manifests
 * of small repositories) costs more than hashing it: the workers are
 * woken once there are jobs for each of their lanes, or a text of
 * WAKE_BYTES, or the importer waits for a buffer, or the import ends;
 * meanwhile up to QUEUED_TEXTS more small texts may wait in the queue.
 */
#define WAKE_BYTES (64 << 10)
#define QUEUED_TEXTS 32

struct verify_job {
	const char *what;
	struct hg_oid node, p1, p2;
	struct shared_text *text;
	size_t seq;		/* the order it was queued in */
};

/*
 * Everything below is shared with the workers, under `lock`: the buffers,
 * the queue of jobs (a ring as large as the set of buffers: a job holds
 * one), and the failure of the job queued first among those that failed
 * (workers finish jobs out of order: the one reported must be the first
 * bad revision of the import, whichever is seen first).
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Workers wait for `more` (jobs, a taker waiting, the end), the taker of
 * a buffer for `freed`.
 */
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static struct shared_text *texts;
static size_t nr_texts;
static struct verify_job *queue;
static size_t queue_head, queue_len, running;
static pthread_t workers[MAX_WORKERS], main_thread;
static int nr_workers, stopping, dropping, taker_waiting;
static struct verify_job failure;
static int failed;
static size_t next_seq, wake_jobs;
/* Queuing what comes before a failure found, to report the first. */
static void (*before_reporting)(void);
static int reporting;

static void put_text(struct shared_text *text)
{
	if (--text->refs < 0)
		BUG("shared text released too often");
	if (!text->refs)
		pthread_cond_broadcast(&freed);
}

static void hash_block(const char *data, size_t len, void *hasher)
{
	hg_hasher_update(hasher, data, len);
}

/*
 * Keep the failure of `job` (its text hashed to `id`) when it was queued
 * before the one kept: under `lock`.
 */
static void note_result(const struct verify_job *job, const struct hg_oid *id)
{
	if (!hg_oideq(id, &job->node) && (!failed || job->seq < failure.seq)) {
		failure = *job;
		failed = 1;
	}
}

/* A job is done (`id` is what its text hashes to): under `lock`. */
static void job_done(struct verify_job *job, const struct hg_oid *id)
{
	if (id)
		note_result(job, id);
	put_text(job->text);
	running--;
}

static void check_job(struct verify_job *job)
{
	struct hg_hasher hasher;
	struct hg_oid id;
	hg_hasher_init(&hasher, &job->p1, &job->p2);
	block_text_each(&job->text->text, hash_block, &hasher);
	hg_hasher_final(&hasher, &id);
	pthread_mutex_lock(&lock);
	job_done(job, &id);
	pthread_mutex_unlock(&lock);
}

/* Take the next job from the queue: under `lock`, with queue_len > 0. */
static void pop_job(struct verify_job *job)
{
	*job = queue[queue_head];
	queue_head = (queue_head + 1) % nr_texts;
	queue_len--;
	running++;
}

static void *worker(void *unused)
{
	pthread_mutex_lock(&lock);
	for (;;) {
		struct verify_job job;
		while (!queue_len && !stopping)
			pthread_cond_wait(&more, &lock);
		if (!queue_len)
			break;
		pop_job(&job);
		pthread_mutex_unlock(&lock);
		check_job(&job);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return unused;
}

/*
 * What the multi-lane hashing reads of a job: the parents, smaller first,
 * then the blocks of the text.
 */
struct lane_job {
	struct verify_job job;
	unsigned char parents[2 * HG_RAWSZ];
};

static const char *lane_piece(const void *src, size_t i, size_t *len)
{
	const struct lane_job *lj = src;
	const struct block_text *text = &lj->job.text->text;

	if (!i) {
		*len = sizeof(lj->parents);
		return (const char *)lj->parents;
	}
	if (i - 1 >= text->nr)
		return NULL;
	return block_text_block(text, i - 1, len);
}

static void start_lane(struct sha1_lanes *lanes, struct lane_job *slots)
{
	struct lane_job *lj = slots;
	const struct hg_oid *p1, *p2;

	while (lj->job.text)
		lj++;
	pop_job(&lj->job);
	p1 = &lj->job.p1;
	p2 = &lj->job.p2;
	if (hg_oidcmp(p1, p2) > 0)
		SWAP(p1, p2);
	memcpy(lj->parents, p1->hash, HG_RAWSZ);
	memcpy(lj->parents + HG_RAWSZ, p2->hash, HG_RAWSZ);
	sha1_lanes_add(lanes, lane_piece, lj);
}

/*
 * A worker with 16, 8 or 2 lanes: it fills them from the queue and hashes once
 * they are all busy, or when no more jobs may come soon (the importer
 * waits for a buffer, or the import ends). A lane that finishes is
 * refilled as soon as a job waits.
 */
static void *worker_mb(void *unused)
{
	struct sha1_lanes lanes;
	struct lane_job slots[SHA1_MB_LANES];
	unsigned char digest[HG_RAWSZ];
	struct lane_job *lj;
	int i, big;

	sha1_lanes_init(&lanes);
	memset(slots, 0, sizeof(slots));
	pthread_mutex_lock(&lock);
	while (!dropping) {
		while (sha1_lanes_has_room(&lanes) && queue_len)
			start_lane(&lanes, slots);
		if (!lanes.busy && stopping)
			break;
		/*
		 * Waiting for jobs to fill the lanes pays for small texts;
		 * a lane on a large one (a manifest) runs for milliseconds,
		 * and the importer may be away for as long (reading the
		 * files while the manifests are checked from the spool).
		 */
		for (i = big = 0; i < SHA1_MB_LANES && !big; i++)
			big = slots[i].job.text &&
			      slots[i].job.text->text.len >= WAKE_BYTES;
		if (!lanes.busy || (sha1_lanes_has_room(&lanes) && !big &&
				    !stopping && !taker_waiting)) {
			pthread_cond_wait(&more, &lock);
			continue;
		}
		pthread_mutex_unlock(&lock);
		sha1_lanes_step(&lanes, lanes.nr < MB_MIN_LANES ? lanes.nr :
				MB_MIN_LANES, ONE_LANE_RUN);
		pthread_mutex_lock(&lock);
		while ((lj = (struct lane_job *)sha1_lanes_take_done(&lanes,
								    digest))) {
			struct hg_oid id;
			memcpy(id.hash, digest, HG_RAWSZ);
			job_done(&lj->job, &id);
			lj->job.text = NULL;
		}
	}
	/* Dropped (at exit): give the texts back unchecked. */
	for (i = 0; i < SHA1_MB_LANES; i++)
		if (slots[i].job.text)
			job_done(&slots[i].job, NULL);
	pthread_mutex_unlock(&lock);
	return unused;
}

/*
 * Stop the workers: each finishes the jobs it is on, unless
 * `drop_queued`; the jobs not started are then left undone, else done
 * first.
 */
static void stop_workers(int drop_queued)
{
	int i;

	pthread_mutex_lock(&lock);
	stopping = 1;
	if (drop_queued) {
		queue_len = 0;
		dropping = 1;
	}
	pthread_cond_broadcast(&more);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < nr_workers; i++)
		pthread_join(workers[i], NULL);
	nr_workers = 0;
}

/*
 * At exit (a die() of the main thread included), the workers must be gone
 * before libcrypto's own exit handler frees what their hashing uses: drop
 * the jobs not started and wait for those running. This handler is set
 * after libcrypto's (changesets are hashed before any manifest), so it runs
 * before it.
 */
static void stop_workers_at_exit(void)
{
	if (nr_workers && pthread_equal(pthread_self(), main_thread))
		stop_workers(1);
}

static void start(void)
{
	int cpus = online_cpus(), i, lanes;
	static int exit_handler_set;

	if (!exit_handler_set) {
		main_thread = pthread_self();
		atexit(stop_workers_at_exit);
		exit_handler_set = 1;
	}

	nr_workers = cpus < 2 ? 0 : cpus > MAX_WORKERS ? MAX_WORKERS : cpus;
	lanes = nr_workers ? sha1_mb_lanes() : 0;
	/*
	 * The importer's two (base and result), one per worker's lane, and
	 * small texts queued (see WAKE_BYTES).
	 */
	wake_jobs = nr_workers * (lanes ? lanes : 1);
	nr_texts = wake_jobs + 2 + QUEUED_TEXTS;
	CALLOC_ARRAY(texts, nr_texts);
	CALLOC_ARRAY(queue, nr_texts);
	stopping = dropping = 0;
	for (i = 0; i < nr_workers; i++)
		if (pthread_create(&workers[i], NULL, lanes ? worker_mb : worker,
				   NULL))
			die_errno("cannot start a thread to verify ids");
}

/* Whether one more text may be taken: under `lock`. */
static int has_room(void)
{
	size_t i, taken = 0, bytes = 0;

	for (i = 0; i < nr_texts; i++) {
		if (!texts[i].refs)
			continue;
		taken++;
		bytes += texts[i].text.own;
	}
	return taken < (size_t)nr_workers + 2 || bytes < MAX_TEXT_BYTES;
}

struct shared_text *shared_text_take(void)
{
	struct shared_text *found = NULL;
	size_t i;
	int room;

	if (!texts)
		start();
	pthread_mutex_lock(&lock);
	room = has_room();
	while (!found) {
		for (i = 0; i < nr_texts && !found && room; i++)
			if (!texts[i].refs)
				found = &texts[i];
		if (!found) {
			/* The workers must not wait for more jobs now. */
			taker_waiting = 1;
			pthread_cond_broadcast(&more);
			pthread_cond_wait(&freed, &lock);
			room = has_room();
		}
	}
	taker_waiting = 0;
	found->refs = 1;
	/*
	 * Drop the blocks of every text given back since: an unused text
	 * would keep alive blocks (a whole old revision) no other has.
	 * Only this thread makes or drops blocks, and no one reads a text
	 * nobody has taken.
	 */
	for (i = 0; i < nr_texts; i++)
		if (!texts[i].refs && texts[i].text.nr)
			block_text_release(&texts[i].text);
	pthread_mutex_unlock(&lock);
	block_text_release(&found->text);
	return found;
}

int shared_text_available(void)
{
	size_t i;
	int found = 0;

	if (!texts)
		return 1;
	pthread_mutex_lock(&lock);
	if (has_room())
		for (i = 0; i < nr_texts && !found; i++)
			found = !texts[i].refs;
	if (!found) {
		/* As for a taker waiting: the workers must not wait for more. */
		taker_waiting = 1;
		pthread_cond_broadcast(&more);
	}
	pthread_mutex_unlock(&lock);
	return found;
}

void shared_text_release(struct shared_text *text)
{
	pthread_mutex_lock(&lock);
	put_text(text);
	pthread_mutex_unlock(&lock);
}

/*
 * Let the workers finish every job queued (then stop them), so that a
 * failure found is the first: from the main thread only.
 */
static void settle(void)
{
	if (nr_workers && pthread_equal(pthread_self(), main_thread))
		stop_workers(0);
}

static const char *failure_message(void)
{
	static char msg[256];

	xsnprintf(msg, sizeof(msg), "%s %s does not match its contents "
		  "(corrupt data)", failure.what, hg_oid_to_hex(&failure.node));
	return msg;
}

void verify_id_before_reporting(void (*fn)(void))
{
	before_reporting = fn;
}

static NORETURN void die_failure(void)
{
	if (before_reporting && !reporting &&
	    pthread_equal(pthread_self(), main_thread)) {
		reporting = 1;
		before_reporting();
	}
	settle();
	die("%s", failure_message());
}

const char *verify_id_failed_before(void)
{
	if (!texts || !pthread_equal(pthread_self(), main_thread))
		return NULL;
	settle();
	return failed ? failure_message() : NULL;
}

void verify_id_poll(void)
{
	int found;

	pthread_mutex_lock(&lock);
	found = failed;
	pthread_mutex_unlock(&lock);
	if (found)
		die_failure();
}

/* The place of a job among failures: see VERIFY_IN_TURN. */
static size_t job_seq(size_t order)
{
	return order != VERIFY_IN_TURN ? order : SIZE_MAX / 2 + next_seq++;
}

void verify_id_async(const char *what, const struct hg_oid *node,
		     const struct hg_oid *p1, const struct hg_oid *p2,
		     struct shared_text *text, size_t order)
{
	struct verify_job job = { what };

	job.seq = job_seq(order);
	hg_oidcpy(&job.node, node);
	hg_oidcpy(&job.p1, p1);
	hg_oidcpy(&job.p2, p2);
	job.text = text;
	pthread_mutex_lock(&lock);
	text->refs++;
	if (failed && !reporting) {
		pthread_mutex_unlock(&lock);
		die_failure();
	}
	if (!nr_workers) {
		running++;
		pthread_mutex_unlock(&lock);
		check_job(&job);
		return;
	}
	queue[(queue_head + queue_len) % nr_texts] = job;
	queue_len++;
	if (queue_len >= wake_jobs || text->text.len >= WAKE_BYTES)
		pthread_cond_broadcast(&more);
	pthread_mutex_unlock(&lock);
}

/* Check a text too large to copy here and now, in its turn. */
static void verify_in_place(const char *what, const struct hg_oid *node,
			    const struct hg_oid *p1, const struct hg_oid *p2,
			    const char *buf, size_t len)
{
	struct verify_job job = { what };
	struct hg_oid id;

	job.seq = job_seq(VERIFY_IN_TURN);
	hg_oidcpy(&job.node, node);
	hg_hash(p1, p2, buf, len, &id);
	pthread_mutex_lock(&lock);
	note_result(&job, &id);
	pthread_mutex_unlock(&lock);
	verify_id_poll();
}

void verify_id_async_buf(const char *what, const struct hg_oid *node,
			 const struct hg_oid *p1, const struct hg_oid *p2,
			 const char *buf, size_t len)
{
	struct shared_text *text;

	/*
	 * No waiting for a buffer (the early manifest check may hold them
	 * all): the text is hashed here instead.
	 */
	if (len > MAX_COPIED_TEXT || !shared_text_available()) {
		if (!texts)
			start();
		verify_in_place(what, node, p1, p2, buf, len);
		return;
	}
	text = shared_text_take();
	block_text_set(&text->text, buf, len);
	verify_id_async(what, node, p1, p2, text, VERIFY_IN_TURN);
	shared_text_release(text);
}

void verify_id_finish(void)
{
	size_t i;

	if (!texts)
		return;
	stop_workers(0);
	if (failed)
		die_failure();
	for (i = 0; i < nr_texts; i++) {
		if (texts[i].refs)
			BUG("shared text still taken after the import");
		block_text_release(&texts[i].text);
	}
	FREE_AND_NULL(texts);
	FREE_AND_NULL(queue);
	queue_head = 0;
	next_seq = 0;
}
