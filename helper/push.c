/*
 * Changegroups for pushing: see `changegroup` in PROTOCOL.md.
 *
 * The driver of a push's stages (push-state.h): each git commit, parents
 * first, gets its changeset, manifest and file revisions
 * (push-convert.c), its manifest's delta is made at once (while the
 * manifests it needs are in the cache of push-manifests.c); then the
 * changegroup is written: changesets and manifests here, the file groups
 * by push-files.c, in changegroup.h's format. It is then imported back,
 * which records the new changesets like fetched ones and checks that each
 * gives back exactly the commit it was made from.
 *
 * The top of the push files: depends on the stages (push-convert.c,
 * push-files.c, push-manifests.c) and on push-state.c, which they share;
 * none of them depends on this file.
 */
#include "libgit.h"
#include "meter.h"
#include "string-list.h"
#include "bundle.h"
#include "changegroup.h"
#include "changeset.h"
#include "file.h"
#include "file-parents.h"
#include "import.h"
#include "manifest.h"
#include "manifest-delta.h"
#include "metadata.h"
#include "raw-commit.h"
#include "store.h"
#include "push-convert.h"
#include "push-files.h"
#include "push-manifests.h"
#include "push.h"

/* Branches given by push_set_branch for the next push: oid hex -> name. */
static struct string_list set_branches = STRING_LIST_INIT_DUP;

void push_set_branch(const struct object_id *commit, const char *branch)
{
	string_list_insert(&set_branches, oid_to_hex(commit))->util =
		xstrdup(branch);
}

/* Record commit `i` of the batch, once its changeset is made. */
static void index_commit(struct push_state *st, size_t i)
{
	int ret;
	khiter_t it = kh_put_oid_pos(st->by_commit, st->cs[i].commit, &ret);
	kh_value(st->by_commit, it) = i;
	push_set_pos(st->by_node, &st->cs[i].node, i);
	if (st->cs[i].new_manifest)
		push_set_pos(st->by_manifest, &st->cs[i].manifest, i);
}

/* The hg changeset of a commit: pushed in this batch, or stored. */
static int hg_of_commit(struct push_state *st, size_t upto,
			const struct object_id *commit, struct hg_oid *out)
{
	khiter_t it = kh_get_oid_pos(st->by_commit, *commit);
	if (it != kh_end(st->by_commit) &&
	    (size_t)kh_value(st->by_commit, it) < upto) {
		hg_oidcpy(out, &st->cs[kh_value(st->by_commit, it)].node);
		return 0;
	}
	return git2hg(commit, out);
}

/* A commit to convert: one Mercurial can hold exactly. */
static void read_commit_info(const struct object_id *oid,
			     struct raw_commit *c)
{
	if (raw_commit_read(c, oid))
		die("commit %s is damaged", oid_to_hex(oid));
	if (c->parents.nr > 2)
		die("commit %s has more than two parents; "
		    "Mercurial changesets have at most two", oid_to_hex(oid));
	if (c->other_header)
		die("commit %s has a header ('%.*s') that Mercurial "
		    "cannot keep; it cannot be pushed", oid_to_hex(oid),
		    (int)(strchrnul(c->other_header, ' ') - c->other_header),
		    c->other_header);
}

/*
 * The delta of a changeset's manifest, made as soon as the changeset is,
 * while its manifest and its base are in the cache, with no general diff
 * (see manifest-delta.h). The base, as for files (push-files.c): in
 * version 02 and 03 the first parent's manifest (known to the server:
 * sent before, or stored there), else the previous manifest sent; in
 * version 01 the previous manifest sent, for the first one the first
 * parent's. A manifest is sent once.
 */
static void make_manifest_delta(struct push_state *st, struct cs_rev *cs)
{
	const struct push_manifest *m, *base;
	const struct hg_oid *base_id = &st->last_sent_manifest;
	int ret;

	if (!cs->send_manifest)
		return;
	kh_put_hg_pos(st->sent_manifests, cs->manifest, &ret);
	if (!ret) {
		cs->send_manifest = 0;
		return;
	}
	if (st->version == 1 ? hg_oid_is_null(base_id)
			     : !hg_oid_is_null(&cs->mp1))
		base_id = &cs->mp1;
	base = push_manifest_get(st, base_id);
	m = push_manifest_get(st, &cs->manifest);
	manifest_delta(base ? base->text.buf : "", base ? base->text.len : 0,
		       m->text.buf, m->text.len, &cs->manifest_delta);
	hg_oidcpy(&cs->manifest_base, base_id);
	hg_oidcpy(&st->last_sent_manifest, &cs->manifest);
}

