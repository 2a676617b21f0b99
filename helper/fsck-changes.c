/* What Mercurial's commit records of a change: see fsck-changes.h. */
#include "libgit.h"
#include "manifest-tree-diff.h"
#include "fsck-changes.h"

/*
 * What is known of one path: listed in the files list, and its lines in
 * the diffs from each parent manifest (M's side, "d") and back ("r", the
 * parent's side); a diff has the path only where the two lines differ.
 */
enum source { LISTED, D1, R1, D2, R2, SOURCES };

struct entry {
	const char *path;
	size_t len;
	enum source source;
	const struct manifest_change *change;
};

struct entries {
	struct entry *items;
	size_t nr, alloc;
};

static void add_entry(struct entries *e, const char *path, size_t len,
		      enum source source, const struct manifest_change *ch)
{
	ALLOC_GROW(e->items, e->nr + 1, e->alloc);
	e->items[e->nr].path = path;
	e->items[e->nr].len = len;
	e->items[e->nr].source = source;
	e->items[e->nr++].change = ch;
}

/* Byte order of paths, as manifests and files lists sort them. */
static int entry_cmp_path(const struct entry *a, const struct entry *b)
{
	int cmp = memcmp(a->path, b->path, a->len < b->len ? a->len : b->len);
	if (cmp)
		return cmp;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int entry_cmp(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int cmp = entry_cmp_path(a, b);
	return cmp ? cmp : (int)a->source - (int)b->source;
}

static void add_changes(struct entries *e, const struct manifest_changes *c,
			enum source source)
{
	size_t i;
	for (i = 0; i < c->nr; i++)
		add_entry(e, c->items[i].path, c->items[i].len, source,
			  &c->items[i]);
}

static void add_listed(struct entries *e, struct slice files)
{
	const char *p = files.buf, *end = files.buf + files.len;

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (eol > p)
			add_entry(e, p, eol - p, LISTED, NULL);
		p = eol + 1;
	}
}

/* A line of the diffs: its path's line in M or in a parent, if any. */
static const struct manifest_change *line_of(const struct manifest_change *c)
{
	return c && !c->removed ? c : NULL;
}

/* 1: Mercurial lists the path; 0: it does not; -1: either can be. */
static int merge_lists(const struct manifest_change **by)
{
	const struct manifest_change *m = line_of(by[D1] ? by[D1] : by[D2]);

	if (!by[D1] && !by[D2])
		return 0;	/* the same in all three */
	if (!by[D1]) {
		/* M's line is M1's: listed only for M2's other flag. */
		const struct manifest_change *m2 = line_of(by[R2]);
		return m && m2 && m2->flag != m->flag ? -1 : m ? 0 : -1;
	}
	if (m) {
		const struct manifest_change *m1 = line_of(by[R1]);
		const struct manifest_change *m2 = line_of(by[R2]);
		if (!by[D2])	/* M2's line: listed if M1 had another flag */
			return m1 && m1->flag != m->flag;
		if (m1 && hg_oideq(&m1->node, &m->node))
			return 1;	/* M1's revision with another flag */
		/* M2's revision with another flag: commit's two ways differ. */
		return m2 && hg_oideq(&m2->node, &m->node) ? -1 : 1;
	}
	/* Removed from M1: listed when M2 had it too. */
	return by[D2] ? 1 : -1;
}

#define NAMES_SHOWN 8

static void add_name(struct strbuf *names, size_t *count,
		     const struct entry *e)
{
	size_t i;

	if ((*count)++ >= NAMES_SHOWN)
		return;
	strbuf_addstr(names, *count > 1 ? ", '" : "'");
	for (i = 0; i < e->len; i++)
		strbuf_addch(names, e->path[i] == '\n' ? ' ' : e->path[i]);
	strbuf_addch(names, '\'');
}

static void end_names(struct strbuf *names, size_t count)
{
	if (count > NAMES_SHOWN)
		strbuf_addf(names, " and %lu more",
			    (unsigned long)(count - NAMES_SHOWN));
}

