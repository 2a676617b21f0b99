/* Manifest ids checked as the changegroup arrives: see manifest-precheck.h. */
#include "libgit.h"
#include "check-setting.h"
#include "config.h"
#include "hg-id.h"
#include "id-verify.h"
#include "manifest.h"
#include "manifest-precheck.h"
#include "metadata.h"
#include "input-stream.h"

static void check_all_spooled(void *data);

void manifest_precheck_init(struct manifest_precheck *p)
{
	memset(p, 0, sizeof(*p));
	strbuf_init(&p->backlog.raw, 0);
}

void manifest_precheck_start(struct manifest_precheck *p, int version,
			     int fd, struct id_verify *verify)
{
	p->verify = verify;
	p->active = check_enabled(CHECK_MANIFESTS);
	stream_init_pread(&p->spool, fd);
	p->spool_version = version;
	p->late = git_env_bool("CINNABAR_TEST_PRECHECK_LATE", 0);
	if (p->active)
		verify_id_before_reporting(verify, check_all_spooled, p);
}

/* A copy of `text` sharing its blocks. */
static void keep(struct manifest_precheck *p, struct kept_text *kept,
		 const struct hg_oid *node, const struct block_text *text)
{
	block_text_share(text, &kept->text);
	hg_oidcpy(&kept->node, node);
	kept->used = ++p->uses;
}

/* The kept snapshot of `node`, or NULL. */
static struct kept_text *kept_snapshot(struct manifest_precheck *p,
				       const struct hg_oid *node)
{
	int i;

	for (i = 0; i < MANIFEST_PRECHECK_SNAPSHOTS; i++)
		if (p->snapshots[i].used && hg_oideq(node, &p->snapshots[i].node))
			return &p->snapshots[i];
	return NULL;
}

/*
 * Keep a snapshot of `level` against `base`: in a free slot, else in
 * place of one off its chain, of the deepest level and least recently
 * used, else (a chain longer than the slots) of the least recently used
 * of its chain that is neither a full text nor its base.
 */
static void keep_snapshot(struct manifest_precheck *p,
			  const struct hg_oid *node, const struct hg_oid *base,
			  const struct block_text *text, int level)
{
	int on_chain[MANIFEST_PRECHECK_SNAPSHOTS] = { 0 };
	struct kept_text *kept, *slot = NULL;
	int i, steps;

	for (kept = kept_snapshot(p, base), steps = 0;
	     kept && steps < MANIFEST_PRECHECK_SNAPSHOTS;
	     kept = kept->level ? kept_snapshot(p, &kept->base) : NULL, steps++)
		on_chain[kept - p->snapshots] = 1 + !steps;
	for (i = 0; i < MANIFEST_PRECHECK_SNAPSHOTS; i++) {
		kept = &p->snapshots[i];
		if (!kept->used) {
			slot = kept;
			break;
		}
		if (on_chain[i])
			continue;
		if (!slot || kept->level > slot->level ||
		    (kept->level == slot->level && kept->used < slot->used))
			slot = kept;
	}
	if (!slot) {
		/* Every slot holds a snapshot of the chain. */
		for (i = 0; i < MANIFEST_PRECHECK_SNAPSHOTS; i++) {
			kept = &p->snapshots[i];
			if (on_chain[i] == 1 && kept->level &&
			    (!slot || kept->used < slot->used))
				slot = kept;
		}
		if (!slot)
			return;
	}
	keep(p, slot, node, text);
	hg_oidcpy(&slot->base, base);
	slot->level = level;
}

/*
 * The text of `node` if we have it, or can read it from the repository
 * (then *from_repo is set; for the first manifest, `first`, it is offered
 * to the import, whose first base it is), and into `level` the level of
 * a snapshot against it: 0 against the empty text or a text of the
 * repository, one more than a kept snapshot's.
 */
