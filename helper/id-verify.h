/*
 * Verifying Mercurial ids on worker threads.
 *
 * A manifest revision's id is the SHA-1 of its parents and full text
 * (hg-id.h): megabytes per revision on large repositories, and no way to
 * reuse the hash of the previous revision since the parents come first.
 * The import hands each text to a pool of threads (one per CPU) and goes
 * on with the next revision; a mismatch is reported by the next call,
 * or when the import dies of another error, in its place: the failure
 * reported is always that of the first revision that failed in the order
 * of the changegroup (manifests before files, even when checked after
 * them: VERIFY_IN_TURN). Manifests still waiting in the spool are checked
 * before a failure is reported, not before another error is.
 *
 * The texts live in a fixed set of shared buffers: one is "taken" by the
 * importer (e.g. the previous revision, base of the next delta) and by
 * any verification pending on it, and goes back to the set when both are
 * done. Memory is bounded by that set, whatever the history's length.
 *
 * With AVX-512, the SHA instructions or AVX2 (sha1/sha1-mb.h), each worker
 * hashes 16, 2 or 8 texts at once: the set has room for that many per
 * worker, as long as the blocks made for the texts taken stay under a few
 * MB (texts share their other blocks, block-text.h).
 */
#ifndef CINNABAR_ID_VERIFY_H
#define CINNABAR_ID_VERIFY_H

#include "thread-utils.h"
#include "hg-id.h"
#include "block-text.h"

#define ID_VERIFY_MAX_WORKERS 4

struct id_verify;

struct shared_text {
	struct block_text text;
	int refs;
	struct id_verify *owner;	/* whose set of buffers it is in */
};

struct verify_job {
	const char *what;
	struct hg_oid node, p1, p2;
	struct shared_text *text;
	size_t seq;		/* the order it was queued in */
};

/*
 * The verification of an import's ids, owned by the import. The workers
 * start with the first buffer taken.
 */
struct id_verify {
	/*
	 * Everything below is shared with the workers, under `lock`: the
	 * buffers, the queue of jobs (a ring as large as the set of
	 * buffers: a job holds one), and the failure of the job queued
	 * first among those that failed (workers finish jobs out of order:
	 * the one reported must be the first bad revision of the import,
	 * whichever is seen first).
	 */
	pthread_mutex_t lock;
	/*
	 * Workers wait for `more` (jobs, a taker waiting, the end), the
	 * taker of a buffer for `freed`.
	 */
	pthread_cond_t more, freed;
	struct shared_text *texts;
	size_t nr_texts;
	struct verify_job *queue;
	size_t queue_head, queue_len, running;
	pthread_t workers[ID_VERIFY_MAX_WORKERS], main_thread;
	int nr_workers, stopping, dropping, taker_waiting;
	struct verify_job failure;
	int failed;
	size_t next_seq, wake_jobs;
	/*
	 * The large text hashed beside the importer (verify_id_async_buf),
	 * not under `lock`: the importer reads the result after joining.
	 */
	struct in_place_hash {
		pthread_t thread;
		int running;
		struct verify_job job;
		struct hg_oid p1, p2, id;
		const char *buf;
		size_t len;
	} in_place;
	/* Queuing what comes before a failure found, to report the first. */
	void (*before_reporting)(void *data);
	void *before_reporting_data;
	int reporting;
};

/*
 * One import verifies at a time (the exit and die handlers reach it:
 * verify_id_failed_before), from the thread that calls this.
 */
void id_verify_init(struct id_verify *v);
/* Stop the workers (dropping what they have not started) and free all. */
void id_verify_release(struct id_verify *v);

/* A free buffer (waiting for one if need be), taken by the caller. */
struct shared_text *shared_text_take(struct id_verify *v);
/*
 * Whether shared_text_take() would return without waiting. When it would
 * wait, the workers hash what they have instead of waiting for more jobs.
 */
int shared_text_available(struct id_verify *v);
/* Give back a buffer taken by shared_text_take(). */
void shared_text_release(struct shared_text *text);

/*
 * Where a verification comes among failures: a manifest's index in its
 * group (manifests come before the files in a changegroup, and may be
 * checked after files, from the spool: manifest-precheck.h), or
 * VERIFY_IN_TURN, after every verification asked for before it.
 */
#define VERIFY_IN_TURN SIZE_MAX

/*
 * Verify, in the background, that `node` is the id of `text` with parents
 * p1 and p2; `what` ("manifest") names the kind of revision in the error,
 * `order` says where it comes (above). Dies if an earlier verification
 * failed.
 */
void verify_id_async(struct id_verify *v, const char *what,
		     const struct hg_oid *node,
		     const struct hg_oid *p1, const struct hg_oid *p2,
		     struct shared_text *text, size_t order);

/*
 * `fn` queues, before a failure is reported, the verifications of the
 * revisions that come before in the changegroup but were left for later
 * (the manifests still in the spool), so that the first is reported
 * whatever the order they were checked in; it is given `data`. NULL for
 * none.
 */
void verify_id_before_reporting(struct id_verify *v,
				 void (*fn)(void *data), void *data);

/*
 * The same for a flat text (a file revision's): copied, unless it is
 * large; then it is hashed where it is, on a thread of its own while the
 * caller goes on (storing it), and `buf` must stay as it is until
 * verify_id_buf_done() (with one core, it is hashed here and now).
 */
void verify_id_async_buf(struct id_verify *v, const char *what,
			 const struct hg_oid *node,
			 const struct hg_oid *p1, const struct hg_oid *p2,
			 const char *buf, size_t len);
/*
 * The text last given to verify_id_async_buf() may change or go: wait
 * for its hashing, if it was not copied, and die if it was wrong.
 */
void verify_id_buf_done(struct id_verify *v);

/*
 * The id of a text hashed elsewhere (one too large to hold, as it was
 * read) is `id`: a failure in its turn when it is not `node`.
 */
void verify_id_result(struct id_verify *v, const char *what,
		      const struct hg_oid *node, const struct hg_oid *id);

/* Die if a verification already done failed (without waiting). */
void verify_id_poll(struct id_verify *v);

/* Wait for every pending verification; die if one failed. */
void verify_id_finish(struct id_verify *v);

/*
 * For the main thread about to die of another error: wait for every
 * pending verification of the import in progress (if any, and if it
 * started its workers), and return the message of the first that failed
 * (in the order they were asked for), which comes first in the import
 * and is the one to report; NULL when none failed.
 */
const char *verify_id_failed_before(void);

#endif
