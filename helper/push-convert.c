/*
 * A git commit to push as a changeset (push-state.h), with its manifest
 * and file revisions (depends on push-manifests.c, for the manifests it
 * reads and makes, and push-state.c):
 *   - a commit that came from Mercurial (it has a git2hg note) gives its
 *     stored changeset and manifest; its file revisions are those of its
 *     manifest that neither parent manifest has (their parents are found
 *     when they are written: push-files.c);
 *   - another commit is converted, as `hg commit` would make the same
 *     change: its manifest is its first parent's with the files that
 *     differ in the git trees (compared in git's order: tree-iter.h); a
 *     file whose content and mode did not change keeps its revision, a
 *     mode change keeps the revision with a new flag, a new content makes
 *     a new revision whose parents are the path's revisions in the parent
 *     manifests (in a merge, a content equal to one side's keeps that
 *     side's revision); a file added that git's copy detection pairs
 *     with a file of the first parent is recorded as copied from it
 *     (git_copies: "copy"/"copyrev" metadata, no parents), unless a merge
 *     takes it from its second parent as it is; the changeset takes its
 *     branch from its first parent, its user, date and description from
 *     the commit, a "committer" extra when the committer differs from the
 *     author, with the git_commit experiment a "git_commit" extra
 *     (the commit's id), and a "topic" extra when the push gave one.
 */
#include "libgit.h"
#include "commit.h"
#include "commit-reach.h"
#include "diff.h"
#include "diffcore.h"
#include "authorship.h"
#include "changeset.h"
#include "experiments.h"
#include "file.h"
#include "file-parents.h"
#include "hg-path.h"
#include "import.h"
#include "manifest.h"
#include "metadata.h"
#include "raw-commit.h"
#include "store.h"
#include "tree-iter.h"
#include "push-manifests.h"
#include "push-convert.h"

/* The manifests of a changeset's parents, into mp1 and mp2. */
static void parent_manifests(struct push_state *st, struct cs_rev *cs)
{
	struct strbuf text = STRBUF_INIT;
	int i;

	for (i = 0; i < 2; i++) {
		const struct hg_oid *p = i ? &cs->p2 : &cs->p1;
		struct hg_oid *mp = i ? &cs->mp2 : &cs->mp1;
		struct hg_changeset pc;
		hg_oidcpy(mp, &hg_null_oid);
		if (hg_oid_is_null(p))
			continue;
		push_changeset_text(st, p, &text);
		if (parse_changeset(&pc, text.buf, text.len))
			die("changeset %s is damaged", hg_oid_to_hex(p));
		hg_oidcpy(mp, &pc.manifest);
	}
	strbuf_release(&text);
}

void push_add_stored(struct push_state *st, struct cs_rev *cs)
{
	struct hg_changeset parsed;
	const struct push_manifest *m, *m1, *m2;
	size_t i, j;

	changeset_text(&cs->node, &cs->text);
	if (parse_changeset(&parsed, cs->text.buf, cs->text.len))
		die("changeset %s is damaged", hg_oid_to_hex(&cs->node));
	hg_oidcpy(&cs->manifest, &parsed.manifest);
	parent_manifests(st, cs);
	/* Three manifests: all stay in the cache of four. */
	m1 = push_manifest_get(st, &cs->mp1);
	m2 = push_manifest_get(st, &cs->mp2);
	m = push_manifest_get(st, &cs->manifest);
	cs->send_manifest = !hg_oid_is_null(&cs->manifest);
	/* m and m1 are both sorted: walked together. */
	for (i = 0, j = 0; m && i < m->nr; i++) {
		const struct manifest_line *l = &m->lines[i];
		const struct manifest_line *l1 = NULL, *l2;
		struct file_rev *f;
		int cmp = -1;
		while (j < (m1 ? m1->nr : 0) &&
		       (cmp = manifest_path_cmp(m1->lines[j].path, m1->lines[j].path_len,
				       l->path, l->path_len)) < 0)
			j++;
		if (!cmp)
			l1 = &m1->lines[j];
		if (l1 && hg_oideq(&l1->oid, &l->oid))
			continue;
		l2 = push_manifest_line(m2, l->path, l->path_len);
		if (l2 && hg_oideq(&l2->oid, &l->oid))
			continue;
		f = push_add_file_rev(st, l->path, l->path_len, &l->oid, &cs->node);
		hg_oidcpy(&f->cand1, l1 ? &l1->oid : &hg_null_oid);
		hg_oidcpy(&f->cand2, l2 ? &l2->oid : &hg_null_oid);
		f->need_parents = 1;
	}
}

