/* Checking the metadata against the git objects: see fsck.h. */
#include "libgit.h"
#include "meter.h"
#include "khash.h"
#include "changeset.h"
#include "file.h"
#include "import.h"
#include "manifest.h"
#include "metadata.h"
#include "raw-commit.h"
#include "store.h"
#include "fsck-files.h"
#include "fsck-manifest.h"
#include "check-setting.h"
#include "fsck-changes.h"
#include "graft.h"
#include "answer.h"
#include "fsck.h"
#include "replace-map.h"
#include "authorship.h"

/*
 * The manifests checked, by hg id (as git ids, for khash): whether each
 * is good, and then its git tree, for check_changeset_tree.
 */
struct manifest_state {
	int good;
	struct object_id git_tree;
};
KHASH_INIT(manifest_state, struct object_id, struct manifest_state, 1,
	   oidhash_by_value, oideq_by_value)

/*
 * What the checks use of a manifest commit: read once while reading
 * hg2git in a full check (kept in `mcommits`), else when needed.
 */
struct mcommit {
	struct object_id tree, parents[2];
	size_t nparents;	/* as in the commit: may be more than 2 */
	struct hg_oid node;	/* the id its message names */
	int named;		/* whether its message is an id */
};
KHASH_INIT(mcommit, struct object_id, struct mcommit, 1, oidhash_by_value,
	   oideq_by_value)

/* Changesets seen, for the heads. */
struct cs_seen {
	struct hg_oid node, p1, p2;
	struct object_id commit;
	char *branch;
};

/* One run of fsck_metadata: what it checks, where it writes, what it saw. */
struct fsck_run {
	FILE *out;
	struct fsck_counts *counts;
	unsigned checks;		/* CHECK_* flags: which ids to hash */
	/*
	 * The types of the objects hg2git maps to, found while reading it
	 * in a full check (else NULL): a type takes following a chain of
	 * deltas in the pack, and the blobs and commits are looked at
	 * again by the later checks.
	 */
	kh_oid_pos_t *types;
	kh_manifest_state_t *manifest_state;
	kh_oid_set_t *files_checked;
	/* The file revisions whose ids are checked last (queue_file). */
	struct file_checks queued;
	kh_mcommit_t *mcommits;		/* full check only, else NULL */
	struct oid_array *grafts;	/* commits that may be grafted */
	struct cs_seen *seen;
	size_t seen_nr, seen_alloc;
};

__attribute__((format (printf, 2, 3)))
static void problem(struct fsck_run *run, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	answer_message(run->out, "problem", msg.buf, msg.len);
	run->counts->problems++;
	strbuf_release(&msg);
}

static int type_of(struct fsck_run *run, const struct object_id *oid)
{
	khiter_t pos;

	if (run->types && (pos = kh_get_oid_pos(run->types, *oid)) !=
	    kh_end(run->types))
		return kh_value(run->types, pos);
	return cinnabar_object_info(oid, NULL);
}

static int hg2git_type(struct fsck_run *run, const struct object_id *oid)
{
	int type = cinnabar_object_info(oid, NULL), ret;
	khiter_t pos = kh_put_oid_pos(run->types, *oid, &ret);
	kh_value(run->types, pos) = type;
	return type;
}

/*
 * The changeset a git2hg note names: 0, -1 without a note, -2 if bad.
 * With `text`, the note's text is kept there when good.
 */
static int noted_changeset_text(const struct object_id *commit,
				struct hg_oid *node,
				const struct object_id **note,
				struct strbuf *text)
{
	unsigned long len;
	char *buf;
	int ret;

	enum object_type type;

	*note = notes_map_get(&metadata.git2hg, commit);
	if (!*note)
		return -1;
	buf = store_read_object(*note, &type, &len);
	ret = !buf || type != OBJ_BLOB ||
	      note_changeset_id(buf, len, node) ? -2 : 0;
	if (text && !ret)
		strbuf_attach(text, buf, len, len + 1);
	else
		free(buf);
	return ret;
}

/* The changeset of `commit` (through the replace map, as git2hg). */
static int noted_changeset(const struct object_id *commit, struct hg_oid *node,
			   const struct object_id **note)
{
	return noted_changeset_text(replace_lookup(commit), node, note, NULL);
}

static struct manifest_state *seen_manifest(struct fsck_run *run,
					    const struct hg_oid *node)
{
	struct object_id key;
	khiter_t pos;
	hg_oid_to_git(&key, node);
	pos = kh_get_manifest_state(run->manifest_state, key);
	if (pos == kh_end(run->manifest_state))
		return NULL;
	return &kh_value(run->manifest_state, pos);
}

static void set_manifest_state(struct fsck_run *run, const struct hg_oid *node,
			       int good, const struct object_id *git_tree)
{
	struct object_id key;
	int ret;
	khiter_t pos;
	hg_oid_to_git(&key, node);
	pos = kh_put_manifest_state(run->manifest_state, key, &ret);
	kh_value(run->manifest_state, pos).good = good;
	if (git_tree)
		oidcpy(&kh_value(run->manifest_state, pos).git_tree, git_tree);
}