/*
 * The changelog group, each changeset a delta against the previous one
 * (for the first one of version 01, against its first parent); then the
 * manifest group, with the deltas made before.
 */
static void write_changesets_and_manifests(FILE *f, struct push_state *st)
{
	struct rev_chunk chunk = REV_CHUNK_INIT;
	struct strbuf base = STRBUF_INIT;
	size_t i;

	hg_oidcpy(&chunk.delta_base, &hg_null_oid);
	if (st->version == 1 && st->nr && !hg_oid_is_null(&st->cs[0].p1))
		changeset_text(&st->cs[0].p1, &base);
	for (i = 0; i < st->nr; i++) {
		struct cs_rev *cs = &st->cs[i];
		hg_oidcpy(&chunk.node, &cs->node);
		hg_oidcpy(&chunk.p1, &cs->p1);
		hg_oidcpy(&chunk.p2, &cs->p2);
		hg_oidcpy(&chunk.changeset, &cs->node);
		push_write_rev(st, f, &chunk, base.buf, base.len,
			       cs->text.buf, cs->text.len);
		strbuf_reset(&base);
		strbuf_addbuf(&base, &cs->text);
		hg_oidcpy(&chunk.delta_base, &cs->node);
	}
	write_cg_end(f);

	for (i = 0; i < st->nr; i++) {
		struct cs_rev *cs = &st->cs[i];
		if (!cs->send_manifest)
			continue;
		hg_oidcpy(&chunk.node, &cs->manifest);
		hg_oidcpy(&chunk.p1, &cs->mp1);
		hg_oidcpy(&chunk.p2, &cs->mp2);
		hg_oidcpy(&chunk.delta_base, &cs->manifest_base);
		hg_oidcpy(&chunk.changeset, &cs->node);
		push_write_delta(st, f, &chunk, &cs->manifest_delta);
	}
	write_cg_end(f);
	strbuf_release(&base);
	rev_chunk_release(&chunk);
}

/*
 * The text of the first manifest's delta base, when it is stored and
 * still kept (checked against its id when it was read): the import back
 * takes it instead of making it again from its trees (twice: to check the
 * first manifest's id ahead, and as its base).
 */
static void offer_first_base(struct push_state *st)
{
	const struct push_manifest *m;
	size_t i;

	for (i = 0; i < st->nr && !st->cs[i].send_manifest; i++)
		;
	if (i == st->nr || !hg2git(&st->cs[i].manifest_base))
		return;
	m = push_manifest_kept(st, &st->cs[i].manifest_base);
	if (m)
		manifest_offer_text(&m->id, m->text.buf, m->text.len);
}

/* Import the changegroup back, and check it maps to the same commits. */
static void import_back(const char *path, struct push_state *st)
{
	struct stream raw;
	struct bundle b;
	struct import_stats stats;
	int shown;
	size_t i;

	stream_init_file(&raw, path);
	bundle_open(&b, &raw, st->version);
	/* Our own revisions, just written: no "Receiving" meters. */
	shown = meter_show(0);
	import_bundle(&b, &stats);
	meter_show(shown);
	bundle_release(&b);
	for (i = 0; i < st->nr; i++) {
		const struct object_id *git = hg2git(&st->cs[i].node);
		if (!git || !oideq(git, &st->cs[i].commit))
			die("commit %s cannot be represented exactly in "
			    "Mercurial (it would come back as %s); it cannot "
			    "be pushed", oid_to_hex(&st->cs[i].commit),
			    git ? oid_to_hex(git) : "nothing");
	}
}

static void push_state_init(struct push_state *st, int version, size_t nr)
{
	memset(st, 0, sizeof(*st));
	st->version = version;
	string_list_init_dup(&st->paths);
	CALLOC_ARRAY(st->cs, nr ? nr : 1);
	st->by_commit = kh_init_oid_pos();
	st->by_node = kh_init_hg_pos();
	st->by_manifest = kh_init_hg_pos();
	st->new_files = kh_init_hg_pos();
	st->sent_manifests = kh_init_hg_pos();
	st->checked_manifests = kh_init_hg_pos();
	st->checked_files = kh_init_hg_pos();
	hg_oidcpy(&st->last_sent_manifest, &hg_null_oid);
	st->branches = &set_branches;
}