/* Differences between two git trees. */
struct tree_change {
	char *path;
	unsigned old_mode, new_mode;	/* 0 when absent */
	struct object_id old_oid, new_oid;
	/* In a merge (see merge_bases): the path's line in every merge
	 * base, when they all have the same (has_base), and whether it is
	 * a removal Mercurial does not list. */
	struct manifest_line base;
	int has_base, unlisted;
};

struct changes {
	struct tree_change *items;
	size_t nr, alloc;
	size_t depth;	/* directories above the current one */
};

static void add_change(struct changes *c, struct strbuf *base,
		       const struct tree_iter *old, const struct tree_iter *new)
{
	struct tree_change *ch;
	const struct tree_iter *e = new ? new : old;
	ALLOC_GROW(c->items, c->nr + 1, c->alloc);
	ch = &c->items[c->nr++];
	memset(ch, 0, sizeof(*ch));
	ch->path = xstrfmt("%.*s%.*s", (int)base->len, base->buf,
			   (int)e->pathlen, e->path);
	if (old) {
		ch->old_mode = old->mode;
		oidcpy(&ch->old_oid, &old->oid);
	}
	if (new) {
		ch->new_mode = new->mode;
		oidcpy(&ch->new_oid, &new->oid);
	}
}

static void diff_trees(struct changes *c, const struct object_id *a,
		       const struct object_id *b, struct strbuf *base);

/* One side of a tree entry, as a whole subtree or a file. */
static void diff_entry(struct changes *c, struct strbuf *base,
		       const struct tree_iter *old, const struct tree_iter *new)
{
	int old_dir = old && S_ISDIR(old->mode);
	int new_dir = new && S_ISDIR(new->mode);
	size_t len = base->len;

	if (old && new && old->mode == new->mode && oideq(&old->oid, &new->oid))
		return;
	if (old_dir || new_dir) {
		const struct tree_iter *e = new_dir ? new : old;
		strbuf_add(base, e->path, e->pathlen);
		strbuf_addch(base, '/');
		/* Deeper than Mercurial paths may be: refused before recursing. */
		if (new_dir && ++c->depth >= HG_PATH_MAX_DEPTH)
			hg_path_die(base->buf, base->len, "push",
				    hg_path_too_deep);
		diff_trees(c, old_dir ? &old->oid : NULL,
			   new_dir ? &new->oid : NULL, base);
		if (new_dir)
			c->depth--;
		strbuf_setlen(base, len);
	}
	if ((old && !old_dir) || (new && !new_dir))
		add_change(c, base, old && !old_dir ? old : NULL,
			   new && !new_dir ? new : NULL);
}

static void diff_trees(struct changes *c, const struct object_id *a,
		       const struct object_id *b, struct strbuf *base)
{
	struct tree_pair p;
	const struct tree_iter *old, *new;

	tree_pair_open(&p, a, b);
	while (tree_pair_next(&p, &old, &new))
		diff_entry(c, base, old, new);
	tree_pair_release(&p);
}

static char flag_of(unsigned mode, const char *path)
{
	if (S_ISGITLINK(mode))
		die("'%s' is a submodule, which Mercurial cannot hold; it "
		    "cannot be pushed", path);
	return S_ISLNK(mode) ? 'l' : (mode & 0100) ? 'x' : '\0';
}

/* The blob of a file revision: stored, or made for this push. */
static const struct object_id *blob_of(struct push_state *st,
				       const struct manifest_line *l)
{
	static struct object_id empty;
	const struct object_id *blob;
	size_t i;
	if (hg_oideq(&l->oid, &hg_empty_file_oid)) {
		store_object_buf(OBJ_BLOB, "", 0, &empty);
		return &empty;
	}
	blob = hg2git(&l->oid);
	if (!blob && push_get_pos(st->new_files, &l->oid, &i))
		blob = &st->files[i].blob;
	return blob;
}

/* A new manifest line, kept until the manifest text is written. */
struct new_line {
	const char *path;
	size_t len;
	struct hg_oid node;
	char flag;
	int removed, unlisted;
	int new_rev;
};

