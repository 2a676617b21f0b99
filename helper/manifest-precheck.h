/*
 * Manifest ids checked as the changegroup arrives.
 *
 * A changegroup sends the manifests before the files they list, and
 * storing a manifest with its git tree needs the files' blobs, so the
 * import keeps the manifests aside until the files are in (import.c).
 * Their ids need nothing but their texts: checking them as they arrive
 * lets the hashing (most of the CPU of cloning a large-manifest history)
 * run while the server is still sending the files and the helper is
 * importing them, instead of after.
 *
 * The reading of the changegroup never waits for the hashing: each
 * manifest is read back from the spool and checked as soon as it is
 * spooled when a buffer is free, else later, as buffers free up (while
 * the files are imported, and while the server is slow to send them:
 * manifest_precheck_idle), and
 * at the latest just before the import stores it. The manifests left in
 * the spool are checked before a failure is reported, so that the first
 * in the changegroup is (id-verify.h).
 *
 * The texts are rebuilt from the deltas. A delta against the previous
 * revision or the empty text is always followed, one against an older
 * revision (Mercurial's snapshots) when that revision is among the few
 * such ones kept, and one against a revision of the repository from its
 * git tree. Otherwise that revision, and those after it on the same
 * chain, are left to the import, which checks the ids of the revisions
 * it is not told were checked here (on nginx, a branch made from an old
 * revision: 14 times, 2,800 revisions of 9,817).
 *
 * A sparse revlog's snapshots make a tree: a full text now and then, the
 * intermediate snapshots against it, more against those (`hg
 * debugdeltachain`). Mercurial makes a new snapshot against one of the
 * snapshots of its parents' delta chains, the full text as often as the
 * last one: the snapshots kept are first those of the last snapshot's
 * chain, and of the others the one let go of is the least recently used
 * of the deepest level. On a history of 33,000 revisions of 25,000
 * files, keeping the last four instead lost the first full text before
 * revision 9,991 came against it, and left 20,000 revisions to the
 * import.
 */
#ifndef CINNABAR_MANIFEST_PRECHECK_H
#define CINNABAR_MANIFEST_PRECHECK_H

#include "block-text.h"
#include "changegroup.h"
#include "hg-id.h"
#include "input-stream.h"

struct id_verify;

/* Snapshots kept: enough for the chains of a sparse revlog's levels. */
#define MANIFEST_PRECHECK_SNAPSHOTS 6

struct kept_text {
	struct hg_oid node, base;	/* a snapshot's: its delta's base */
	struct block_text text;
	unsigned long used;	/* for evicting the least recently used */
	int level;		/* 0: a full text; 1: against one; ... */
};

/* The check of one changegroup's manifests, owned by its import. */
struct manifest_precheck {
	int active;
	/*
	 * The spool (manifests framed as in the changegroup), read back from
	 * manifest `next` on; `spooled` are written.
	 */
	struct stream spool;
	int spool_version, spool_ended;
	/*
	 * Tests: check nothing before the import asks
	 * (CINNABAR_TEST_PRECHECK_LATE).
	 */
	int late;
	size_t next, spooled;
	struct hg_oid next_prev;	/* the node of manifest next - 1 */
	struct rev_chunk backlog;
	struct kept_text previous;	/* the last revision rebuilt */
	int have_previous;
	struct kept_text snapshots[MANIFEST_PRECHECK_SNAPSHOTS];
	unsigned long uses;
	unsigned char *checked;		/* a bit per manifest of the group */
	size_t checked_alloc;
	struct id_verify *verify;
};

void manifest_precheck_init(struct manifest_precheck *p);
/*
 * Start (or not, when manifest checks are off) for a new changegroup of
 * `version`, whose manifests are spooled to `fd` (read back with pread)
 * as they come; the ids are verified by `verify`.
 */
void manifest_precheck_start(struct manifest_precheck *p, int version,
			     int fd, struct id_verify *verify);
/*
 * One more manifest was appended to the spool: check it (and those before
 * it not checked yet) now if that needs no waiting for a buffer, else
 * leave it for later.
 */
void manifest_precheck_spooled(struct manifest_precheck *p);
/* Every manifest of the changegroup was spooled. */
void manifest_precheck_spool_end(struct manifest_precheck *p);
/*
 * Check the spooled manifests not checked yet: those before index `upto`
 * whatever it takes, then as many as need no waiting.
 */
void manifest_precheck_advance(struct manifest_precheck *p, size_t upto);
/*
 * The check's work while the changegroup is slow to come (as a
 * stream_idle's, input-stream.h): check what needs no waiting; 1 when
 * manifests are left that wait for a buffer, else 0.
 */
int manifest_precheck_idle(struct manifest_precheck *p);
/* Drop the texts kept; what was checked is remembered. */
void manifest_precheck_stop(struct manifest_precheck *p);
/* Whether the `index`th manifest's id was (or is being) checked. */
int manifest_prechecked(const struct manifest_precheck *p, size_t index);
/* Forget everything. */
void manifest_precheck_release(struct manifest_precheck *p);

#endif