/*
 * A file revision a manifest introduces: its id must come from its blob,
 * its files-meta entry and parents among the path's revisions in the
 * parent manifests (a, b). What needs no content is checked at once
 * (queue_file: the blob must exist; each revision is checked once); the
 * ids, which need every text, are computed later (fsck-files.c), so that
 * they can be shared between processes.
 */
struct queue_context {
	struct fsck_run *run;
	const struct hg_oid *manifest;
	int merge;		/* the manifest has two parents */
};

static int queue_file(const char *path, size_t len, const struct hg_oid *node,
		      const struct hg_oid *a, const struct hg_oid *b,
		      void *data)
{
	const struct queue_context *ctx = data;
	struct fsck_run *run = ctx->run;
	const struct hg_oid *manifest = ctx->manifest;
	const struct object_id *blob;
	struct object_id key;
	int ret;

	if (hg_oideq(node, &hg_empty_file_oid))
		return 0;
	blob = hg2git(node);
	if (!blob) {
		problem(run, "manifest %s lists file revision %s ('%.*s') that "
			"hg2git does not have", hg_oid_to_hex(manifest),
			hg_oid_to_hex(node), (int)len, path);
		return -1;
	}
	hg_oid_to_git(&key, node);
	kh_put_oid_set(run->files_checked, key, &ret);
	if (!ret)
		return 0;
	if (type_of(run, blob) != OBJ_BLOB) {
		problem(run, "file revision %s ('%.*s'): hg2git maps it to %s, "
			"which is not a blob in the repository",
			hg_oid_to_hex(node), (int)len, path, oid_to_hex(blob));
		return -1;
	}
	run->counts->files++;
	if (run->checks & CHECK_FILES)
		file_checks_add(&run->queued, node, a, b, path, len, manifest,
				blob, ctx->merge);
	return 0;
}

static void mcommit_from(struct mcommit *m, const struct raw_commit *c)
{
	size_t i;

	oidcpy(&m->tree, &c->tree);
	m->nparents = c->parents.nr;
	for (i = 0; i < 2 && i < c->parents.nr; i++)
		oidcpy(&m->parents[i], &c->parents.oid[i]);
	m->named = !manifest_commit_body_node(c, &m->node);
}

static void keep_mcommit(struct fsck_run *run, const struct object_id *commit,
			 const struct raw_commit *c)
{
	int ret;
	khiter_t pos = kh_put_mcommit(run->mcommits, *commit, &ret);
	mcommit_from(&kh_value(run->mcommits, pos), c);
}

/* Return -1 if `commit` is not a commit. */
static int get_mcommit(struct fsck_run *run, const struct object_id *commit,
		       struct mcommit *m)
{
	struct raw_commit c;
	khiter_t pos;

	if (!commit)
		return -1;
	if (run->mcommits && (pos = kh_get_mcommit(run->mcommits, *commit)) !=
	    kh_end(run->mcommits)) {
		*m = kh_value(run->mcommits, pos);
		return 0;
	}
	if (raw_commit_read(&c, commit))
		return -1;
	mcommit_from(m, &c);
	raw_commit_release(&c);
	return 0;
}

/* A parent commit of manifest `child`: its hg id and manifest tree. */
static int load_parent(struct fsck_run *run, const struct object_id *commit,
		       struct hg_oid *node, struct object_id *tree,
		       const struct hg_oid *child)
{
	struct mcommit m;
	const struct object_id *known;

	if (get_mcommit(run, commit, &m) || !m.named) {
		problem(run,
			"manifest %s: its parent commit %s is not a manifest "
			"commit", hg_oid_to_hex(child), oid_to_hex(commit));
		return -1;
	}
	hg_oidcpy(node, &m.node);
	if (!(known = hg2git(node)) || !oideq(known, commit)) {
		problem(run,
			"manifest %s: its parent commit %s is manifest %s, "
			"which hg2git maps to %s", hg_oid_to_hex(child),
			oid_to_hex(commit), hg_oid_to_hex(node),
			known ? oid_to_hex(known) : "nothing");
		return -1;
	}
	oidcpy(tree, &m.tree);
	return 0;
}

/* The commit of a manifest: 0 when it is one, with at most two parents. */
static int read_manifest_commit(struct fsck_run *run,
				const struct hg_oid *node,
				const struct object_id *commit,
				struct mcommit *m)
{
	if (get_mcommit(run, commit, m)) {
		problem(run,
			"manifest %s: hg2git maps it to %s, which is not a "
			"commit in the repository", hg_oid_to_hex(node),
			oid_to_hex(commit));
		return -1;
	}
	if (!m->named || !hg_oideq(&m->node, node))
		problem(run,
			"manifest %s: its commit %s does not name it in its "
			"message", hg_oid_to_hex(node), oid_to_hex(commit));
	else if (m->nparents > 2)
		problem(run,
			"manifest %s: its commit %s has more than two parents",
			hg_oid_to_hex(node), oid_to_hex(commit));
	else
		return 0;
	return -1;
}

