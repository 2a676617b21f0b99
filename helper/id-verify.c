/* Verifying Mercurial ids on worker threads: see id-verify.h. */
#include "libgit.h"
#include "id-verify.h"
#include "sha1/sha1-lanes.h"

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

/*
 * The verifier of the import in progress, for the handlers that cannot be
 * given it: at exit, and when the import dies of another error
 * (verify_id_failed_before).
 */
static struct id_verify *current;

static void join_in_place(struct id_verify *v);

static void put_text(struct shared_text *text)
{
	if (--text->refs < 0)
		BUG("shared text released too often");
	if (!text->refs)
		pthread_cond_broadcast(&text->owner->freed);
}

static void hash_block(const char *data, size_t len, void *hasher)
{
	hg_hasher_update(hasher, data, len);
}

/*
 * Keep the failure of `job` (its text hashed to `id`) when it was queued
 * before the one kept: under `lock`.
 */
static void note_result(struct id_verify *v, const struct verify_job *job,
			const struct hg_oid *id)
{
	if (!hg_oideq(id, &job->node) &&
	    (!v->failed || job->seq < v->failure.seq)) {
		v->failure = *job;
		v->failed = 1;
	}
}

/* A job is done (`id` is what its text hashes to): under `lock`. */
static void job_done(struct id_verify *v, struct verify_job *job,
		     const struct hg_oid *id)
{
	if (id)
		note_result(v, job, id);
	put_text(job->text);
	v->running--;
}

static void check_job(struct id_verify *v, struct verify_job *job)
{
	struct hg_hasher hasher;
	struct hg_oid id;
	hg_hasher_init(&hasher, &job->p1, &job->p2);
	block_text_each(&job->text->text, hash_block, &hasher);
	hg_hasher_final(&hasher, &id);
	pthread_mutex_lock(&v->lock);
	job_done(v, job, &id);
	pthread_mutex_unlock(&v->lock);
}

/* Take the next job from the queue: under `lock`, with queue_len > 0. */
static void pop_job(struct id_verify *v, struct verify_job *job)
{
	*job = v->queue[v->queue_head];
	v->queue_head = (v->queue_head + 1) % v->nr_texts;
	v->queue_len--;
	v->running++;
}

static void *worker(void *data)
{
	struct id_verify *v = data;

	pthread_mutex_lock(&v->lock);
	for (;;) {
		struct verify_job job;
		while (!v->queue_len && !v->stopping)
			pthread_cond_wait(&v->more, &v->lock);
		if (!v->queue_len)
			break;
		pop_job(v, &job);
		pthread_mutex_unlock(&v->lock);
		check_job(v, &job);
		pthread_mutex_lock(&v->lock);
	}
	pthread_mutex_unlock(&v->lock);
	return NULL;
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

static void start_lane(struct id_verify *v, struct sha1_lanes *lanes,
		       struct lane_job *slots)
{
	struct lane_job *lj = slots;
	const struct hg_oid *p1, *p2;

	while (lj->job.text)
		lj++;
	pop_job(v, &lj->job);
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
static void *worker_mb(void *data)
{
	struct id_verify *v = data;
	struct sha1_lanes lanes;
	struct lane_job slots[SHA1_MB_LANES];
	unsigned char digest[HG_RAWSZ];
	struct lane_job *lj;
	int i, big;

	sha1_lanes_init(&lanes);
	memset(slots, 0, sizeof(slots));
	pthread_mutex_lock(&v->lock);
	while (!v->dropping) {
		while (sha1_lanes_has_room(&lanes) && v->queue_len)
			start_lane(v, &lanes, slots);
		if (!lanes.busy && v->stopping)
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
				    !v->stopping && !v->taker_waiting)) {
			pthread_cond_wait(&v->more, &v->lock);
			continue;
		}
		pthread_mutex_unlock(&v->lock);
		sha1_lanes_step(&lanes, lanes.nr < MB_MIN_LANES ? lanes.nr :
				MB_MIN_LANES, ONE_LANE_RUN);
		pthread_mutex_lock(&v->lock);
		while ((lj = (struct lane_job *)sha1_lanes_take_done(&lanes,
								    digest))) {
			struct hg_oid id;
			memcpy(id.hash, digest, HG_RAWSZ);
			job_done(v, &lj->job, &id);
			lj->job.text = NULL;
		}
	}
	/* Dropped (at exit): give the texts back unchecked. */
	for (i = 0; i < SHA1_MB_LANES; i++)
		if (slots[i].job.text)
			job_done(v, &slots[i].job, NULL);
	pthread_mutex_unlock(&v->lock);
	return NULL;
}

