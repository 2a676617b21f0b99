/*
 * The manifests of a push: see push-manifests.h. Of the push files,
 * depends on push-state.c only.
 */
#include "libgit.h"
#include "manifest-tree-diff.h"
#include "metadata.h"
#include "raw-commit.h"
#include "push-manifests.h"

static void parse_lines(struct push_manifest *m)
{
	const char *p = m->text.buf, *end = p + m->text.len;

	m->nr = 0;
	while (p < end) {
		ALLOC_GROW(m->lines, m->nr + 1, m->alloc);
		if (manifest_line_parse(&p, end, &m->lines[m->nr++]))
			die("manifest %s is damaged; run `git cinnabar fsck "
			    "--full`", hg_oid_to_hex(&m->id));
	}
}

const struct manifest_line *push_manifest_line(const struct push_manifest *m,
					       const char *path, size_t len)
{
	size_t lo = 0, hi = m ? m->nr : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = manifest_path_cmp(m->lines[mid].path,
					    m->lines[mid].path_len, path, len);
		if (!cmp)
			return &m->lines[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void free_manifest(struct push_manifest *m)
{
	if (!m)
		return;
	strbuf_release(&m->text);
	free(m->lines);
	free(m);
}

static void remember(struct push_state *st, struct push_manifest *m)
{
	free_manifest(st->manifests[PUSH_MANIFEST_CACHE - 1]);
	MOVE_ARRAY(st->manifests + 1, st->manifests, PUSH_MANIFEST_CACHE - 1);
	st->manifests[0] = m;
}

static void add_line(struct push_manifest *m, const char *path, size_t len,
		     const struct hg_oid *node, char flag)
{
	struct manifest_line *l;
	ALLOC_GROW(m->lines, m->nr + 1, m->alloc);
	l = &m->lines[m->nr++];
	l->path = m->text.buf + m->text.len;
	l->path_len = len;
	hg_oidcpy(&l->oid, node);
	l->flag = flag;
	manifest_line_add(&m->text, path, len, node, flag);
}

/* Copy lines [start, end) of `from`, text and parsed, to the end of `m`. */
static void copy_lines(struct push_manifest *m,
		       const struct push_manifest *from,
		       size_t start, size_t end)
{
	const char *src, *stop;
	const char *dst = m->text.buf + m->text.len;
	size_t k;

	if (start == end)
		return;
	src = from->lines[start].path;
	stop = end < from->nr ? from->lines[end].path
			      : from->text.buf + from->text.len;
	for (k = start; k < end; k++) {
		m->lines[m->nr] = from->lines[k];
		m->lines[m->nr++].path = dst + (from->lines[k].path - src);
	}
	strbuf_add(&m->text, src, stop - src);
}

/*
 * The stored manifest `m` (its tree set) from `from`, another stored one,
 * and the changes between their trees: the unchanged lines are copied,
 * text and parsed, instead of making the whole text from the tree and
 * parsing it back.
 */
static void derive(struct push_manifest *m, const struct push_manifest *from)
{
	struct manifest_changes c = { 0 };
	size_t i = 0, j, room = from->text.len;

	manifest_tree_diff(&from->tree, &m->tree, &c);
	for (j = 0; j < c.nr; j++)
		room += c.items[j].len + HG_HEXSZ + 3;
	/* No reallocation below: lines point into the text. */
	strbuf_grow(&m->text, room);
	ALLOC_GROW(m->lines, from->nr + c.nr, m->alloc);
	for (j = 0; j <= c.nr; j++) {
		const struct manifest_change *ch = j < c.nr ? &c.items[j] : NULL;
		size_t start = i;
		int cmp = 1;
		/* The lines before the change stay. */
		while (i < from->nr && (!ch || (cmp = manifest_path_cmp(
			from->lines[i].path, from->lines[i].path_len,
			ch->path, ch->len)) < 0))
			i++;
		copy_lines(m, from, start, i);
		if (!ch)
			break;
		if (!cmp)
			i++;
		else if (ch->removed)
			die("manifest %s removes '%s', which %s does not have",
			    hg_oid_to_hex(&m->id), ch->path,
			    hg_oid_to_hex(&from->id));
		if (!ch->removed)
			add_line(m, ch->path, ch->len, &ch->node, ch->flag);
	}
	manifest_changes_clear(&c);
}

/*
 * Check a stored manifest's text against its id, with its parents (the
 * parents of its commit): what the push sends and its deltas' bases
 * must be what the server has under that id.
 */
static void check_stored(struct push_state *st, const struct push_manifest *m,
			 const struct object_id *commit)
{
	struct raw_commit c;
	struct hg_oid p[2], h;
	size_t i, pos;

	if (push_get_pos(st->checked_manifests, &m->id, &pos))
		return;
	if (raw_commit_read(&c, commit) || c.parents.nr > 2)
		die("manifest commit %s is damaged; run `git cinnabar fsck "
		    "--full`", oid_to_hex(commit));
	for (i = 0; i < 2; i++) {
		hg_oidcpy(&p[i], &hg_null_oid);
		if (i < c.parents.nr &&
		    manifest_commit_node(&c.parents.oid[i], &p[i]))
			die("manifest commit %s is damaged; run `git cinnabar "
			    "fsck --full`", oid_to_hex(&c.parents.oid[i]));
	}
	raw_commit_release(&c);
	hg_hash(&p[0], &p[1], m->text.buf, m->text.len, &h);
	if (!hg_oideq(&h, &m->id))
		die("the stored manifest %s does not match its id (the "
		    "metadata is damaged, nothing was sent); run `git "
		    "cinnabar fsck --full`", hg_oid_to_hex(&m->id));
	push_set_pos(st->checked_manifests, &m->id, 1);
}

/* A manifest made by this push, not stored yet: its text, or NULL. */
static const struct strbuf *new_manifest_text(struct push_state *st,
					      const struct hg_oid *id);

const struct push_manifest *push_manifest_kept(struct push_state *st,
					       const struct hg_oid *id)
{
	struct push_manifest *m;
	int i;

	for (i = 0; i < PUSH_MANIFEST_CACHE; i++) {
		m = st->manifests[i];
		if (m && hg_oideq(&m->id, id)) {
			/* Most recently used first: the last ones stay. */
			MOVE_ARRAY(st->manifests + 1, st->manifests, i);
			st->manifests[0] = m;
			return m;
		}
	}
	return NULL;
}

const struct push_manifest *push_manifest_get(struct push_state *st,
					      const struct hg_oid *id)
{
	struct push_manifest *m;
	const struct strbuf *text;
	const struct object_id *commit;
	int i;

	if (hg_oid_is_null(id))
		return NULL;
	if ((m = (struct push_manifest *)push_manifest_kept(st, id)))
		return m;
	CALLOC_ARRAY(m, 1);
	hg_oidcpy(&m->id, id);
	strbuf_init(&m->text, 0);
	text = new_manifest_text(st, id);
	if (text) {
		strbuf_addbuf(&m->text, text);
		parse_lines(m);
		remember(st, m);
		return m;
	}
	commit = hg2git(id);
	if (!commit)
		die("unknown manifest %s", hg_oid_to_hex(id));
	commit_tree_oid(commit, &m->tree);
	m->has_tree = 1;
	for (i = 0; i < PUSH_MANIFEST_CACHE; i++)
		if (st->manifests[i] && st->manifests[i]->has_tree)
			break;
	if (i < PUSH_MANIFEST_CACHE) {
		derive(m, st->manifests[i]);
	} else {
		manifest_text(id, &m->text);
		parse_lines(m);
	}
	check_stored(st, m, commit);
	remember(st, m);
	return m;
}

/*
 * New manifest texts go to a temporary file once their delta is made:
 * kept in memory, they made a push or bundle hold one whole manifest per
 * changeset until the end (gigabytes for 30k files and a few thousand
 * changesets). Later changesets read back the few their parents need
 * (the cache of recent manifests keeps the last ones).
 */
void push_manifest_spill(struct push_state *st, struct cs_rev *cs)
{
	FILE *f;

	if (!cs->new_manifest || cs->manifest_spilled)
		return;
	if (!st->manifest_spill && !(st->manifest_spill = tmpfile()))
		die_errno("cannot create a temporary file");
	f = st->manifest_spill;
	if (fseeko(f, 0, SEEK_END) || (cs->manifest_off = ftello(f)) < 0 ||
	    fwrite(cs->manifest_text.buf, 1, cs->manifest_text.len, f) !=
	    cs->manifest_text.len)
		die_errno("cannot write a temporary file");
	cs->manifest_len = cs->manifest_text.len;
	cs->manifest_spilled = 1;
	strbuf_release(&cs->manifest_text);
}

static const struct strbuf *spilled_text(struct push_state *st,
					 const struct cs_rev *cs)
{
	static struct strbuf text = STRBUF_INIT;
	FILE *f = st->manifest_spill;

	if (!cs->manifest_spilled)
		return &cs->manifest_text;
	strbuf_reset(&text);
	strbuf_grow(&text, cs->manifest_len);
	if (fflush(f) || fseeko(f, cs->manifest_off, SEEK_SET) ||
	    fread(text.buf, 1, cs->manifest_len, f) != cs->manifest_len)
		die_errno("cannot read a temporary file");
	strbuf_setlen(&text, cs->manifest_len);
	return &text;
}

static const struct strbuf *new_manifest_text(struct push_state *st,
					      const struct hg_oid *id)
{
	struct cs_rev *cs = st->nr ? &st->cs[st->nr - 1] : NULL;
	size_t i;

	/* The current commit is not indexed yet. */
	if (cs && cs->new_manifest && hg_oideq(&cs->manifest, id))
		return spilled_text(st, cs);
	return push_get_pos(st->by_manifest, id, &i)
		? spilled_text(st, &st->cs[i]) : NULL;
}

void push_manifests_release(struct push_state *st)
{
	int i;

	if (st->manifest_spill) {
		fclose(st->manifest_spill);
		st->manifest_spill = NULL;
	}
	for (i = 0; i < PUSH_MANIFEST_CACHE; i++) {
		free_manifest(st->manifests[i]);
		st->manifests[i] = NULL;
	}
}