/*
 * Check a manifest and queue the file revisions it introduces; 0 when
 * good, its git tree then kept for check_changeset_tree.
 */
static int check_manifest(struct fsck_run *run, const struct hg_oid *node)
{
	const struct object_id *commit = hg2git(node);
	struct manifest_state *state = seen_manifest(run, node);
	struct mcommit c;
	struct hg_oid p[2], check;
	struct object_id ptree[2], git_tree;
	struct queue_context ctx = { run, node, 0 };
	int bad = 0;
	size_t i;

	if (state)
		return state->good ? 0 : -1;
	run->counts->manifests++;
	hg_oidcpy(&p[0], &hg_null_oid);
	hg_oidcpy(&p[1], &hg_null_oid);
	if (read_manifest_commit(run, node, commit, &c)) {
		set_manifest_state(run, node, 0, NULL);
		return -1;
	}
	for (i = 0; !bad && i < c.nparents; i++)
		bad = load_parent(run, &c.parents[i], &p[i], &ptree[i], node);
	if (!bad) {
		if (manifest_tree_check(&c.tree, node, &p[0], &p[1], &check,
					&git_tree)) {
			problem(run,
				"manifest %s: its tree %s (commit %s) gives "
				"manifest %s instead (the manifest tree was "
				"changed, or the manifest has a path that is "
				"both a file and a directory, which the "
				"metadata cannot keep)", hg_oid_to_hex(node),
				oid_to_hex(&c.tree), oid_to_hex(commit),
				hg_oid_to_hex(&check));
			bad = 1;
		}
	}
	ctx.merge = c.nparents > 1;
	if (!bad)
		bad = manifest_tree_changes(&c.tree,
					    c.nparents > 0 ? &ptree[0] : NULL,
					    c.nparents > 1 ? &ptree[1] : NULL,
					    queue_file, &ctx) != 0;
	set_manifest_state(run, node, !bad, bad ? NULL : &git_tree);
	return bad ? -1 : 0;
}

static void remember_changeset(struct fsck_run *run, const struct hg_oid *node,
			       const struct hg_oid *p,
			       const struct object_id *commit,
			       const struct hg_changeset *cs)
{
	struct cs_seen *s;
	size_t len;
	const char *branch = changeset_extra_branch(cs, &len);

	ALLOC_GROW(run->seen, run->seen_nr + 1, run->seen_alloc);
	s = &run->seen[run->seen_nr++];
	hg_oidcpy(&s->node, node);
	hg_oidcpy(&s->p1, &p[0]);
	hg_oidcpy(&s->p2, &p[1]);
	oidcpy(&s->commit, commit);
	s->branch = branch ? xmemdupz(branch, len) : xstrdup("default");
}

static int changeset_parents(struct fsck_run *run, const struct hg_oid *node,
			     const struct raw_commit *c, struct hg_oid *p)
{
	const struct object_id *note;
	size_t i;

	hg_oidcpy(&p[0], &hg_null_oid);
	hg_oidcpy(&p[1], &hg_null_oid);
	if (c->parents.nr > 2) {
		problem(run,
			"changeset %s: its commit has more than two parents",
			hg_oid_to_hex(node));
		return -1;
	}
	for (i = 0; i < c->parents.nr; i++) {
		if (noted_changeset(&c->parents.oid[i], &p[i], &note)) {
			problem(run,
				"changeset %s: the parent %s of its commit is "
				"not a changeset the metadata knows",
				hg_oid_to_hex(node),
				oid_to_hex(&c->parents.oid[i]));
			return -1;
		}
	}
	return 0;
}

/* The manifest tree of changeset commit `commit`'s manifest, or NULL. */
static const struct object_id *manifest_tree_of(struct fsck_run *run,
						const struct hg_oid *manifest,
						struct object_id *tree)
{
	struct mcommit m;

	if (hg_oid_is_null(manifest) ||
	    get_mcommit(run, hg2git(manifest), &m))
		return NULL;
	oidcpy(tree, &m.tree);
	return tree;
}

/*
 * The files list must be what Mercurial's commit lists for the change
 * from the parents' manifests (fsck-changes.h); the changeset and its
 * manifest were found good.
 */