static int new_line_cmp(const void *a, const void *b)
{
	const struct new_line *x = a, *y = b;
	return manifest_path_cmp(x->path, x->len, y->path, y->len);
}

/*
 * The revision for a changed file of a converted commit; return 1 when it
 * is a new revision, 0 when an existing one is reused.
 */
/* Bounds of file_ancestor's walk. */
#define ANCESTRY_REVISIONS 64
#define ANCESTRY_MANIFESTS 1000

struct rev_where {
	struct hg_oid node, manifest;	/* a stored manifest that has it */
};

/*
 * The parents of revision `r` of `path` into `todo` (at *nr, room for
 * ANCESTRY_REVISIONS): a revision of this push has them recorded (their
 * manifests those of its changeset's parents, when stored), a stored one
 * gets them found (file-parents.h). -1 when they cannot be told.
 */
static int queue_parents(struct push_state *st, const char *path,
			 const struct rev_where *r, struct rev_where *todo,
			 size_t *nr, struct strbuf *text)
{
	struct hg_oid p[2], where[2];
	size_t i, k;

	if (push_get_pos(st->new_files, &r->node, &i)) {
		struct file_rev *f = &st->files[i];
		struct cs_rev *cs = push_changeset(st, &f->link);
		hg_oidcpy(&p[0], &f->p1);
		hg_oidcpy(&p[1], &f->p2);
		if (!cs)
			return -1;
		hg_oidcpy(&where[0], &cs->mp1);
		hg_oidcpy(&where[1], &cs->mp2);
	} else {
		file_text(&r->node, text);
		if (file_parents_and_manifests(path, &r->node, text,
					       &r->manifest, ANCESTRY_MANIFESTS,
					       &p[0], &p[1], where))
			return -1;
	}
	for (k = 0; k < 2; k++) {
		if (hg_oid_is_null(&p[k]))
			continue;
		if (*nr == ANCESTRY_REVISIONS)
			return -1;
		hg_oidcpy(&todo[*nr].node, &p[k]);
		/* A stored revision needs a stored manifest to be found in. */
		if (!push_get_pos(st->new_files, &p[k], &i) &&
		    !hg2git(&where[k]) && !hg2git(&where[1 - k]))
			return -1;
		hg_oidcpy(&todo[(*nr)++].manifest,
			  hg2git(&where[k]) ? &where[k] : &where[1 - k]);
	}
	return 0;
}

/*
 * Whether revision `anc` of `path` is an ancestor of its revision `node`,
 * found in manifest `where`: Mercurial's test on a merge's file parents
 * (a parent that is an ancestor of the other is dropped). Walks file
 * parents back; 1 or 0, -1 when it cannot tell within the bounds above.
 */
static int file_ancestor(struct push_state *st, const char *path,
			 const struct hg_oid *anc, const struct hg_oid *node,
			 const struct hg_oid *where)
{
	struct rev_where todo[ANCESTRY_REVISIONS];
	struct strbuf text = STRBUF_INIT;
	size_t nr = 1, seen = 0;
	int ret = 0;

	hg_oidcpy(&todo[0].node, node);
	hg_oidcpy(&todo[0].manifest, where);
	while (nr && !ret) {
		struct rev_where r = todo[--nr];
		if (hg_oideq(&r.node, anc))
			ret = 1;
		else if (++seen > ANCESTRY_REVISIONS ||
			 queue_parents(st, path, &r, todo, &nr, &text))
			ret = -1;
	}
	strbuf_release(&text);
	return ret;
}

/*
 * A merge's file parents fp1 and fp2 (both set, different), where one
 * side left the file as the merge bases have it (`p1_as_bases`: the
 * first): the parent that is an ancestor of the other in the file's
 * history is dropped, as Mercurial's commit does. The side the bases
 * name is the likely ancestor (taken as one when file_ancestor cannot
 * tell); else the other side may be one, when it went back to an older
 * revision.
 */
static void drop_ancestor_parent(struct push_state *st, struct cs_rev *cs,
				 const char *path, struct hg_oid *fp1,
				 struct hg_oid *fp2, int p1_as_bases)
{
	struct hg_oid *a = p1_as_bases ? fp1 : fp2;
	struct hg_oid *b = p1_as_bases ? fp2 : fp1;
	const struct hg_oid *where_a = p1_as_bases ? &cs->mp1 : &cs->mp2;
	const struct hg_oid *where_b = p1_as_bases ? &cs->mp2 : &cs->mp1;
	int drop_a = file_ancestor(st, path, a, b, where_b) != 0;
	int drop_b = !drop_a && file_ancestor(st, path, b, a, where_a) == 1;

