/* Manifest ids checked as the changegroup arrives: see manifest-precheck.h. */
#include "libgit.h"
#include "check.h"
#include "config.h"
#include "hg-id.h"
#include "id-verify.h"
#include "manifest.h"
#include "manifest-precheck.h"
#include "metadata.h"
#include "stream.h"

/* Snapshots kept: enough for the chains of a sparse revlog's levels. */
#define KEPT_SNAPSHOTS 4

struct kept_text {
	struct hg_oid node;
	struct block_text text;
	unsigned long used;	/* for evicting the least recently used */
};

static int active;
/*
 * The spool (manifests framed as in the changegroup), read back from
 * manifest `next` on; `spooled` are written.
 */
static struct stream spool;
static int spool_version, spool_ended;
/* Tests: check nothing before the import asks (CINNABAR_TEST_PRECHECK_LATE). */
static int late;
static size_t next, spooled;
static struct hg_oid next_prev;		/* the node of manifest next - 1 */
static struct rev_chunk backlog = REV_CHUNK_INIT;
static struct kept_text previous;	/* the last revision rebuilt */
static int have_previous;
static struct kept_text snapshots[KEPT_SNAPSHOTS];
static unsigned long uses;
static unsigned char *checked;		/* a bit per manifest of the group */
static size_t checked_alloc;

static int precheck_while_idle(void);
static void check_all_spooled(void);

void manifest_precheck_start(int version, int fd)
{
	manifest_precheck_reset();
	active = check_enabled(CHECK_MANIFESTS);
	stream_init_pread(&spool, fd);
	spool_version = version;
	late = git_env_bool("CINNABAR_TEST_PRECHECK_LATE", 0);
	if (active) {
		stream_set_idle_work(precheck_while_idle);
		verify_id_before_reporting(check_all_spooled);
	}
}

/* A copy of `text` sharing its blocks. */
static void keep(struct kept_text *kept, const struct hg_oid *node,
		 const struct block_text *text)
{
	block_text_share(text, &kept->text);
	hg_oidcpy(&kept->node, node);
	kept->used = ++uses;
}

static void keep_snapshot(const struct hg_oid *node,
			  const struct block_text *text)
{
	struct kept_text *slot = &snapshots[0];
	int i;

	for (i = 1; i < KEPT_SNAPSHOTS; i++)
		if (snapshots[i].used < slot->used)
			slot = &snapshots[i];
	keep(slot, node, text);
}

/*
 * The text of `node` if we have it, or can read it from the repository
 * (then *from_repo is set; for the first manifest, `first`, it is offered
 * to the import, whose first base it is).
 */
static const struct block_text *find_base(const struct hg_oid *node,
					  struct block_text *stored,
					  int first, int *from_repo)
{
	static const struct block_text empty = BLOCK_TEXT_INIT;
	const struct block_text *offered;
	int i;

	if (hg_oid_is_null(node))
		return &empty;
	if (have_previous && hg_oideq(node, &previous.node))
		return &previous.text;
	if ((offered = manifest_offered_text(node)))
		return offered;
	for (i = 0; i < KEPT_SNAPSHOTS; i++) {
		if (snapshots[i].used && hg_oideq(node, &snapshots[i].node)) {
			snapshots[i].used = ++uses;
			return &snapshots[i].text;
		}
	}
	if (hg2git(node)) {
		*from_repo = 1;
		if (first && (offered = manifest_offer_stored(node)))
			return offered;
		manifest_block_text(node, stored);
		return stored;
	}
	return NULL;
}

static void check(const struct rev_chunk *chunk, size_t index)
{
	struct block_text stored = BLOCK_TEXT_INIT;
	const struct block_text *base;
	struct shared_text *text;
	int follows = have_previous &&
		      hg_oideq(&chunk->delta_base, &previous.node);
	int from_repo = 0;

	base = find_base(&chunk->delta_base, &stored, !index, &from_repo);
	if (!base) {
		have_previous = 0;	/* left to the import */
		return;
	}
	text = shared_text_take();
	if (block_text_apply(base, chunk->delta, chunk->delta_len,
			     &text->text)) {
		/* Malformed: the import says so, with the details. */
		shared_text_release(text);
		block_text_release(&stored);
		have_previous = 0;
		return;
	}
	block_text_release(&stored);
	verify_id_async("manifest", &chunk->node, &chunk->p1, &chunk->p2,
			text, index);
	keep(&previous, &chunk->node, &text->text);
	have_previous = 1;
	if (!follows)
		keep_snapshot(&chunk->node, &text->text);
	/*
	 * A snapshot against a stored revision after the first manifest:
	 * the import would make that revision's text from its trees again
	 * to rebuild this one (manifest.c, rebase_delta).
	 */
	if (from_repo && index)
		manifest_offer_made(&chunk->node, &text->text);
	shared_text_release(text);
	if (index / 8 >= checked_alloc) {
		size_t old = checked_alloc;
		ALLOC_GROW(checked, index / 8 + 1, checked_alloc);
		memset(checked + old, 0, checked_alloc - old);
	}
	checked[index / 8] |= 1 << (index % 8);
}

/* Read manifest `next` back from the spool, and check it. */
static void check_next(void)
{
	if (!read_cg_chunk(&spool, &backlog.raw))
		BUG("manifest spool out of step");
	parse_rev_chunk(spool_version, next ? &next_prev : NULL, &backlog);
	check(&backlog, next++);
	hg_oidcpy(&next_prev, &backlog.node);
	if (next == spooled && spool_ended)
		manifest_precheck_stop();
}

void manifest_precheck_advance(size_t upto)
{
	if (!active)
		return;
	while (next < spooled &&
	       (next < upto || (!late && shared_text_available())))
		check_next();
	if (backlog.raw.alloc > (1UL << 20))
		strbuf_release(&backlog.raw);
}

static void check_all_spooled(void)
{
	manifest_precheck_advance(SIZE_MAX);
}

/* While the changegroup is slow to come: check more, if there is more. */
static int precheck_while_idle(void)
{
	manifest_precheck_advance(0);
	return !late && next < spooled;
}

void manifest_precheck_spooled(void)
{
	spooled++;
	manifest_precheck_advance(0);
}

void manifest_precheck_spool_end(void)
{
	spool_ended = 1;
	if (next == spooled)
		manifest_precheck_stop();
}

void manifest_precheck_stop(void)
{
	int i;

	stream_set_idle_work(NULL);
	block_text_release(&previous.text);
	have_previous = 0;
	for (i = 0; i < KEPT_SNAPSHOTS; i++) {
		block_text_release(&snapshots[i].text);
		snapshots[i].used = 0;
	}
	uses = 0;
}

int manifest_prechecked(size_t index)
{
	return index / 8 < checked_alloc &&
	       (checked[index / 8] & (1 << (index % 8)));
}

void manifest_precheck_reset(void)
{
	manifest_precheck_stop();
	FREE_AND_NULL(checked);
	checked_alloc = 0;
	active = 0;
	stream_set_idle_work(NULL);
	verify_id_before_reporting(NULL);
	stream_release(&spool);
	spool_ended = 0;
	next = spooled = 0;
	rev_chunk_release(&backlog);
}