static void check_changeset_files(struct fsck_run *run,
				  const struct hg_oid *node,
				  const struct object_id *commit,
				  const struct raw_commit *c,
				  const struct hg_changeset *cs)
{
	struct object_id trees[3];
	const struct object_id *tree, *parents[2] = { NULL, NULL };
	struct strbuf msg = STRBUF_INIT;
	struct hg_oid pm;
	size_t i;

	tree = manifest_tree_of(run, &cs->manifest, &trees[2]);
	for (i = 0; i < c->parents.nr && i < 2; i++) {
		if (git2hg_manifest(&c->parents.oid[i], &pm))
			return;	/* reported with that parent */
		parents[i] = manifest_tree_of(run, &pm, &trees[i]);
	}
	strbuf_addf(&msg, "changeset %s (commit %s): ", hg_oid_to_hex(node),
		    oid_to_hex(commit));
	/* A change Mercurial would not record so: not damage. */
	if (files_list_unlike_hg(&msg, cs->files, tree, parents,
				 c->parents.nr))
		answer_message(run->out, "unlike-hg", msg.buf, msg.len);
	strbuf_release(&msg);
}

/* The changeset's manifest must be good, and give the commit's tree. */
static void check_changeset_tree(struct fsck_run *run,
				 const struct hg_oid *node,
				 const struct object_id *commit,
				 const struct raw_commit *c,
				 const struct hg_changeset *cs)
{
	const struct object_id *m = NULL;
	struct object_id tree;

	if (!hg_oid_is_null(&cs->manifest) &&
	    (!(m = hg2git(&cs->manifest)) || type_of(run, m) != OBJ_COMMIT)) {
		problem(run,
			"changeset %s (commit %s) names manifest %s, which "
			"the metadata does not have", hg_oid_to_hex(node),
			oid_to_hex(commit), hg_oid_to_hex(&cs->manifest));
		return;
	}
	if (m && check_manifest(run, &cs->manifest))
		return;
	if (m)
		oidcpy(&tree, &seen_manifest(run, &cs->manifest)->git_tree);
	else
		store_object_buf(OBJ_TREE, "", 0, &tree);
	if (!oideq(&tree, &c->tree))
		problem(run, "changeset %s: its commit %s has tree %s, but its "
			"manifest %s gives tree %s", hg_oid_to_hex(node),
			oid_to_hex(commit), oid_to_hex(&c->tree),
			hg_oid_to_hex(&cs->manifest), oid_to_hex(&tree));
	else
		check_changeset_files(run, node, commit, c, cs);
}

/* Whether `commit` is among the commits the run may find grafted. */
static int is_listed_graft(struct fsck_run *run,
			   const struct object_id *commit)
{
	return run->grafts && oid_array_lookup(run->grafts, commit) >= 0;
}

/*
 * The commit must be the one an import makes of the changeset (import.h),
 * so that a note holds only what that conversion puts there, not another
 * author or message its fields turn back into the changeset's. Its tree
 * and parents are checked apart: they are taken as they are. A message
 * lengthened for a conflict keeps the filler it was made with.
 */
static void check_changeset_commit(struct fsck_run *run,
				   const struct hg_oid *node,
				   const struct object_id *commit,
				   const struct raw_commit *c,
				   const struct hg_changeset *cs)
{
	struct strbuf expected = STRBUF_INIT;
	struct object_id oid;
	char filler;

	if (run->checks & FSCK_GRAFTED)
		return;
	/* A replacement is what an import makes, whoever has it. */
	if (is_listed_graft(run, commit) &&
	    oideq(replace_original(commit), commit)) {
		/* As a fetch grafts (graft.h): the tree and the parents are
		 * checked apart, the changeset id always. */
		if (!graft_same_date(c, cs))
			problem(run, "commit %s for changeset %s is not a "
				"graft of it: its author date is not the "
				"changeset's", oid_to_hex(commit),
				hg_oid_to_hex(node));
		return;
	}
	changeset_commit(&expected, cs, &c->tree, c->parents.oid,
			 c->parents.nr);
	filler = c->len > expected.len && !c->buf[expected.len] ? '\0' : '\n';
	changeset_commit_id(&expected, node, filler, &oid);
	if (!oideq(&oid, commit))
		problem(run, "commit %s for changeset %s is not the commit its "
			"changeset converts to: would be %s",
			oid_to_hex(commit), hg_oid_to_hex(node),
			oid_to_hex(&oid));
	strbuf_release(&expected);
}

/* Whether `node` is the id of `text` with parents p1, p2 (in `check`). */
static int hg_hash_is(const struct hg_oid *p1, const struct hg_oid *p2,
		      const char *text, size_t len, const struct hg_oid *node,
		      struct hg_oid *check)
{
	hg_hash(p1, p2, text, len, check);
	return hg_oideq(check, node);
}