	if ((drop_a && a == fp1) || (drop_b && b == fp1))
		hg_oidcpy(fp1, fp2);
	if (drop_a || drop_b)
		hg_oidcpy(fp2, &hg_null_oid);
}

static int file_revision(struct push_state *st, struct cs_rev *cs,
			  struct tree_change *ch, const struct push_manifest *m1,
			  const struct push_manifest *m2, const char *copy_from,
			  struct hg_oid *node)
{
	size_t len = strlen(ch->path);
	const struct manifest_line *l1 = push_manifest_line(m1, ch->path, len);
	const struct manifest_line *l2 = push_manifest_line(m2, ch->path, len);
	const struct object_id *b1 = l1 ? blob_of(st, l1) : NULL;
	const struct object_id *b2 = l2 ? blob_of(st, l2) : NULL;
	struct hg_oid fp1, fp2;
	struct strbuf text = STRBUF_INIT, meta = STRBUF_INIT;
	struct file_rev *f;
	int framed;

	/*
	 * As Mercurial's commit: the path's revisions in the parent
	 * manifests, one of them only when they are the same or when one is
	 * an ancestor of the other (in a merge: the merge bases' revision,
	 * the side that did not change it). A content equal to the one
	 * parent's keeps that revision.
	 */
	hg_oidcpy(&fp1, l1 ? &l1->oid : &hg_null_oid);
	hg_oidcpy(&fp2, l2 ? &l2->oid : &hg_null_oid);
	if (hg_oideq(&fp1, &fp2) || hg_oid_is_null(&fp2)) {
		hg_oidcpy(&fp2, &hg_null_oid);
	} else if (hg_oid_is_null(&fp1)) {
		hg_oidcpy(&fp1, &fp2);
		hg_oidcpy(&fp2, &hg_null_oid);
	} else if (ch->has_base && (hg_oideq(&ch->base.oid, &fp1) ||
				    hg_oideq(&ch->base.oid, &fp2))) {
		drop_ancestor_parent(st, cs, ch->path, &fp1, &fp2,
				     hg_oideq(&ch->base.oid, &fp1));
	}
	if (!copy_from && !hg_oid_is_null(&fp1) && hg_oid_is_null(&fp2)) {
		const struct object_id *b =
			l1 && hg_oideq(&fp1, &l1->oid) ? b1 : b2;
		if (b && oideq(b, &ch->new_oid)) {
			hg_oidcpy(node, &fp1);
			return 0;
		}
	}
	if (copy_from) {
		const struct manifest_line *src = push_manifest_line(m1, copy_from,
						   strlen(copy_from));
		strbuf_addf(&meta, "copy: %s\ncopyrev: %s\n", copy_from,
			    hg_oid_to_hex(&src->oid));
		hg_oidcpy(&fp1, &hg_null_oid);
		hg_oidcpy(&fp2, &hg_null_oid);
	}
	framed = push_new_file_text(&text, &ch->new_oid, meta.len ? meta.buf : NULL);
	hg_hash(&fp1, &fp2, text.buf, text.len, node);
	f = push_add_file_rev(st, ch->path, len, node, &cs->node);
	hg_oidcpy(&f->p1, &fp1);
	hg_oidcpy(&f->p2, &fp2);
	oidcpy(&f->blob, &ch->new_oid);
	f->meta = framed ? strbuf_detach(&meta, NULL) : NULL;
	f->is_new = 1;
	push_set_pos(st->new_files, node, f->order);
	strbuf_release(&meta);
	strbuf_release(&text);
	return 1;
}

/*
 * The copies a commit records, found as git-cinnabar 0.7 finds them: by
 * git's own rename detection between its first parent's tree and its own,
 * as `git diff-tree -r -C -C<n>%` (`-C` twice: copies from any file of
 * the parent, changed or not; n is push_similarity(), 100 unless set:
 * exact copies only). Among sources of the same content git prefers a
 * removed one, then one with the same base name, then the first in path
 * order. Every destination git pairs, renamed or copied, is recorded,
 * except an empty file (git-cinnabar pushes it as a plain addition).
 * Fills `copies` with "new path" -> util: "source path".
 */
