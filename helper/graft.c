/* Grafting changesets onto existing commits: see graft.h. */
#include "libgit.h"
#include "authorship.h"
#include "graft.h"
#include "metadata.h"
#include "notes-map.h"
#include "raw-commit.h"
#include "replace-map.h"

struct candidate {
	struct object_id commit, tree;
	int used;
};

static struct {
	struct candidate *items;
	size_t nr, alloc;
	int sorted;
	struct graft_stats stats;
} grafts;

int graft_add_candidate(const struct object_id *oid)
{
	struct raw_commit c;
	struct candidate *item;

	if (raw_commit_read(&c, oid))
		return -1;
	ALLOC_GROW(grafts.items, grafts.nr + 1, grafts.alloc);
	item = &grafts.items[grafts.nr++];
	oidcpy(&item->commit, oid);
	oidcpy(&item->tree, &c.tree);
	item->used = 0;
	grafts.sorted = 0;
	grafts.stats.candidates++;
	raw_commit_release(&c);
	return 0;
}

/* Whether there are candidates at all (grafting is on). */
static int graft_active(void)
{
	return grafts.nr != 0;
}

void graft_get_stats(struct graft_stats *stats)
{
	*stats = grafts.stats;
}

static int by_tree(const void *a, const void *b)
{
	return oidcmp(&((const struct candidate *)a)->tree,
		      &((const struct candidate *)b)->tree);
}