/*
 * Stop the workers: each finishes the jobs it is on, unless
 * `drop_queued`; the jobs not started are then left undone, else done
 * first.
 */
static void stop_workers(struct id_verify *v, int drop_queued)
{
	int i;

	pthread_mutex_lock(&v->lock);
	v->stopping = 1;
	if (drop_queued) {
		v->queue_len = 0;
		v->dropping = 1;
	}
	pthread_cond_broadcast(&v->more);
	pthread_mutex_unlock(&v->lock);
	for (i = 0; i < v->nr_workers; i++)
		pthread_join(v->workers[i], NULL);
	v->nr_workers = 0;
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
	struct id_verify *v = current;

	if (!v || !pthread_equal(pthread_self(), v->main_thread))
		return;
	join_in_place(v);
	if (v->nr_workers)
		stop_workers(v, 1);
}

void id_verify_init(struct id_verify *v)
{
	if (current)
		BUG("one import verifies ids at a time");
	memset(v, 0, sizeof(*v));
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->more, NULL);
	pthread_cond_init(&v->freed, NULL);
	v->main_thread = pthread_self();
	current = v;
}

static void start(struct id_verify *v)
{
	int cpus = online_cpus(), i, lanes;
	size_t t;
	static int exit_handler_set;

	if (!exit_handler_set) {
		atexit(stop_workers_at_exit);
		exit_handler_set = 1;
	}
	v->nr_workers = cpus < 2 ? 0 : cpus > ID_VERIFY_MAX_WORKERS ?
			ID_VERIFY_MAX_WORKERS : cpus;
	lanes = v->nr_workers ? sha1_mb_lanes() : 0;
	/*
	 * The importer's two (base and result), one per worker's lane, and
	 * small texts queued (see WAKE_BYTES).
	 */
	v->wake_jobs = v->nr_workers * (lanes ? lanes : 1);
	v->nr_texts = v->wake_jobs + 2 + QUEUED_TEXTS;
	CALLOC_ARRAY(v->texts, v->nr_texts);
	CALLOC_ARRAY(v->queue, v->nr_texts);
	for (t = 0; t < v->nr_texts; t++)
		v->texts[t].owner = v;
	v->stopping = v->dropping = 0;
	for (i = 0; i < v->nr_workers; i++)
		if (pthread_create(&v->workers[i], NULL,
				   lanes ? worker_mb : worker, v))
			die_errno("cannot start a thread to verify ids");
}

/* Whether one more text may be taken: under `lock`. */
static int has_room(struct id_verify *v)
{
	size_t i, taken = 0, bytes = 0;

	for (i = 0; i < v->nr_texts; i++) {
		if (!v->texts[i].refs)
			continue;
		taken++;
		bytes += v->texts[i].text.own;
	}
	return taken < (size_t)v->nr_workers + 2 || bytes < MAX_TEXT_BYTES;
}

struct shared_text *shared_text_take(struct id_verify *v)
{
	struct shared_text *found = NULL;
	size_t i;
	int room;

	if (!v->texts)
		start(v);
	pthread_mutex_lock(&v->lock);
	room = has_room(v);
	while (!found) {
		for (i = 0; i < v->nr_texts && !found && room; i++)
			if (!v->texts[i].refs)
				found = &v->texts[i];
		if (!found) {
			/* The workers must not wait for more jobs now. */
			v->taker_waiting = 1;
			pthread_cond_broadcast(&v->more);
			pthread_cond_wait(&v->freed, &v->lock);
			room = has_room(v);
		}
	}
	v->taker_waiting = 0;
	found->refs = 1;
	/*
	 * Drop the blocks of every text given back since: an unused text
	 * would keep alive blocks (a whole old revision) no other has.
	 * Only this thread makes or drops blocks, and no one reads a text
	 * nobody has taken.
	 */
	for (i = 0; i < v->nr_texts; i++)
		if (!v->texts[i].refs && v->texts[i].text.nr)
			block_text_release(&v->texts[i].text);
	pthread_mutex_unlock(&v->lock);
	block_text_release(&found->text);
	return found;
}

