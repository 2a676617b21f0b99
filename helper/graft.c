/* Grafting changesets onto existing commits: see graft.h. */
#include "libgit.h"
#include "authorship.h"
#include "graft.h"
#include "metadata.h"
#include "notes-map.h"
#include "raw-commit.h"

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

static struct slice first_line(const char *buf, size_t len)
{
	const char *eol = memchr(buf, '\n', len);
	struct slice s = { buf, eol ? (size_t)(eol - buf) : len };
	return s;
}

static void collect(struct matches *m, const struct hg_changeset *cs,
		    const struct object_id *tree,
		    const struct object_id *parents, int nr)
{
	size_t i;
	for (i = first_with_tree(tree);
	     i < grafts.nr && oideq(&grafts.items[i].tree, tree); i++) {
		struct candidate *cand = &grafts.items[i];
		struct match *match;
		if (cand->used || notes_map_get(&metadata.git2hg, &cand->commit))
			continue;
		ALLOC_GROW(m->items, m->nr + 1, m->alloc);
		match = &m->items[m->nr];
		if (raw_commit_read(&match->commit, &cand->commit))
			continue;
		if (!same_parents(&match->commit, parents, nr) ||
		    !same_author_field(&match->commit, cs, 0)) {
			raw_commit_release(&match->commit);
			continue;
		}
		match->candidate = cand;
		m->nr++;
	}
}

/* Keep the matches `keep` says yes to, unless that leaves none. */
static void narrow(struct matches *m, const struct hg_changeset *cs,
		   int (*keep)(struct match *, const struct hg_changeset *,
			       void *), void *data)
{
	size_t i, kept = 0;
	for (i = 0; i < m->nr; i++)
		kept += !!keep(&m->items[i], cs, data);
	if (!kept || kept == m->nr)
		return;
	for (i = kept = 0; i < m->nr; i++) {
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
	return slice_is(mine, theirs.buf, theirs.len);
}

static int same_user(struct match *match, const struct hg_changeset *cs,
		     void *data UNUSED)
{
	return same_author_field(&match->commit, cs, 1);
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

static int needs_no_patch(struct match *match, const struct hg_changeset *cs UNUSED,
			  void *data)
{
	struct strbuf note = STRBUF_INIT;
	int ret;
	note_for(&note, match, data);
	ret = !strstr(note.buf, "\npatch ");
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

int graft_find(const struct hg_oid *node, const struct hg_oid *p1,
	       const struct hg_oid *p2, const char *raw, size_t raw_len,
	       const struct object_id *tree, const struct object_id *parents,
	       int nr_parents, struct strbuf *commit,
	       struct object_id *commit_oid)
{
	struct changeset_ids ids = { node, p1, p2, raw, raw_len };
	struct matches m = { 0 };
	struct hg_changeset cs;
	size_t i;
	int found = 0;

	if (!graft_active() || parse_changeset(&cs, raw, raw_len))
		return 0;
	collect(&m, &cs, tree, parents, nr_parents);
	narrow(&m, &cs, same_subject, NULL);
	narrow(&m, &cs, same_user, NULL);
	narrow(&m, &cs, needs_no_patch, &ids);
	if (m.nr > 1)
		die_ambiguous(node, &m);
	if (m.nr == 1 && round_trips(&m.items[0], &ids)) {
		struct match *match = &m.items[0];
		match->candidate->used = 1;
		oidcpy(commit_oid, &match->candidate->commit);
		strbuf_reset(commit);
		strbuf_add(commit, match->commit.buf, match->commit.len);
		found = 1;
	}
	for (i = 0; i < m.nr; i++)
		raw_commit_release(&m.items[i].commit);
	free(m.items);
	if (found)
		grafts.stats.grafted++;
	else
		grafts.stats.not_grafted++;
	return found;
}