/* The first candidate with `tree`, or grafts.nr. */
static size_t first_with_tree(const struct object_id *tree)
{
	size_t lo = 0, hi = grafts.nr;
	if (!grafts.sorted) {
		QSORT(grafts.items, grafts.nr, by_tree);
		grafts.sorted = 1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (oidcmp(&grafts.items[mid].tree, tree) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A candidate that passed the tree, parents and date checks. */
struct match {
	struct candidate *candidate;
	struct raw_commit commit;
};

struct matches {
	struct match *items;
	size_t nr, alloc;
};

static int same_parents(const struct raw_commit *c,
			const struct object_id *parents, int nr)
{
	int i;
	if (c->parents.nr != (size_t)nr)
		return 0;
	for (i = 0; i < nr; i++)
		if (!oideq(&c->parents.oid[i], &parents[i]))
			return 0;
	return 1;
}

static int by_hg_oid(const void *a, const void *b)
{
	return hg_oidcmp(a, b);
}

/*
 * Whether the parents of `c`, through the replace map, are the changesets
 * p1 and p2 (null ones left out), in any order; parents the metadata does
 * not know are left out.
 */
static int same_hg_parents(const struct raw_commit *c,
			   const struct hg_oid *p1, const struct hg_oid *p2)
{
	struct hg_oid mine[2], theirs[2];
	size_t nr_mine = 0, nr_theirs = 0, i;

	for (i = 0; i < c->parents.nr; i++) {
		struct hg_oid node;
		if (git2hg(&c->parents.oid[i], &node))
			continue;
		if (nr_mine == 2)
			return 0;
		hg_oidcpy(&mine[nr_mine++], &node);
	}
	if (!hg_oid_is_null(p1))
		hg_oidcpy(&theirs[nr_theirs++], p1);
	if (!hg_oid_is_null(p2))
		hg_oidcpy(&theirs[nr_theirs++], p2);
	if (nr_mine != nr_theirs)
		return 0;
	QSORT(mine, nr_mine, by_hg_oid);
	QSORT(theirs, nr_theirs, by_hg_oid);
	for (i = 0; i < nr_mine; i++)
		if (!hg_oideq(&mine[i], &theirs[i]))
			return 0;
	return 1;
}

static int slice_is(struct slice a, const char *buf, size_t len)
{
	return a.len == len && !memcmp(a.buf, buf, len);
}

/* Whether the author of `c` has the changeset's date (or user). */
static int same_author_field(const struct raw_commit *c,
			     const struct hg_changeset *cs, int user)
{
	struct hg_authorship a = HG_AUTHORSHIP_INIT;
	int same = 0;
	if (c->author.buf && c->committer.buf &&
	    !hg_authorship_from_git(&a, c->author.buf, c->author.len))
		same = user ? slice_is(cs->user, a.user.buf, a.user.len)
			    : slice_is(cs->timestamp, a.timestamp.buf,
				       a.timestamp.len);
	hg_authorship_release(&a);
	return same;
}

int graft_same_date(const struct raw_commit *c, const struct hg_changeset *cs)
{
	return same_author_field(c, cs, 0);
}

/* The first line of a message, without its "\n" or "\r\n"; none: NULL. */
static struct slice first_line(const char *buf, size_t len)
{
	const char *eol = memchr(buf, '\n', len);
	struct slice s = { len ? buf : NULL, eol ? (size_t)(eol - buf) : len };
	if (eol && s.len && buf[s.len - 1] == '\r')
		s.len--;
	return s;
}

static void collect(struct matches *m, const struct hg_changeset *cs,
		    const struct object_id *tree, const struct hg_oid *p1,
		    const struct hg_oid *p2)
{
	size_t i;
	for (i = first_with_tree(tree);
	     i < grafts.nr && oideq(&grafts.items[i].tree, tree); i++) {
		struct candidate *cand = &grafts.items[i];
		struct match *match;
		if (cand->used || notes_map_get(&metadata.git2hg, &cand->commit) ||
		    is_replaced(&cand->commit))
			continue;
		ALLOC_GROW(m->items, m->nr + 1, m->alloc);
		match = &m->items[m->nr];
		if (raw_commit_read(&match->commit, &cand->commit))
			continue;
		if (!same_author_field(&match->commit, cs, 0) ||
		    (replace_map_size() &&
		     !same_hg_parents(&match->commit, p1, p2))) {
			raw_commit_release(&match->commit);
			continue;
		}
		match->candidate = cand;
		m->nr++;
	}
}

/* Keep only the matches `keep` says yes to (maybe none). */
static void keep_only(struct matches *m, const struct hg_changeset *cs,
		      int (*keep)(struct match *, const struct hg_changeset *,
				  void *), void *data)
{
	size_t i, kept = 0;
	for (i = 0; i < m->nr; i++) {
		if (keep(&m->items[i], cs, data))
			m->items[kept++] = m->items[i];
		else
			raw_commit_release(&m->items[i].commit);
	}
	m->nr = kept;
}

static int same_subject(struct match *match, const struct hg_changeset *cs,
			void *data UNUSED)
{
	struct slice mine = first_line(match->commit.body,
				       match->commit.body_len);
	struct slice theirs = first_line(cs->body.buf, cs->body.len);
	if (!mine.buf || !theirs.buf)
		return !mine.buf && !theirs.buf;
	return slice_is(mine, theirs.buf, theirs.len);
}

/*
 * The one match with the changeset's subject (and, among several with
 * it, its user as author), or NULL.
 */
static struct match *by_subject_and_user(struct matches *m,
					 const struct hg_changeset *cs)
{
	struct match *found = NULL;
	size_t i, same = 0;

	for (i = 0; i < m->nr; i++)
		if (same_subject(&m->items[i], cs, NULL)) {
			same++;
			found = &m->items[i];
		}
	if (same <= 1)
		return found;
	found = NULL;
	same = 0;
	for (i = 0; i < m->nr; i++)
		if (same_subject(&m->items[i], cs, NULL) &&
		    same_author_field(&m->items[i].commit, cs, 1)) {
			same++;
			found = &m->items[i];
		}
	return same == 1 ? found : NULL;
}

/* Keep only `match` of the matches. */
static void keep_one(struct matches *m, struct match *match)
{
	size_t i;
	struct match kept = *match;
	for (i = 0; i < m->nr; i++)
		if (&m->items[i] != match)
			raw_commit_release(&m->items[i].commit);
	m->items[0] = kept;
	m->nr = 1;
}

struct changeset_ids {
	const struct hg_oid *node, *p1, *p2;
	const char *raw;
	size_t raw_len;
};

static void note_for(struct strbuf *note, struct match *match,
		     const struct changeset_ids *ids)
{
	changeset_note(note, ids->node, ids->p1, ids->p2, ids->raw,
		       ids->raw_len, match->commit.buf, match->commit.len);
}

static int needs_patch(struct match *match, const struct hg_changeset *cs UNUSED,
		       void *data)
{
	struct strbuf note = STRBUF_INIT;
	int ret;
	note_for(&note, match, data);
	ret = !!strstr(note.buf, "\npatch ");
	strbuf_release(&note);
	return ret;
}

/* Whether the commit and its note give back the changeset exactly. */
static int round_trips(struct match *match, const struct changeset_ids *ids)
{
	struct strbuf note = STRBUF_INIT, rebuilt = STRBUF_INIT;
	int ret;
	note_for(&note, match, ids);
	ret = !changeset_from_commit(&rebuilt, match->commit.buf,
				     match->commit.len, note.buf, note.len,
				     ids->p1, ids->p2) &&
	      rebuilt.len == ids->raw_len &&
	      !memcmp(rebuilt.buf, ids->raw, ids->raw_len);
	strbuf_release(&note);
	strbuf_release(&rebuilt);
	return ret;
}

static NORETURN void die_ambiguous(const struct hg_oid *node,
				   struct matches *m)
{
	struct strbuf list = STRBUF_INIT;
	size_t i;
	for (i = 0; i < m->nr; i++)
		strbuf_addf(&list, "%s%s", i ? ", " : "",
			    oid_to_hex(&m->items[i].candidate->commit));
	die("cannot graft changeset %s: several commits match it (%s); "
	    "leave only one of them in the refs grafted from",
	    hg_oid_to_hex(node), list.buf);
}

enum graft_result graft_find(const struct hg_oid *node, const struct hg_oid *p1,
			     const struct hg_oid *p2, const char *raw,
			     size_t raw_len, const struct object_id *tree,
			     const struct object_id *parents, int nr_parents,
			     struct strbuf *commit, struct object_id *commit_oid)
{
	struct changeset_ids ids = { node, p1, p2, raw, raw_len };
	struct matches m = { 0 };
	struct hg_changeset cs;
	struct match *one;
	size_t i;
	enum graft_result found = GRAFT_NONE;

	if (!graft_active() || parse_changeset(&cs, raw, raw_len))
		return GRAFT_NONE;
	collect(&m, &cs, tree, p1, p2);
	if (m.nr > 1 && (one = by_subject_and_user(&m, &cs)))
		keep_one(&m, one);
	if (m.nr > 1)
		keep_only(&m, &cs, needs_patch, &ids);
	if (m.nr > 1)
		die_ambiguous(node, &m);
	if (m.nr == 1) {
		struct match *match = &m.items[0];
		/* Replaced, the candidate's note is not needed. */
		if (!replace_map_size() &&
		    (needs_patch(match, &cs, &ids) ||
		     !same_parents(&match->commit, parents, nr_parents)))
			found = GRAFT_REPLACE;
		else if (round_trips(match, &ids))
			found = GRAFT_ONTO;
	}
	if (found != GRAFT_NONE) {
		struct match *match = &m.items[0];
		match->candidate->used = 1;
		oidcpy(commit_oid, &match->candidate->commit);
		if (found == GRAFT_ONTO) {
			strbuf_reset(commit);
			strbuf_add(commit, match->commit.buf,
				   match->commit.len);
		}
	}
	for (i = 0; i < m.nr; i++)
		raw_commit_release(&m.items[i].commit);
	free(m.items);
	if (found == GRAFT_ONTO)
		grafts.stats.grafted++;
	else if (found == GRAFT_REPLACE)
		grafts.stats.replaced++;
	else
		grafts.stats.not_grafted++;
	return found;
}