int shared_text_available(struct id_verify *v)
{
	size_t i;
	int found = 0;

	if (!v->texts)
		return 1;
	pthread_mutex_lock(&v->lock);
	if (has_room(v))
		for (i = 0; i < v->nr_texts && !found; i++)
			found = !v->texts[i].refs;
	if (!found) {
		/* As for a taker waiting: the workers must not wait for more. */
		v->taker_waiting = 1;
		pthread_cond_broadcast(&v->more);
	}
	pthread_mutex_unlock(&v->lock);
	return found;
}

void shared_text_release(struct shared_text *text)
{
	struct id_verify *v = text->owner;

	pthread_mutex_lock(&v->lock);
	put_text(text);
	pthread_mutex_unlock(&v->lock);
}

/*
 * Let the workers finish every job queued (then stop them), so that a
 * failure found is the first: from the main thread only.
 */
static void settle(struct id_verify *v)
{
	join_in_place(v);
	if (v->nr_workers && pthread_equal(pthread_self(), v->main_thread))
		stop_workers(v, 0);
}

static const char *failure_message(struct id_verify *v)
{
	static char msg[256];

	xsnprintf(msg, sizeof(msg), "%s %s does not match its contents "
		  "(corrupt data)", v->failure.what,
		  hg_oid_to_hex(&v->failure.node));
	return msg;
}

void verify_id_before_reporting(struct id_verify *v,
				 void (*fn)(void *data), void *data)
{
	v->before_reporting = fn;
	v->before_reporting_data = data;
}

static NORETURN void die_failure(struct id_verify *v)
{
	if (v->before_reporting && !v->reporting &&
	    pthread_equal(pthread_self(), v->main_thread)) {
		v->reporting = 1;
		v->before_reporting(v->before_reporting_data);
	}
	settle(v);
	die("%s", failure_message(v));
}

const char *verify_id_failed_before(void)
{
	struct id_verify *v = current;

	if (!v || !v->texts || !pthread_equal(pthread_self(), v->main_thread))
		return NULL;
	settle(v);
	return v->failed ? failure_message(v) : NULL;
}

void verify_id_poll(struct id_verify *v)
{
	int found;

	pthread_mutex_lock(&v->lock);
	found = v->failed;
	pthread_mutex_unlock(&v->lock);
	if (found)
		die_failure(v);
}

/* The place of a job among failures: see VERIFY_IN_TURN. */
static size_t job_seq(struct id_verify *v, size_t order)
{
	return order != VERIFY_IN_TURN ? order : SIZE_MAX / 2 + v->next_seq++;
}

void verify_id_async(struct id_verify *v, const char *what,
		     const struct hg_oid *node,
		     const struct hg_oid *p1, const struct hg_oid *p2,
		     struct shared_text *text, size_t order)
{
	struct verify_job job = { what };

	job.seq = job_seq(v, order);
	hg_oidcpy(&job.node, node);
	hg_oidcpy(&job.p1, p1);
	hg_oidcpy(&job.p2, p2);
	job.text = text;
	pthread_mutex_lock(&v->lock);
	text->refs++;
	if (v->failed && !v->reporting) {
		pthread_mutex_unlock(&v->lock);
		die_failure(v);
	}
	if (!v->nr_workers) {
		v->running++;
		pthread_mutex_unlock(&v->lock);
		check_job(v, &job);
		return;
	}
	v->queue[(v->queue_head + v->queue_len) % v->nr_texts] = job;
	v->queue_len++;
	if (v->queue_len >= v->wake_jobs || text->text.len >= WAKE_BYTES)
		pthread_cond_broadcast(&v->more);
	pthread_mutex_unlock(&v->lock);
}

static void *hash_in_place(void *data)
{
	struct in_place_hash *h = data;

	hg_hash(&h->p1, &h->p2, h->buf, h->len, &h->id);
	return NULL;
}