static void git_copies(const struct object_id *old_tree,
		       const struct object_id *new_tree,
		       struct string_list *copies)
{
	struct diff_options opts;
	int i;

	repo_diff_setup(the_repository, &opts);
	opts.flags.recursive = 1;
	opts.detect_rename = DIFF_DETECT_COPY;
	opts.flags.find_copies_harder = 1;
	opts.rename_score = push_similarity() * MAX_SCORE / 100;
	opts.output_format = DIFF_FORMAT_NO_OUTPUT;
	diff_setup_done(&opts);
	diff_tree_oid(old_tree, new_tree, "", &opts);
	diffcore_std(&opts);
	for (i = 0; i < diff_queued_diff.nr; i++) {
		struct diff_filepair *p = diff_queued_diff.queue[i];
		if ((p->status == DIFF_STATUS_RENAMED ||
		     p->status == DIFF_STATUS_COPIED) &&
		    !is_empty_blob_oid(&p->two->oid, the_hash_algo))
			string_list_insert(copies, p->two->path)->util =
				xstrdup(p->one->path);
	}
	diff_flush(&opts);
}

/* Whether the changes add a path: only then can there be a copy. */
static int adds_a_path(const struct changes *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->items[i].new_mode && !c->items[i].old_mode)
			return 1;
	return 0;
}

/* The source git_copies found for `path`, when p1's manifest has it. */
static const char *copy_source(struct string_list *copies,
			       const struct push_manifest *m1,
			       const char *path)
{
	struct string_list_item *item = string_list_lookup(copies, path);
	if (!item || !push_manifest_line(m1, item->util, strlen(item->util)))
		return NULL;
	return item->util;
}

static const char *branch_of(struct push_state *st, const struct hg_oid *node,
			     struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;
	struct hg_changeset cs;
	const char *branch;
	size_t len;

	strbuf_reset(out);
	if (hg_oid_is_null(node))
		return NULL;
	push_changeset_text(st, node, &text);
	if (parse_changeset(&cs, text.buf, text.len))
		die("changeset %s is damaged", hg_oid_to_hex(node));
	branch = changeset_extra_branch(&cs, &len);
	if (branch)
		strbuf_add(out, branch, len);
	strbuf_release(&text);
	return out->len ? out->buf : NULL;
}

/*
 * What push_set_branch gave for the commit: "<branch>" or
 * "<branch>\t<topic>"; NULL when nothing was.
 */
static const char *set_branch(struct push_state *st, struct cs_rev *cs)
{
	struct string_list_item *set = st->branches ?
		string_list_lookup((struct string_list *)st->branches,
				   oid_to_hex(&cs->commit)) : NULL;
	return set ? set->util : NULL;
}

/* The changeset's branch: the one set for its commit, or p1's. */
static void branch_for(struct push_state *st, struct cs_rev *cs,
		       struct strbuf *out)
{
	const char *set = set_branch(st, cs);
	size_t len;

	if (!set) {
		branch_of(st, &cs->p1, out);
		return;
	}
	strbuf_reset(out);
	len = strchrnul(set, '\t') - set;
	if (len != strlen("default") || memcmp(set, "default", len))
		strbuf_add(out, set, len);
}

/* The changeset's topic (hg-evolve's "topic" extra), or NULL. */
static const char *topic_for(struct push_state *st, struct cs_rev *cs)
{
	const char *set = set_branch(st, cs);
	const char *tab = set ? strchr(set, '\t') : NULL;
	return tab && tab[1] ? tab + 1 : NULL;
}

/*
 * Mercurial reads changeset extras back unescaped (its changelog's
 * decodeextra): a backslash starts an escape, a NUL byte separates two
 * extras and a line break ends the line they are on. git-cinnabar writes
 * the values it makes as they are, as 0.7 did (escaping them would give
 * other ids than the changesets it made), so a value holding one of those
 * bytes would not come back as it was: refused, before anything is sent.
 */