static void check_changeset(struct fsck_run *run, const struct hg_oid *node,
			    const struct object_id *commit)
{
	static struct strbuf text = STRBUF_INIT;
	const struct object_id *note;
	struct raw_commit c;
	struct hg_changeset cs;
	struct hg_oid noted, p[2], check;
	struct strbuf note_text = STRBUF_INIT;
	int ret;

	run->counts->changesets++;
	if (raw_commit_read(&c, commit)) {
		problem(run,
			"changeset %s: hg2git maps it to %s, which is not a "
			"commit in the repository", hg_oid_to_hex(node),
			oid_to_hex(commit));
		goto out;
	}
	ret = noted_changeset_text(commit, &noted, &note, &note_text);
	if (ret == -1) {
		problem(run, "changeset %s: its commit %s has no git2hg note",
			hg_oid_to_hex(node), oid_to_hex(commit));
		goto out;
	}
	if (ret == -2 || !hg_oideq(&noted, node)) {
		problem(run,
			"changeset %s: the git2hg note %s of its commit %s "
			"names %s", hg_oid_to_hex(node), oid_to_hex(note),
			oid_to_hex(commit),
			ret ? "no changeset" : hg_oid_to_hex(&noted));
		goto out;
	}
	if (changeset_parents(run, node, &c, p))
		goto out;
	if (changeset_from_commit(&text, c.buf, c.len, note_text.buf,
				  note_text.len, &p[0], &p[1]) ||
	    parse_changeset(&cs, text.buf, text.len)) {
		problem(run,
			"changeset %s: the git2hg note %s of its commit %s is "
			"malformed", hg_oid_to_hex(node), oid_to_hex(note),
			oid_to_hex(commit));
		goto out;
	}
	if ((run->checks & CHECK_NODEID || is_listed_graft(run, commit)) &&
	    !hg_hash_is(&p[0], &p[1], text.buf, text.len, node, &check)) {
		problem(run,
			"changeset %s: its commit %s and git2hg note %s give "
			"changeset %s instead (the commit or the note was "
			"changed)", hg_oid_to_hex(node), oid_to_hex(commit),
			oid_to_hex(note), hg_oid_to_hex(&check));
		goto out;
	}
	remember_changeset(run, node, p, commit, &cs);
	check_changeset_commit(run, node, commit, &c, &cs);
	check_changeset_tree(run, node, commit, &c, &cs);
out:
	strbuf_release(&note_text);
	raw_commit_release(&c);
}

/* The full check: every mapping, both ways, and the heads. */
struct hg2git_entries {
	struct fsck_run *run;
	struct hg_oid *changesets;
	size_t nr, alloc;
	struct hg_oid *manifests;
	size_t manifests_nr, manifests_alloc;
	struct meter *progress;
	uint64_t seen;
};

/* Whether `commit` is a manifest commit (kept in `mcommits` if so). */
static int is_manifest_commit(struct fsck_run *run,
			      const struct object_id *commit)
{
	struct raw_commit c;
	struct hg_oid node;
	int ret = !raw_commit_read(&c, commit) &&
		  strstr(c.buf, "\n" CINNABAR_AUTHORSHIP "\n") &&
		  !manifest_commit_body_node(&c, &node);
	if (ret)
		keep_mcommit(run, commit, &c);
	raw_commit_release(&c);
	return ret;
}

static void sort_hg2git_entry(const struct object_id *key,
			      const struct object_id *value, void *data)
{
	struct hg2git_entries *e = data;
	struct hg_oid node;
	int type = hg2git_type(e->run, value);

	git_oid_to_hg(&node, key);
	meter_update(e->progress, ++e->seen);
	/*
	 * Only changeset commits have git2hg notes: reading the commit to
	 * tell is only needed without one (check_changeset checks the note).
	 */
	if (type == OBJ_COMMIT && (notes_map_get(&metadata.git2hg, value) ||
				   !is_manifest_commit(e->run, value))) {
		ALLOC_GROW(e->changesets, e->nr + 1, e->alloc);
		hg_oidcpy(&e->changesets[e->nr++], &node);
	} else if (type == OBJ_COMMIT) {
		ALLOC_GROW(e->manifests, e->manifests_nr + 1,
			   e->manifests_alloc);
		hg_oidcpy(&e->manifests[e->manifests_nr++], &node);
	} else if (type != OBJ_BLOB) {
		problem(e->run, "hg2git maps %s to %s, which is %s",
			hg_oid_to_hex(&node),
			oid_to_hex(value), type < 0 ? "not in the repository" :
			"neither a commit nor a blob");
	}
}

static void check_git2hg_entry(const struct object_id *commit,
			       const struct object_id *note, void *data)
{
	struct fsck_run *run = data;
	struct hg_oid node;
	const struct object_id *back, *n;

	if (noted_changeset(commit, &node, &n)) {
		problem(run, "the git2hg note %s of commit %s is malformed or "
			"missing", oid_to_hex(note), oid_to_hex(commit));
		return;
	}
	back = hg2git(&node);
	if (!back || !oideq(back, commit))
		problem(run, "the git2hg note of commit %s names changeset %s, "
			"which hg2git maps to %s", oid_to_hex(commit),
			hg_oid_to_hex(&node), back ? oid_to_hex(back) : "nothing");
}