/* Keep the result of the large text hashed (in_place.id). */
static void note_in_place(struct id_verify *v)
{
	pthread_mutex_lock(&v->lock);
	note_result(v, &v->in_place.job, &v->in_place.id);
	pthread_mutex_unlock(&v->lock);
}

/* Wait for the large text being hashed, and keep its result. */
static void join_in_place(struct id_verify *v)
{
	struct in_place_hash *h = &v->in_place;

	if (!h->running || !pthread_equal(pthread_self(), v->main_thread))
		return;
	pthread_join(h->thread, NULL);
	h->running = 0;
	note_in_place(v);
}

/*
 * Check a text too large to copy, in its turn, without a copy: on a
 * thread of its own (the importer goes on storing it, hashing it as a
 * blob: the two hashes take both cores), here and now with one core.
 */
static void verify_in_place(struct id_verify *v, const char *what,
			    const struct hg_oid *node,
			    const struct hg_oid *p1, const struct hg_oid *p2,
			    const char *buf, size_t len)
{
	struct in_place_hash *h = &v->in_place;

	join_in_place(v);
	memset(&h->job, 0, sizeof(h->job));
	h->job.what = what;
	h->job.seq = job_seq(v, VERIFY_IN_TURN);
	hg_oidcpy(&h->job.node, node);
	hg_oidcpy(&h->p1, p1);
	hg_oidcpy(&h->p2, p2);
	h->buf = buf;
	h->len = len;
	if (v->nr_workers &&
	    !pthread_create(&h->thread, NULL, hash_in_place, h)) {
		h->running = 1;
		return;
	}
	hash_in_place(h);
	note_in_place(v);
	verify_id_poll(v);
}

void verify_id_result(struct id_verify *v, const char *what,
		      const struct hg_oid *node, const struct hg_oid *id)
{
	struct verify_job job = { what };

	if (!v->texts)
		start(v);
	job.seq = job_seq(v, VERIFY_IN_TURN);
	hg_oidcpy(&job.node, node);
	pthread_mutex_lock(&v->lock);
	note_result(v, &job, id);
	pthread_mutex_unlock(&v->lock);
	verify_id_poll(v);
}

void verify_id_buf_done(struct id_verify *v)
{
	if (!v->in_place.running)
		return;
	join_in_place(v);
	verify_id_poll(v);
}

void verify_id_async_buf(struct id_verify *v, const char *what,
			 const struct hg_oid *node,
			 const struct hg_oid *p1, const struct hg_oid *p2,
			 const char *buf, size_t len)
{
	struct shared_text *text;

	/*
	 * No waiting for a buffer (the early manifest check may hold them
	 * all): the text is hashed here instead.
	 */
	if (len > MAX_COPIED_TEXT || !shared_text_available(v)) {
		if (!v->texts)
			start(v);
		verify_in_place(v, what, node, p1, p2, buf, len);
		return;
	}
	text = shared_text_take(v);
	block_text_set(&text->text, buf, len);
	verify_id_async(v, what, node, p1, p2, text, VERIFY_IN_TURN);
	shared_text_release(text);
}

void verify_id_finish(struct id_verify *v)
{
	size_t i;

	if (!v->texts)
		return;
	join_in_place(v);
	stop_workers(v, 0);
	if (v->failed)
		die_failure(v);
	for (i = 0; i < v->nr_texts; i++) {
		if (v->texts[i].refs)
			BUG("shared text still taken after the import");
		block_text_release(&v->texts[i].text);
	}
	FREE_AND_NULL(v->texts);
	FREE_AND_NULL(v->queue);
	v->queue_head = 0;
	v->next_seq = 0;
}

void id_verify_release(struct id_verify *v)
{
	size_t i;

	join_in_place(v);
	if (v->nr_workers)
		stop_workers(v, 1);
	for (i = 0; i < v->nr_texts && v->texts; i++)
		block_text_release(&v->texts[i].text);
	FREE_AND_NULL(v->texts);
	FREE_AND_NULL(v->queue);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->more);
	pthread_cond_destroy(&v->freed);
	if (current == v)
		current = NULL;
}