static const struct block_text *find_base(struct manifest_precheck *p,
					  const struct hg_oid *node,
					  struct block_text *stored,
					  int first, int *from_repo,
					  int *level)
{
	static const struct block_text empty = BLOCK_TEXT_INIT;
	const struct block_text *offered;
	struct kept_text *kept;

	*level = 0;
	if (hg_oid_is_null(node))
		return &empty;
	if (p->have_previous && hg_oideq(node, &p->previous.node))
		return &p->previous.text;
	if ((offered = manifest_offered_text(node)))
		return offered;
	if ((kept = kept_snapshot(p, node))) {
		kept->used = ++p->uses;
		*level = kept->level + 1;
		return &kept->text;
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

static void check(struct manifest_precheck *p, const struct rev_chunk *chunk,
		  size_t index)
{
	struct block_text stored = BLOCK_TEXT_INIT;
	const struct block_text *base;
	struct shared_text *text;
	int follows = p->have_previous &&
		      hg_oideq(&chunk->delta_base, &p->previous.node);
	int from_repo = 0, level;

	base = find_base(p, &chunk->delta_base, &stored, !index, &from_repo,
			 &level);
	if (!base) {
		p->have_previous = 0;	/* left to the import */
		return;
	}
	text = shared_text_take(p->verify);
	if (block_text_apply(base, chunk->delta, chunk->delta_len,
			     &text->text)) {
		/* Malformed: the import says so, with the details. */
		shared_text_release(text);
		block_text_release(&stored);
		p->have_previous = 0;
		return;
	}
	block_text_release(&stored);
	verify_id_async(p->verify, "manifest", &chunk->node, &chunk->p1, &chunk->p2,
			text, index);
	keep(p, &p->previous, &chunk->node, &text->text);
	p->have_previous = 1;
	if (!follows)
		keep_snapshot(p, &chunk->node, &chunk->delta_base,
			      &text->text, level);
	/*
	 * A snapshot against a stored revision after the first manifest:
	 * the import would make that revision's text from its trees again
	 * to rebuild this one (manifest.c, rebase_delta).
	 */
	if (from_repo && index)
		manifest_offer_made(&chunk->node, &text->text);
	shared_text_release(text);
	if (index / 8 >= p->checked_alloc) {
		size_t old = p->checked_alloc;
		ALLOC_GROW(p->checked, index / 8 + 1, p->checked_alloc);
		memset(p->checked + old, 0, p->checked_alloc - old);
	}
	p->checked[index / 8] |= 1 << (index % 8);
}

/* Read manifest `next` back from the spool, and check it. */
static void check_next(struct manifest_precheck *p)
{
	if (!read_cg_chunk(&p->spool, &p->backlog.raw))
		BUG("manifest spool out of step");
	parse_rev_chunk(p->spool_version, p->next ? &p->next_prev : NULL,
			&p->backlog);
	check(p, &p->backlog, p->next++);
	hg_oidcpy(&p->next_prev, &p->backlog.node);
	if (p->next == p->spooled && p->spool_ended)
		manifest_precheck_stop(p);
}

void manifest_precheck_advance(struct manifest_precheck *p, size_t upto)
{
	if (!p->active)
		return;
	while (p->next < p->spooled &&
	       (p->next < upto || (!p->late && shared_text_available(p->verify))))
		check_next(p);
	if (p->backlog.raw.alloc > (1UL << 20))
		strbuf_release(&p->backlog.raw);
}

static void check_all_spooled(void *data)
{
	manifest_precheck_advance(data, SIZE_MAX);
}

int manifest_precheck_idle(struct manifest_precheck *p)
{
	manifest_precheck_advance(p, 0);
	return p->active && !p->late && p->next < p->spooled;
}

void manifest_precheck_spooled(struct manifest_precheck *p)
{
	p->spooled++;
	manifest_precheck_advance(p, 0);
}

void manifest_precheck_spool_end(struct manifest_precheck *p)
{
	p->spool_ended = 1;
	if (p->next == p->spooled)
		manifest_precheck_stop(p);
}

void manifest_precheck_stop(struct manifest_precheck *p)
{
	int i;

	block_text_release(&p->previous.text);
	p->have_previous = 0;
	for (i = 0; i < MANIFEST_PRECHECK_SNAPSHOTS; i++) {
		block_text_release(&p->snapshots[i].text);
		p->snapshots[i].used = 0;
	}
	p->uses = 0;
}

int manifest_prechecked(const struct manifest_precheck *p, size_t index)
{
	return index / 8 < p->checked_alloc &&
	       (p->checked[index / 8] & (1 << (index % 8)));
}

void manifest_precheck_release(struct manifest_precheck *p)
{
	manifest_precheck_stop(p);
	FREE_AND_NULL(p->checked);
	p->checked_alloc = 0;
	p->active = 0;
	if (p->verify)
		verify_id_before_reporting(p->verify, NULL, NULL);
	stream_release(&p->spool);
	p->spool_ended = 0;
	p->next = p->spooled = 0;
	rev_chunk_release(&p->backlog);
}