static void check_files_meta_entry(const struct object_id *key,
				   const struct object_id *meta, void *data)
{
	struct fsck_run *run = data;
	struct hg_oid node;
	const struct object_id *blob;

	git_oid_to_hg(&node, key);
	blob = hg2git(&node);
	if (!blob || type_of(run, blob) != OBJ_BLOB)
		problem(run,
			"files-meta has metadata for file revision %s, which "
			"hg2git does not map to a blob", hg_oid_to_hex(&node));
	if (type_of(run, meta) != OBJ_BLOB)
		problem(run, "the files-meta entry of file revision %s is %s, "
			"which is not a blob in the repository",
			hg_oid_to_hex(&node), oid_to_hex(meta));
}

/*
 * Every git2hg note and files-meta entry of `data`'s run; problems go to
 * `o` (in the forked file checker, its own file: see fsck-files.h).
 */
static void check_notes(FILE *o, void *data)
{
	struct fsck_run *run = data;

	run->out = o;
	notes_map_for_each(&metadata.git2hg, check_git2hg_entry, run);
	notes_map_for_each(&metadata.files_meta, check_files_meta_entry, run);
}

static int cs_seen_cmp(const void *a, const void *b)
{
	return hg_oidcmp(&((const struct cs_seen *)a)->node,
			 &((const struct cs_seen *)b)->node);
}

static struct cs_seen *find_seen(struct fsck_run *run,
				 const struct hg_oid *node)
{
	struct cs_seen key;
	hg_oidcpy(&key.node, node);
	return bsearch(&key, run->seen, run->seen_nr, sizeof(*run->seen),
		       cs_seen_cmp);
}

static void unmark_recorded_head(const struct hg_oid *node,
				 const struct object_id *commit,
				 const char *branch, void *data)
{
	struct fsck_run *run = data;
	struct cs_seen *s = find_seen(run, node);
	if (s && !oideq(&s->commit, commit)) {
		problem(run, "the changeset heads list %s with commit %s, but "
			"hg2git maps it to %s", hg_oid_to_hex(node),
			oid_to_hex(commit), oid_to_hex(&s->commit));
		if (s->branch && !strcmp(s->branch, branch))
			FREE_AND_NULL(s->branch);
		return;
	}
	if (!s || !s->branch || strcmp(s->branch, branch)) {
		problem(run,
			"the changeset heads list %s (commit %s, branch '%s'), "
			"which is not a head of that branch",
			hg_oid_to_hex(node), oid_to_hex(commit), branch);
		return;
	}
	FREE_AND_NULL(s->branch);	/* recorded: not reported below */
}

static void check_changeset_heads(struct fsck_run *run)
{
	struct cs_seen *seen = run->seen;
	size_t seen_nr = run->seen_nr, i, j;
	unsigned char *not_head = xcalloc(seen_nr ? seen_nr : 1, 1);

	QSORT(seen, seen_nr, cs_seen_cmp);
	for (i = 0; i < seen_nr; i++) {
		for (j = 0; j < 2; j++) {
			struct cs_seen *p = find_seen(run, j ? &seen[i].p2
							     : &seen[i].p1);
			if (p && !strcmp(p->branch, seen[i].branch))
				not_head[p - seen] = 1;
		}
	}
	for (i = 0; i < seen_nr; i++)
		if (not_head[i])
			FREE_AND_NULL(seen[i].branch);
	for_each_changeset_head(unmark_recorded_head, run);
	for (i = 0; i < seen_nr; i++)
		if (seen[i].branch)
			problem(run, "changeset %s (commit %s) is a head of "
				"branch '%s' that the changeset heads do not "
				"list", hg_oid_to_hex(&seen[i].node),
				oid_to_hex(&seen[i].commit), seen[i].branch);
	free(not_head);
}

/*
 * The manifest heads recorded must be the manifest commits that no other
 * is a parent of; `is_parent` comes from order_manifests.
 */
static void check_manifest_heads(struct fsck_run *run,
				 const struct hg_oid *manifests, size_t nr,
				 const unsigned char *is_parent)
{
	struct oid_array all = OID_ARRAY_INIT;
	size_t i;

	for (i = 0; i < nr; i++)
		oid_array_append(&all, hg2git(&manifests[i]));
	for (i = 0; i < nr; i++) {
		int head = !is_parent[i];
		int listed = oid_array_lookup(&metadata.manifest_heads,
					      &all.oid[i]) >= 0;
		if (head != listed)
			problem(run, "manifest commit %s is %sa head, but the "
				"manifest heads %s it", oid_to_hex(&all.oid[i]),
				head ? "" : "not ", head ? "do not list" : "list");
	}
	for (i = 0; i < metadata.manifest_heads.nr; i++)
		if (oid_array_lookup(&all, &metadata.manifest_heads.oid[i]) < 0)
			problem(run,
				"the manifest heads list %s, which is not a "
				"manifest commit hg2git knows",
				oid_to_hex(&metadata.manifest_heads.oid[i]));
	oid_array_clear(&all);
}

/*
 * Order manifests parents first (a depth-first walk of the manifest
 * commits' parents), so that a manifest's subtrees are most often still
 * kept (fsck-manifest.h) from its parent's check.
 */