static void describe(struct strbuf *out, struct strbuf *extra,
		     size_t nr_extra, struct strbuf *missing,
		     size_t nr_missing)
{
	end_names(extra, nr_extra);
	end_names(missing, nr_missing);
	if (nr_extra)
		strbuf_addf(out, "its files list has %s, which Mercurial "
			    "would not list", extra->buf);
	if (nr_extra && nr_missing)
		strbuf_addstr(out, ", and ");
	if (nr_missing)
		strbuf_addf(out, "its files list lacks %s, which Mercurial "
			    "would list", missing->buf);
	strbuf_addstr(out, " (Mercurial lists the files a commit adds, "
		      "modifies, removes or changes the flags of, relative to "
		      "its first parent, less what a merge takes unchanged "
		      "from its second)");
}

/* Walk the entries grouped by path, noting what differs. */
static int compare(struct strbuf *out, struct entries *e, int merge)
{
	struct strbuf extra = STRBUF_INIT, missing = STRBUF_INIT;
	size_t i = 0, nr_extra = 0, nr_missing = 0;

	QSORT(e->items, e->nr, entry_cmp);
	while (i < e->nr) {
		const struct manifest_change *by[SOURCES] = { NULL };
		const struct entry *first = &e->items[i];
		int listed = 0, expected;

		for (; i < e->nr && !entry_cmp_path(first, &e->items[i]); i++) {
			if (e->items[i].source == LISTED)
				listed = 1;
			else
				by[e->items[i].source] = e->items[i].change;
		}
		expected = merge ? merge_lists(by) : !!by[D1];
		if (listed && !expected)
			add_name(&extra, &nr_extra, first);
		else if (!listed && expected == 1)
			add_name(&missing, &nr_missing, first);
	}
	if (nr_extra || nr_missing)
		describe(out, &extra, nr_extra, &missing, nr_missing);
	strbuf_release(&extra);
	strbuf_release(&missing);
	return nr_extra || nr_missing;
}

int files_list_unlike_hg(struct strbuf *out, struct slice files,
			 const struct object_id *tree,
			 const struct object_id *const *parents,
			 size_t nparents)
{
	struct manifest_changes d[2] = { { 0 } }, r[2] = { { 0 } };
	struct entries e = { 0 };
	size_t i;
	int unlike;

	for (i = 0; i < nparents && i < 2; i++) {
		manifest_tree_diff(parents[i], tree, &d[i]);
		add_changes(&e, &d[i], i ? D2 : D1);
		if (nparents < 2)
			continue;
		manifest_tree_diff(tree, parents[i], &r[i]);
		add_changes(&e, &r[i], i ? R2 : R1);
	}
	if (!nparents) {
		manifest_tree_diff(NULL, tree, &d[0]);
		add_changes(&e, &d[0], D1);
	}
	add_listed(&e, files);
	unlike = compare(out, &e, nparents > 1);
	for (i = 0; i < 2; i++) {
		manifest_changes_clear(&d[i]);
		manifest_changes_clear(&r[i]);
	}
	free(e.items);
	return unlike;
}

/* Whether {p1, p2} is {x, y} (each may be the null id). */
static int pair_is(const struct hg_oid *p1, const struct hg_oid *p2,
		   const struct hg_oid *x, const struct hg_oid *y)
{
	return (hg_oideq(p1, x) && hg_oideq(p2, y)) ||
	       (hg_oideq(p1, y) && hg_oideq(p2, x));
}

int file_parents_like_hg(int merge, int copy, const struct hg_oid *a,
			 const struct hg_oid *b, const struct hg_oid *p1,
			 const struct hg_oid *p2)
{
	const struct hg_oid *null = &hg_null_oid;

	if (!merge)
		return copy ? pair_is(p1, p2, null, null)
			    : pair_is(p1, p2, a, null);
	if (pair_is(p1, p2, null, null))
		return copy || (hg_oid_is_null(a) && hg_oid_is_null(b));
	if (pair_is(p1, p2, a, null) || pair_is(p1, p2, b, null))
		return 1;
	/* Both revisions: only without copy, and when they differ. */
	return !copy && !hg_oideq(a, b) && pair_is(p1, p2, a, b);
}

const char *file_meta_copy(const char *meta, size_t len, size_t *src_len)
{
	const char *p = meta, *end = meta + len;

	while (p && p < end) {
		const char *eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (eol - p >= 6 && !memcmp(p, "copy: ", 6)) {
			*src_len = eol - p - 6;
			return p + 6;
		}
		p = eol + 1;
	}
	return NULL;
}