static void check_extra_value(const struct cs_rev *cs, const char *name,
			      const char *value, size_t len)
{
	static const struct {
		char byte;
		const char *what;
	} unholdable[] = {
		{ '\\', "a backslash" },
		{ '\0', "a NUL byte" },
		{ '\n', "a line break" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(unholdable); i++)
		if (memchr(value, unholdable[i].byte, len))
			die("commit %s has a %s holding %s, which Mercurial "
			    "would read back as another (its \"%s\" extra is "
			    "not escaped); it cannot be pushed: rewrite the "
			    "commit without it (git commit --amend makes you "
			    "the committer)", oid_to_hex(&cs->commit), name,
			    unholdable[i].what, name);
}

static void write_changeset_text(struct push_state *st, struct cs_rev *cs,
				 struct raw_commit *c,
				 struct string_list *files)
{
	struct hg_authorship a = HG_AUTHORSHIP_INIT;
	struct strbuf branch = STRBUF_INIT, committer = STRBUF_INIT;
	int extra = 0;
	size_t i;

	if (hg_authorship_from_git(&a, c->author.buf, c->author.len))
		die("commit %s has an author git cannot parse",
		    oid_to_hex(&cs->commit));
	branch_for(st, cs, &branch);
	if (set_branch(st, cs)) {
		check_extra_value(cs, "branch", branch.buf, branch.len);
		if (topic_for(st, cs))
			check_extra_value(cs, "topic", topic_for(st, cs),
					  strlen(topic_for(st, cs)));
	}
	strbuf_addf(&cs->text, "%s\n%s\n%s %s", hg_oid_to_hex(&cs->manifest),
		    a.user.buf, a.timestamp.buf, a.utcoffset.buf);
	if (branch.len) {
		strbuf_addf(&cs->text, " branch:%s", branch.buf);
		extra = 1;
	}
	if (c->author.len != c->committer.len ||
	    memcmp(c->author.buf, c->committer.buf, c->author.len)) {
		if (hg_committer_from_git(&committer, c->committer.buf,
					  c->committer.len))
			die("commit %s has a committer git cannot parse",
			    oid_to_hex(&cs->commit));
		/* The ident itself: a NUL byte does not reach `committer`. */
		check_extra_value(cs, "committer", c->committer.buf,
				  c->committer.len);
		/* extras are sorted: "branch" < "committer" */
		strbuf_addch(&cs->text, extra ? '\0' : ' ');
		strbuf_addf(&cs->text, "committer:%s", committer.buf);
		extra = 1;
	}
	if (experiment("git_commit")) {
		/* ... < "git_commit" (git-cinnabar's experiment) */
		strbuf_addch(&cs->text, extra ? '\0' : ' ');
		strbuf_addf(&cs->text, "git_commit:%s",
			    oid_to_hex(&cs->commit));
		extra = 1;
	}
	if (topic_for(st, cs)) {
		/* ... < "topic" (hg-evolve's topic extension) */
		strbuf_addch(&cs->text, extra ? '\0' : ' ');
		strbuf_addf(&cs->text, "topic:%s", topic_for(st, cs));
	}
	for (i = 0; i < files->nr; i++)
		strbuf_addf(&cs->text, "\n%s", files->items[i].string);
	strbuf_addstr(&cs->text, "\n\n");
	strbuf_add(&cs->text, c->body, c->body_len);
	hg_hash(&cs->p1, &cs->p2, cs->text.buf, cs->text.len, &cs->node);
	hg_authorship_release(&a);
	strbuf_release(&branch);
	strbuf_release(&committer);
}

/* The manifest of changeset `node`, of the batch or stored. */
static void manifest_of(struct push_state *st, const struct hg_oid *node,
			struct hg_oid *out)
{
	struct strbuf text = STRBUF_INIT;
	struct hg_changeset parsed;

	push_changeset_text(st, node, &text);
	if (parse_changeset(&parsed, text.buf, text.len))
		die("changeset %s is damaged", hg_oid_to_hex(node));
	hg_oidcpy(out, &parsed.manifest);
	strbuf_release(&text);
}

/*
 * The manifests of the heads of the common ancestors of a merge's parents
 * (Mercurial's commonancestorsheads; git's merge bases of the same graph).
 */
static size_t merge_base_manifests(struct push_state *st,
				   const struct raw_commit *c,
				   struct hg_oid **out)
{
	struct commit *a = lookup_commit_reference(the_repository,
						   &c->parents.oid[0]);
	struct commit *b = lookup_commit_reference(the_repository,
						   &c->parents.oid[1]);
	struct commit_list *bases = NULL, *p;
	size_t nr = 0, alloc = 0;

	*out = NULL;
	if (!a || !b)
		die("cannot read the parents of commit %s",
		    oid_to_hex(&c->parents.oid[0]));
	if (repo_get_merge_bases(the_repository, a, b, &bases) < 0)
		die("cannot find the merge bases of the parents of a merge "
		    "(first parent %s)", oid_to_hex(&c->parents.oid[0]));
	for (p = bases; p; p = p->next) {
		struct hg_oid node;
		khiter_t it = kh_get_oid_pos(st->by_commit, p->item->object.oid);
		if (it != kh_end(st->by_commit))
			hg_oidcpy(&node, &st->cs[kh_value(st->by_commit, it)].node);
		else if (git2hg(&p->item->object.oid, &node))
			die("commit %s, a merge base, is not known to come "
			    "from Mercurial", oid_to_hex(&p->item->object.oid));
		ALLOC_GROW(*out, nr + 1, alloc);
		manifest_of(st, &node, &(*out)[nr++]);
	}
	cinnabar_commit_list_free(bases);
	return nr;
}

static int same_line(const struct manifest_line *a,
		     const struct manifest_line *b)
{
	return a && b && hg_oideq(&a->oid, &b->oid) && a->flag == b->flag;
}

/*
 * What a merge's changes need of its merge bases: the line of each
 * changed path in them when they all have the same (ch->base), and which
 * removals (paths its first parent has) Mercurial does not list in the
 * changeset: those its second parent lacks while the bases have them as
 * the first parent does (the second side removed the file, the first left
 * it alone: the merge itself removes nothing).
 */
static void merge_bases(struct push_state *st, const struct cs_rev *cs,
			const struct raw_commit *c, struct changes *changes)
{
	struct hg_oid *bases;
	size_t nr_bases, i, k;
	const struct push_manifest *m;

	/* No merge base: as one with the null manifest, which has nothing. */
	nr_bases = merge_base_manifests(st, c, &bases);
	for (k = 0; k < nr_bases; k++) {
		m = push_manifest_get(st, &bases[k]);
		for (i = 0; i < changes->nr; i++) {
			struct tree_change *ch = &changes->items[i];
			const struct manifest_line *l = push_manifest_line(
				m, ch->path, strlen(ch->path));
			if (!k && l) {
				ch->base = *l;
				ch->base.path = NULL;
				ch->has_base = 1;
			} else if (ch->has_base && !same_line(&ch->base, l)) {
				ch->has_base = 0;
			}
		}
	}
	free(bases);
	m = push_manifest_get(st, &cs->mp2);
	for (i = 0; i < changes->nr; i++) {
		struct tree_change *ch = &changes->items[i];
		ch->unlisted = !ch->new_mode && ch->has_base &&
			!push_manifest_line(m, ch->path, strlen(ch->path));
	}
	m = push_manifest_get(st, &cs->mp1);
	for (i = 0; i < changes->nr; i++) {
		struct tree_change *ch = &changes->items[i];
		if (ch->unlisted && !same_line(&ch->base, push_manifest_line(
				m, ch->path, strlen(ch->path))))
			ch->unlisted = 0;
	}
}

/*
 * Whether the file a merge adds against its first parent is the second
 * parent's, as it is: then it is that revision, never a rename.
 */
static int from_second_parent(struct push_state *st,
			      const struct push_manifest *m2,
			      const struct tree_change *ch)
{
	const struct manifest_line *l2 =
		push_manifest_line(m2, ch->path, strlen(ch->path));
	const struct object_id *b2 = l2 ? blob_of(st, l2) : NULL;
	return b2 && oideq(b2, &ch->new_oid) &&
	       l2->flag == flag_of(ch->new_mode, ch->path);
}

void push_convert_commit(struct push_state *st, struct cs_rev *cs,
			   struct raw_commit *c)
{
	const struct push_manifest *m1, *m2;
	struct changes changes = { 0 };
	struct object_id p1_tree;
	struct strbuf base = STRBUF_INIT;
	struct string_list files = STRING_LIST_INIT_DUP;
	struct string_list copies = STRING_LIST_INIT_DUP;
	struct new_line *lines = NULL;
	size_t nr = 0, alloc = 0, i, j, first_file = st->files_nr;

	parent_manifests(st, cs);
	if (c->parents.nr)
		commit_tree_oid(&c->parents.oid[0], &p1_tree);
	diff_trees(&changes, c->parents.nr ? &p1_tree : NULL, &c->tree, &base);
	strbuf_release(&base);
	if (c->parents.nr == 2)
		merge_bases(st, cs, c, &changes);
	/* After the merge bases: both stay in the cache. */
	m2 = push_manifest_get(st, &cs->mp2);
	m1 = push_manifest_get(st, &cs->mp1);
	/*
	 * The new paths are checked first: git's own tree walk, in
	 * git_copies, dies on some of those Mercurial refuses (an empty
	 * name in a tree, which is how an absolute path comes), without
	 * saying which file.
	 */
	for (i = 0; i < changes.nr; i++)
		if (changes.items[i].new_mode)
			hg_path_audit(changes.items[i].path,
				      strlen(changes.items[i].path), "push");
	/* A full walk of both trees: only when a copy is possible. */
	if (c->parents.nr && adds_a_path(&changes))
		git_copies(&p1_tree, &c->tree, &copies);

	for (i = 0; i < changes.nr; i++) {
		struct tree_change *ch = &changes.items[i];
		struct new_line *l;
		const char *copy;
		if (!ch->new_mode)
			continue;
		copy = m2 && from_second_parent(st, m2, ch) ? NULL :
			copy_source(&copies, m1, ch->path);
		ALLOC_GROW(lines, nr + 1, alloc);
		l = &lines[nr++];
		l->path = ch->path;
		l->len = strlen(ch->path);
		l->flag = flag_of(ch->new_mode, ch->path);
		l->removed = l->unlisted = 0;
		l->new_rev = file_revision(st, cs, ch, m1, m2, copy, &l->node);
	}
	for (i = 0; i < changes.nr; i++) {
		struct tree_change *ch = &changes.items[i];
		struct new_line *l;
		if (ch->new_mode)
			continue;
		ALLOC_GROW(lines, nr + 1, alloc);
		l = &lines[nr++];
		l->path = ch->path;
		l->len = strlen(ch->path);
		l->removed = 1;
		l->unlisted = ch->unlisted;
		l->new_rev = 0;
	}
	QSORT(lines, nr, new_line_cmp);

	/* The new manifest: m1's lines merged with the changed ones. */
	for (i = 0, j = 0; i < (m1 ? m1->nr : 0) || j < nr;) {
		int cmp = i == (m1 ? m1->nr : 0) ? 1 : j == nr ? -1 :
			  manifest_path_cmp(m1->lines[i].path,
					    m1->lines[i].path_len,
					    lines[j].path, lines[j].len);
		const struct manifest_line *old = cmp <= 0 ? &m1->lines[i] : NULL;
		if (cmp < 0) {
			manifest_line_add(&cs->manifest_text, old->path,
					  old->path_len, &old->oid, old->flag);
			i++;
			continue;
		}
		if (!lines[j].removed) {
			manifest_line_add(&cs->manifest_text, lines[j].path,
					  lines[j].len, &lines[j].node,
					  lines[j].flag);
		}
		/*
		 * As Mercurial lists them: new revisions, flag changes and
		 * removals (a merge reusing the other side's revision is not
		 * a change).
		 */
		if (lines[j].removed ? old && !lines[j].unlisted :
		    lines[j].new_rev ||
		    (old && old->flag != lines[j].flag) ||
		    (!old && hg_oid_is_null(&cs->p2)))
			string_list_append(&files, lines[j].path);
		if (cmp == 0)
			i++;
		j++;
	}
	string_list_sort(&files);
	string_list_remove_duplicates(&files, 0);

	/* Nothing listed and, for a merge, p1's lines: p1's manifest. */
	if (!files.nr && m1 && (hg_oid_is_null(&cs->p2) ||
				(cs->manifest_text.len == m1->text.len &&
				 !memcmp(cs->manifest_text.buf, m1->text.buf,
					 m1->text.len)))) {
		hg_oidcpy(&cs->manifest, &cs->mp1);
	} else {
		hg_hash(&cs->mp1, &cs->mp2, cs->manifest_text.buf,
			cs->manifest_text.len, &cs->manifest);
		cs->send_manifest = cs->new_manifest = 1;
	}
	write_changeset_text(st, cs, c, &files);
	for (i = first_file; i < st->files_nr; i++)
		hg_oidcpy(&st->files[i].link, &cs->node);

	string_list_clear(&files, 0);
	string_list_clear(&copies, 1);
	free(lines);
	for (i = 0; i < changes.nr; i++)
		free(changes.items[i].path);
	free(changes.items);
}
