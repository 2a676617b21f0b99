/* Verifying Mercurial ids on worker threads: see id-verify.h. */
#include "cache.h"
#include "thread-utils.h"
#include "id-verify.h"

#define MAX_WORKERS 4

struct verify_job {
	const char *what;
	struct hg_oid node, p1, p2;
	struct shared_text *text;
};

/*
 * Everything below is shared with the workers, under `lock`: the buffers,
 * the queue of jobs (a ring as large as the set of buffers: a job holds
 * one), and the first failure seen.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct shared_text *texts;
static size_t nr_texts;
static struct verify_job *queue;
static size_t queue_head, queue_len, running;
static pthread_t workers[MAX_WORKERS], main_thread;
static int nr_workers, stopping;
static struct verify_job failure;
static int failed;

static void put_text(struct shared_text *text)
{
	if (--text->refs < 0)
		BUG("shared text released too often");
	if (!text->refs)
		pthread_cond_broadcast(&changed);
}

static void hash_block(const char *data, size_t len, void *hasher)
{
	hg_hasher_update(hasher, data, len);
}

static void check_job(struct verify_job *job)
{
	struct hg_hasher hasher;
	struct hg_oid id;
	hg_hasher_init(&hasher, &job->p1, &job->p2);
	block_text_each(&job->text->text, hash_block, &hasher);
	hg_hasher_final(&hasher, &id);
	pthread_mutex_lock(&lock);
	if (!hg_oideq(&id, &job->node) && !failed) {
		failure = *job;
		failed = 1;
	}
	put_text(job->text);
	running--;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static void *worker(void *unused)
{
	pthread_mutex_lock(&lock);
	for (;;) {
		struct verify_job job;
		while (!queue_len && !stopping)
			pthread_cond_wait(&changed, &lock);
		if (!queue_len)
			break;
		job = queue[queue_head];
		queue_head = (queue_head + 1) % nr_texts;
		queue_len--;
		running++;
		pthread_mutex_unlock(&lock);
		check_job(&job);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return unused;
}

/*
 * Stop the workers: each finishes the job it is on; the jobs not started
 * are left undone when `drop_queued`, else done first.
 */
static void stop_workers(int drop_queued)
{
	int i;

	pthread_mutex_lock(&lock);
	stopping = 1;
	if (drop_queued)
		queue_len = 0;
	pthread_cond_broadcast(&changed);
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
	int cpus = online_cpus(), i;
	static int exit_handler_set;

	if (!exit_handler_set) {
		main_thread = pthread_self();
		atexit(stop_workers_at_exit);
		exit_handler_set = 1;
	}

	nr_workers = cpus < 2 ? 0 : cpus > MAX_WORKERS ? MAX_WORKERS : cpus;
	/* The importer's two (base and result), and one per worker. */
	nr_texts = nr_workers + 2;
	CALLOC_ARRAY(texts, nr_texts);
	CALLOC_ARRAY(queue, nr_texts);
	stopping = 0;
	for (i = 0; i < nr_workers; i++)
		if (pthread_create(&workers[i], NULL, worker, NULL))
			die_errno("cannot start a thread to verify ids");
}

struct shared_text *shared_text_take(void)
{
	struct shared_text *found = NULL;
	size_t i;

	if (!texts)
		start();
	pthread_mutex_lock(&lock);
	while (!found) {
		for (i = 0; i < nr_texts && !found; i++)
			if (!texts[i].refs)
				found = &texts[i];
		if (!found)
			pthread_cond_wait(&changed, &lock);
	}
	found->refs = 1;
	pthread_mutex_unlock(&lock);
	block_text_release(&found->text);
	return found;
}

void shared_text_release(struct shared_text *text)
{
	pthread_mutex_lock(&lock);
	put_text(text);
	pthread_mutex_unlock(&lock);
}

static NORETURN void die_failure(void)
{
	die("%s %s does not match its contents (corrupt data)", failure.what,
	    hg_oid_to_hex(&failure.node));
}

void verify_id_async(const char *what, const struct hg_oid *node,
		     const struct hg_oid *p1, const struct hg_oid *p2,
		     struct shared_text *text)
{
	struct verify_job job = { what };

	hg_oidcpy(&job.node, node);
	hg_oidcpy(&job.p1, p1);
	hg_oidcpy(&job.p2, p2);
	job.text = text;
	pthread_mutex_lock(&lock);
	text->refs++;
	if (failed) {
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
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

void verify_id_finish(void)
{
	int i;

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
}