static void order_manifests(struct fsck_run *run,
			    struct hg_oid *manifests, size_t nr,
			    unsigned char **is_parent_out)
{
	unsigned char *is_parent = xcalloc(nr ? nr : 1, 1);
	kh_oid_pos_t *index = kh_init_oid_pos();
	int (*parents)[2];
	unsigned char *state = xcalloc(nr ? nr : 1, 1);
	size_t *stack, *order, sp = 0, n = 0, i;
	struct hg_oid *sorted;
	int ret;

	ALLOC_ARRAY(parents, nr ? nr : 1);
	ALLOC_ARRAY(stack, 3 * nr + 1);
	ALLOC_ARRAY(order, nr ? nr : 1);
	for (i = 0; i < nr; i++) {
		khiter_t pos = kh_put_oid_pos(index, *hg2git(&manifests[i]), &ret);
		kh_value(index, pos) = i;
	}
	for (i = 0; i < nr; i++) {
		struct mcommit m;
		struct raw_commit c;
		const struct object_id *p;
		size_t j, count = 0;

		parents[i][0] = parents[i][1] = -1;
		memset(&c, 0, sizeof(c));
		if (!get_mcommit(run, hg2git(&manifests[i]), &m) &&
		    (m.nparents <= 2 ||
		     !raw_commit_read(&c, hg2git(&manifests[i]))))
			count = m.nparents;
		for (j = 0; j < count; j++) {
			khiter_t pos;
			p = j < 2 ? &m.parents[j] : &c.parents.oid[j];
			pos = kh_get_oid_pos(index, *p);
			if (pos == kh_end(index))
				continue;
			is_parent[kh_value(index, pos)] = 1;
			if (j < 2)
				parents[i][j] = kh_value(index, pos);
		}
		if (count > 2)
			raw_commit_release(&c);
	}
	for (i = 0; i < nr; i++) {
		if (state[i])
			continue;
		stack[sp++] = i;
		while (sp) {
			size_t t = stack[sp - 1];
			int j;
			if (state[t] == 0) {
				state[t] = 1;
				for (j = 1; j >= 0; j--)
					if (parents[t][j] >= 0 &&
					    !state[parents[t][j]])
						stack[sp++] = parents[t][j];
			} else {
				if (state[t] == 1) {
					state[t] = 2;
					order[n++] = t;
				}
				sp--;
			}
		}
	}
	ALLOC_ARRAY(sorted, nr ? nr : 1);
	*is_parent_out = xcalloc(nr ? nr : 1, 1);
	for (i = 0; i < n; i++) {
		hg_oidcpy(&sorted[i], &manifests[order[i]]);
		(*is_parent_out)[i] = is_parent[order[i]];
	}
	COPY_ARRAY(manifests, sorted, n);
	free(sorted);
	free(is_parent);
	free(order);
	free(stack);
	free(state);
	free(parents);
	kh_destroy_oid_pos(index);
}

static void check_everything(struct fsck_run *run)
{
	struct hg2git_entries e = { run };
	unsigned char *is_parent;
	struct meter *progress;
	size_t i;

	run->types = kh_init_oid_pos();
	run->mcommits = kh_init_mcommit();
	e.progress = meter_start(_("Reading hg2git"),
				 notes_map_size(&metadata.hg2git), NULL);
	notes_map_for_each(&metadata.hg2git, sort_hg2git_entry, &e);
	meter_stop(&e.progress);
	order_manifests(run, e.manifests, e.manifests_nr, &is_parent);
	progress = meter_start(_("Checking manifests and files"),
			       e.manifests_nr, NULL);
	for (i = 0; i < e.manifests_nr; i++) {
		check_manifest(run, &e.manifests[i]);
		meter_update(progress, i + 1);
	}
	meter_stop(&progress);
	/* The file ids: another process may check them meanwhile. */
	file_checks_start(&run->queued, run->out, check_notes, run);
	progress = meter_start(_("Checking changesets"), e.nr, NULL);
	for (i = 0; i < e.nr; i++) {
		check_changeset(run, &e.changesets[i],
				hg2git(&e.changesets[i]));
		meter_update(progress, i + 1);
	}
	meter_stop(&progress);
	check_changeset_heads(run);
	check_manifest_heads(run, e.manifests, e.manifests_nr, is_parent);
	free(is_parent);
	run->counts->problems += file_checks_finish(&run->queued, run->out);
	free(e.changesets);
	free(e.manifests);
}

