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

#include "hg-id.h"
#include "block-text.h"

struct shared_text {
	struct block_text text;
	int refs;
};

/* A free buffer (waiting for one if need be), taken by the caller. */
struct shared_text *shared_text_take(void);
/*
 * Whether shared_text_take() would return without waiting. When it would
 * wait, the workers hash what they have instead of waiting for more jobs.
 */
int shared_text_available(void);
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
void verify_id_async(const char *what, const struct hg_oid *node,
		     const struct hg_oid *p1, const struct hg_oid *p2,
		     struct shared_text *text, size_t order);

/*
 * `fn` queues, before a failure is reported, the verifications of the
 * revisions that come before in the changegroup but were left for later
 * (the manifests still in the spool), so that the first is reported
 * whatever the order they were checked in; it is given `data`. NULL for
 * none.
 */
void verify_id_before_reporting(void (*fn)(void *data), void *data);

/*
 * The same for a flat text (a file revision's): copied, unless it is
 * large, then hashed here and now (after the verifications queued before
 * it in the order of failures).
 */
void verify_id_async_buf(const char *what, const struct hg_oid *node,
			 const struct hg_oid *p1, const struct hg_oid *p2,
			 const char *buf, size_t len);

/* Die if a verification already done failed (without waiting). */
void verify_id_poll(void);

/* Wait for every pending verification; die if one failed. */
void verify_id_finish(void);

/*
 * For the main thread about to die of another error: wait for every
 * pending verification, and return the message of the first that failed
 * (in the order they were asked for), which comes first in the import
 * and is the one to report; NULL when none failed.
 */
const char *verify_id_failed_before(void);

#endif