/*
 * The texts the changegroup was written from (manifests, changesets, the
 * file revisions): importing it back does not need them.
 */
static void push_state_drop_texts(struct push_state *st, size_t nr)
{
	size_t i;

	push_manifests_release(st);
	for (i = 0; i < nr; i++) {
		strbuf_release(&st->cs[i].text);
		strbuf_release(&st->cs[i].manifest_text);
		strbuf_release(&st->cs[i].manifest_delta);
	}
	for (i = 0; i < st->files_nr; i++)
		free(st->files[i].meta);
	FREE_AND_NULL(st->files);
	st->files_nr = st->files_alloc = 0;
}

static void push_state_release(struct push_state *st, size_t nr)
{
	push_state_drop_texts(st, nr);
	free(st->cs);
	kh_destroy_oid_pos(st->by_commit);
	kh_destroy_hg_pos(st->by_node);
	kh_destroy_hg_pos(st->by_manifest);
	kh_destroy_hg_pos(st->new_files);
	kh_destroy_hg_pos(st->sent_manifests);
	kh_destroy_hg_pos(st->checked_manifests);
	kh_destroy_hg_pos(st->checked_files);
	string_list_clear(&st->paths, 0);
}

/* Commit `i` of the batch: its changeset, manifest and file revisions. */
static void add_commit(struct push_state *st, size_t i,
		       const struct object_id *commit)
{
	struct cs_rev *cs = &st->cs[i];
	struct raw_commit c;
	size_t k;

	oidcpy(&cs->commit, commit);
	strbuf_init(&cs->text, 0);
	strbuf_init(&cs->manifest_text, 0);
	strbuf_init(&cs->manifest_delta, 0);
	read_commit_info(commit, &c);
	hg_oidcpy(&cs->p1, &hg_null_oid);
	hg_oidcpy(&cs->p2, &hg_null_oid);
	for (k = 0; k < c.parents.nr; k++)
		if (hg_of_commit(st, i, &c.parents.oid[k],
				 k ? &cs->p2 : &cs->p1))
			die("commit %s has a parent (%s) that is neither "
			    "pushed nor known to come from Mercurial",
			    oid_to_hex(commit), oid_to_hex(&c.parents.oid[k]));
	st->nr = i + 1;
	if (!git2hg(commit, &cs->node))
		push_add_stored(st, cs);
	else
		push_convert_commit(st, cs, &c);
	index_commit(st, i);
	make_manifest_delta(st, cs);
	push_manifest_spill(st, cs);
	raw_commit_release(&c);
}

static void write_changegroup(const char *path, struct push_state *st)
{
	FILE *f = fopen(path, "wb");
	size_t total = st->nr + push_sort_files(st), i;

	if (!f)
		die_errno("cannot create '%s'", path);
	for (i = 0; i < st->nr; i++)
		total += st->cs[i].send_manifest;
	st->progress = meter_start(_("Writing revisions"), total, NULL);
	write_changesets_and_manifests(f, st);
	push_write_files(f, st);
	meter_stop(&st->progress);
	if (fclose(f))
		die_errno("cannot write '%s'", path);
}

void create_changegroup(int version, const char *path,
			const struct object_id *commits, size_t nr,
			struct hg_oid *nodes)
{
	struct push_state st;
	size_t i;

	push_state_init(&st, version, nr);
	for (i = 0; i < nr; i++)
		add_commit(&st, i, &commits[i]);
	store_read_scattered(1);
	write_changegroup(path, &st);
	file_parents_forget();
	for (i = 0; i < nr; i++)
		if (st.cs[i].new_manifest || !hg2git(&st.cs[i].node))
			break;
	/* Only converted commits need checking and recording. */
	if (i < nr)
		offer_first_base(&st);
	push_state_drop_texts(&st, nr);
	if (i < nr)
		import_back(path, &st);
	store_read_scattered(0);

	for (i = 0; i < nr; i++)
		hg_oidcpy(&nodes[i], &st.cs[i].node);
	string_list_clear(&set_branches, 1);
	push_state_release(&st, nr);
}