static void check_commits(struct fsck_run *run,
			  const struct oid_array *commits)
{
	struct meter *progress;
	size_t i;

	progress = meter_start(_("Checking changesets"), commits->nr,
			       NULL);
	for (i = 0; i < commits->nr; i++) {
		const struct object_id *note, *back;
		const struct object_id *commit = replace_lookup(&commits->oid[i]);
		struct hg_oid node;
		if (noted_changeset(commit, &node, &note))
			problem(run, "commit %s has no valid git2hg note",
				oid_to_hex(&commits->oid[i]));
		else if (!(back = hg2git(&node)) || !oideq(back, commit))
			problem(run,
				"the git2hg note of commit %s names changeset "
				"%s, which hg2git maps to %s",
				oid_to_hex(commit), hg_oid_to_hex(&node),
				back ? oid_to_hex(back) : "nothing");
		else
			check_changeset(run, &node, commit);
		meter_update(progress, i + 1);
	}
	meter_stop(&progress);
	file_checks_start(&run->queued, run->out, NULL, NULL);
	run->counts->problems += file_checks_finish(&run->queued, run->out);
}

/* Whether commits `a` and `b` have the same author date (in seconds). */
static int same_author_date(const struct raw_commit *a,
			    const struct raw_commit *b)
{
	struct hg_authorship x = HG_AUTHORSHIP_INIT, y = HG_AUTHORSHIP_INIT;
	int same = a->author.buf && b->author.buf &&
		   !hg_authorship_from_git(&x, a->author.buf, a->author.len) &&
		   !hg_authorship_from_git(&y, b->author.buf, b->author.len) &&
		   !strbuf_cmp(&x.timestamp, &y.timestamp);
	hg_authorship_release(&x);
	hg_authorship_release(&y);
	return same;
}

/*
 * Metadata received (run->grafts set): a replaced commit must be one of
 * this repository's that a fetch could graft onto (listed), with the tree
 * and author date of its replacement, as graft.h picks one.
 */
static void check_received_replace(struct fsck_run *run,
				   const struct object_id *replaced,
				   const struct object_id *replacement)
{
	struct raw_commit a, b;

	if (!is_listed_graft(run, replaced)) {
		problem(run, "replace: commit %s is replaced by %s, but it is "
			"not one of this repository's commits a fetch could "
			"graft onto", oid_to_hex(replaced),
			oid_to_hex(replacement));
		return;
	}
	if (raw_commit_read(&a, replaced)) {
		problem(run, "replace: commit %s is replaced by %s, but it is "
			"not a commit", oid_to_hex(replaced),
			oid_to_hex(replacement));
		return;
	}
	if (raw_commit_read(&b, replacement))
		problem(run, "replace: commit %s is replaced by %s, which is "
			"not a commit", oid_to_hex(replaced),
			oid_to_hex(replacement));
	else {
		if (!oideq(&a.tree, &b.tree) || !same_author_date(&a, &b))
			problem(run, "replace: commit %s is replaced by %s, "
				"whose tree or author date is not its own",
				oid_to_hex(replaced), oid_to_hex(replacement));
		raw_commit_release(&b);
	}
	raw_commit_release(&a);
}

/* A replacement must be the commit of the changeset its note names. */
static void check_replace(const struct object_id *replaced,
			  const struct object_id *replacement, void *data)
{
	struct fsck_run *run = data;
	const struct object_id *note, *back;
	struct hg_oid node;

	if (noted_changeset_text(replacement, &node, &note, NULL))
		problem(run, "replace: commit %s is replaced by %s, which is "
			"not a changeset's commit", oid_to_hex(replaced),
			oid_to_hex(replacement));
	else if (!(back = hg2git(&node)) || !oideq(back, replacement))
		problem(run, "replace: commit %s is replaced by %s, whose "
			"git2hg note names changeset %s, which hg2git maps to "
			"%s", oid_to_hex(replaced), oid_to_hex(replacement),
			hg_oid_to_hex(&node), back ? oid_to_hex(back) : "nothing");
	else if (run->grafts)
		check_received_replace(run, replaced, replacement);
}

void fsck_metadata(const struct oid_array *commits, unsigned flags,
		   struct oid_array *grafts, FILE *out,
		   struct fsck_counts *counts)
{
	struct fsck_run run = { out, counts, flags };
	size_t i;

	memset(counts, 0, sizeof(*counts));
	run.manifest_state = kh_init_manifest_state();
	run.files_checked = kh_init_oid_set();
	run.grafts = grafts;
	/*
	 * Grafted through a replace: the commits need not be ours; but not
	 * in metadata received (`grafts` given), whose replacements must be.
	 */
	if (replace_map_size() && !grafts)
		run.checks |= FSCK_GRAFTED;
	for_each_replace(check_replace, &run);
	/* Every object of the metadata is read, from all over the packs. */
	store_read_all(1);
	if (commits)
		check_commits(&run, commits);
	else
		check_everything(&run);
	store_read_all(0);
	kh_destroy_manifest_state(run.manifest_state);
	kh_destroy_oid_set(run.files_checked);
	if (run.types)
		kh_destroy_oid_pos(run.types);
	if (run.mcommits)
		kh_destroy_mcommit(run.mcommits);
	manifest_trees_reset();
	for (i = 0; i < run.seen_nr; i++)
		free(run.seen[i].branch);
	free(run.seen);
	file_reset_cache();
}
