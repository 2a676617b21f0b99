/*
 * Changegroups for pushing: see `changegroup` in PROTOCOL.md.
 *
 * For each git commit to push, parents first, this finds or makes its
 * Mercurial changeset, manifest and file revisions:
 *   - a commit that came from Mercurial (it has a git2hg note) gives its
 *     stored changeset and manifest; its file revisions are those of its
 *     manifest that neither parent manifest has, and their parents are
 *     found among the parent manifests' revisions of the same path by
 *     checking ids;
 *   - another commit is converted: its manifest is its first parent's
 *     with the files that differ in the git trees; a file whose content
 *     and mode did not change keeps its revision, a mode change keeps the
 *     revision with a new flag, a new content makes a new revision whose
 *     parents are the path's revisions in the parent manifests (in a
 *     merge, a content equal to one side's keeps that side's revision);
 *     a file added with the exact content of a file removed in the same
 *     commit is recorded as renamed from it ("copy"/"copyrev" metadata,
 *     no parents); the changeset takes its branch from its first parent,
 *     its user, date and description from the commit, a "committer"
 *     extra when the committer differs from the author, and with the
 *     git_commit experiment a "git_commit" extra (the commit's id).
 * Stored manifests are made from the previous one read and the changes
 * between their git trees (manifest-diff.h). A file revision whose blob
 * the pack stores as a delta against the blob of a revision sent just
 * before gets its text and its delta from that (pack-delta.h), without
 * reading its blob whole nor diffing.
 * The changegroup is then imported back, which records the new
 * changesets like fetched ones and checks that each gives back exactly
 * the commit it was made from.
 */
#include "cache.h"
#include "config.h"
#include "diff.h"
#include "diffcore.h"
#include "khash.h"
#include "progress.h"
#include "string-list.h"
#include "authorship.h"
#include "bundle.h"
#include "changeset.h"
#include "file.h"
#include "hg-diff.h"
#include "hg-id.h"
#include "hg-path.h"
#include "import.h"
#include "manifest.h"
#include "manifest-delta.h"
#include "manifest-diff.h"
#include "metadata.h"
#include "notes-map.h"
#include "pack-delta.h"
#include "store.h"
#include "tree-iter.h"
#include "raw-commit.h"
#include "experiments.h"
#include "push.h"

/* A parsed manifest: its text and its lines, sorted by path. */
struct mline {
	const char *path;
	size_t len;
	struct hg_oid node;
	char flag;
};

struct mmap {
	struct hg_oid id;
	struct strbuf text;
	struct mline *lines;
	size_t nr, alloc;
	/* stored manifests: their manifest tree */
	struct object_id tree;
	int has_tree;
};

static void mmap_parse(struct mmap *m)
{
	const char *p = m->text.buf, *end = p + m->text.len;
	m->nr = 0;
	while (p < end) {
		const char *nul = memchr(p, '\0', end - p), *eol;
		struct mline *l;
		if (!nul || end - nul < HG_HEXSZ + 2)
			die("manifest %s is damaged", hg_oid_to_hex(&m->id));
		eol = memchr(nul, '\n', end - nul);
		if (!eol)
			die("manifest %s is damaged", hg_oid_to_hex(&m->id));
		ALLOC_GROW(m->lines, m->nr + 1, m->alloc);
		l = &m->lines[m->nr++];
		l->path = p;
		l->len = nul - p;
		if (hg_oid_from_hex(nul + 1, &l->node))
			die("manifest %s is damaged", hg_oid_to_hex(&m->id));
		l->flag = eol - nul - 1 > HG_HEXSZ ? nul[1 + HG_HEXSZ] : '\0';
		p = eol + 1;
	}
}

static int path_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int cmp = memcmp(a, b, alen < blen ? alen : blen);
	return cmp ? cmp : alen < blen ? -1 : alen > blen;
}

static const struct mline *mmap_get(const struct mmap *m, const char *path,
				    size_t len)
{
	size_t lo = 0, hi = m ? m->nr : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = path_cmp(m->lines[mid].path, m->lines[mid].len,
				   path, len);
		if (!cmp)
			return &m->lines[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A few recently used manifests, most recent first. */
#define MMAP_CACHE 4
static struct mmap *mmap_cache[MMAP_CACHE];

static void mmap_free(struct mmap *m)
{
	if (!m)
		return;
	strbuf_release(&m->text);
	free(m->lines);
	free(m);
}

static void mmap_remember(struct mmap *m)
{
	mmap_free(mmap_cache[MMAP_CACHE - 1]);
	MOVE_ARRAY(mmap_cache + 1, mmap_cache, MMAP_CACHE - 1);
	mmap_cache[0] = m;
}

/* Manifests made for this push, not stored yet. */
static const struct strbuf *(*new_manifest_text)(const struct hg_oid *id);

static void add_line(struct mmap *m, const char *path, size_t len,
		     const struct hg_oid *node, char flag)
{
	struct mline *l;
	ALLOC_GROW(m->lines, m->nr + 1, m->alloc);
	l = &m->lines[m->nr++];
	l->path = m->text.buf + m->text.len;
	l->len = len;
	hg_oidcpy(&l->node, node);
	l->flag = flag;
	strbuf_add(&m->text, path, len);
	strbuf_addch(&m->text, '\0');
	strbuf_add(&m->text, hg_oid_to_hex(node), HG_HEXSZ);
	if (flag)
		strbuf_addch(&m->text, flag);
	strbuf_addch(&m->text, '\n');
}

/*
 * The stored manifest `m` (its tree set) from `from`, another stored one,
 * and the changes between their trees: the unchanged lines are copied,
 * text and parsed, instead of making the whole text from the tree and
 * parsing it back.
 */
static void mmap_derive(struct mmap *m, const struct mmap *from)
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
		size_t start = i, k;
		const char *end;
		int cmp = 1;
		/* The lines before the change stay. */
		while (i < from->nr && (!ch || (cmp = path_cmp(
			from->lines[i].path, from->lines[i].len,
			ch->path, ch->len)) < 0))
			i++;
		end = i < from->nr ? from->lines[i].path
				   : from->text.buf + from->text.len;
		if (start < i) {
			const char *src = from->lines[start].path;
			const char *dst = m->text.buf + m->text.len;
			for (k = start; k < i; k++) {
				m->lines[m->nr] = from->lines[k];
				m->lines[m->nr++].path = dst +
					(from->lines[k].path - src);
			}
			strbuf_add(&m->text, src, end - src);
		}
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

/* The manifest `id` (NULL for the null id); valid for a few calls. */
static const struct mmap *mmap_get_manifest(const struct hg_oid *id)
{
	struct mmap *m;
	const struct strbuf *text;
	const struct object_id *commit;
	int i;
	if (hg_oid_is_null(id))
		return NULL;
	for (i = 0; i < MMAP_CACHE; i++) {
		if (mmap_cache[i] && hg_oideq(&mmap_cache[i]->id, id)) {
			/* Most recently used first: the last ones stay. */
			m = mmap_cache[i];
			MOVE_ARRAY(mmap_cache + 1, mmap_cache, i);
			mmap_cache[0] = m;
			return m;
		}
	}
	CALLOC_ARRAY(m, 1);
	hg_oidcpy(&m->id, id);
	strbuf_init(&m->text, 0);
	text = new_manifest_text ? new_manifest_text(id) : NULL;
	if (text) {
		strbuf_addbuf(&m->text, text);
		mmap_parse(m);
		mmap_remember(m);
		return m;
	}
	commit = hg2git(id);
	if (!commit)
		die("unknown manifest %s", hg_oid_to_hex(id));
	commit_tree_oid(commit, &m->tree);
	m->has_tree = 1;
	for (i = 0; i < MMAP_CACHE; i++)
		if (mmap_cache[i] && mmap_cache[i]->has_tree)
			break;
	if (i < MMAP_CACHE) {
		mmap_derive(m, mmap_cache[i]);
	} else {
		manifest_text(id, &m->text);
		mmap_parse(m);
	}
	mmap_remember(m);
	return m;
}

/* What the changegroup will hold. */
struct file_rev {
	const char *path;		/* interned */
	struct hg_oid node, p1, p2, link;
	struct object_id blob;		/* new revisions: the content */
	char *meta;			/* new revisions: metadata, or NULL */
	int is_new;
	/* stored revisions: the parents are among these (see below) */
	struct hg_oid cand1, cand2;
	int need_parents;
	size_t order;
};

struct cs_rev {
	struct object_id commit;
	struct hg_oid node, p1, p2, manifest, mp1, mp2;
	struct strbuf text;
	struct strbuf manifest_text;	/* for new manifests */
	/* Once its delta is made, the text waits in the spill file. */
	off_t manifest_off;
	size_t manifest_len;
	int manifest_spilled;
	/* When the manifest is sent: its delta and the delta's base. */
	struct strbuf manifest_delta;
	struct hg_oid manifest_base;
	int send_manifest, new_manifest;
};

static inline unsigned int hg_oid_khash(struct hg_oid oid)
{
	unsigned int h;
	memcpy(&h, oid.hash, sizeof(h));
	return h;
}

static inline int hg_oid_kheq(struct hg_oid a, struct hg_oid b)
{
	return hg_oideq(&a, &b);
}

/* hg id -> position in the batch's commits or files. */
KHASH_INIT(hg_pos, struct hg_oid, size_t, 1, hg_oid_khash, hg_oid_kheq)

struct push_state {
	struct cs_rev *cs;
	size_t nr;
	struct file_rev *files;
	size_t files_nr, files_alloc;
	struct string_list paths;
	/* Where the commits done so far, their changesets, their new
	 * manifests and the new file revisions are. */
	kh_oid_pos_t *by_commit;
	kh_hg_pos_t *by_node, *by_manifest, *new_files;
	/* The manifests sent so far, and the last one (the next's base). */
	kh_hg_pos_t *sent_manifests;
	struct hg_oid last_sent_manifest;
};

static struct push_state *current;

static void set_pos(kh_hg_pos_t *map, const struct hg_oid *key, size_t pos)
{
	int ret;
	khiter_t it = kh_put_hg_pos(map, *key, &ret);
	kh_value(map, it) = pos;
}

static int get_pos(kh_hg_pos_t *map, const struct hg_oid *key, size_t *pos)
{
	khiter_t it = kh_get_hg_pos(map, *key);
	if (it == kh_end(map))
		return 0;
	*pos = kh_value(map, it);
	return 1;
}

/* Record commit `i` of the batch, once its changeset is made. */
static void index_commit(struct push_state *st, size_t i)
{
	int ret;
	khiter_t it = kh_put_oid_pos(st->by_commit, st->cs[i].commit, &ret);
	kh_value(st->by_commit, it) = i;
	set_pos(st->by_node, &st->cs[i].node, i);
	if (st->cs[i].new_manifest)
		set_pos(st->by_manifest, &st->cs[i].manifest, i);
}

/* The commit being made is not indexed yet: it is the last one. */
static struct cs_rev *batch_current(void)
{
	return current && current->nr ? &current->cs[current->nr - 1] : NULL;
}

static struct cs_rev *batch_changeset(const struct hg_oid *node)
{
	struct cs_rev *cs = batch_current();
	size_t i;
	if (cs && hg_oideq(&cs->node, node))
		return cs;
	return cs && get_pos(current->by_node, node, &i) ? &current->cs[i]
							: NULL;
}

/*
 * New manifest texts go to a temporary file once their delta is made:
 * kept in memory, they made a push or bundle hold one whole manifest per
 * changeset until the end (gigabytes for 30k files and a few thousand
 * changesets). Later changesets read back the few their parents need
 * (the cache of recent manifests keeps the last ones).
 */
static FILE *manifest_spill;

static void spill_manifest_text(struct cs_rev *cs)
{
	if (!cs->new_manifest || cs->manifest_spilled)
		return;
	if (!manifest_spill && !(manifest_spill = tmpfile()))
		die_errno("cannot create a temporary file");
	if (fseeko(manifest_spill, 0, SEEK_END) ||
	    (cs->manifest_off = ftello(manifest_spill)) < 0 ||
	    fwrite(cs->manifest_text.buf, 1, cs->manifest_text.len,
		   manifest_spill) != cs->manifest_text.len)
		die_errno("cannot write a temporary file");
	cs->manifest_len = cs->manifest_text.len;
	cs->manifest_spilled = 1;
	strbuf_release(&cs->manifest_text);
}

static const struct strbuf *spilled_text(const struct cs_rev *cs)
{
	static struct strbuf text = STRBUF_INIT;

	if (!cs->manifest_spilled)
		return &cs->manifest_text;
	strbuf_reset(&text);
	strbuf_grow(&text, cs->manifest_len);
	if (fflush(manifest_spill) ||
	    fseeko(manifest_spill, cs->manifest_off, SEEK_SET) ||
	    fread(text.buf, 1, cs->manifest_len, manifest_spill) !=
	    cs->manifest_len)
		die_errno("cannot read a temporary file");
	strbuf_setlen(&text, cs->manifest_len);
	return &text;
}

static const struct strbuf *batch_manifest_text(const struct hg_oid *id)
{
	struct cs_rev *cs = batch_current();
	size_t i;
	if (cs && cs->new_manifest && hg_oideq(&cs->manifest, id))
		return spilled_text(cs);
	return cs && get_pos(current->by_manifest, id, &i)
		? spilled_text(&current->cs[i]) : NULL;
}

/* The raw text of a changeset, pushed in this batch or stored. */
static void any_changeset_text(const struct hg_oid *node, struct strbuf *out)
{
	struct cs_rev *cs = batch_changeset(node);
	if (cs) {
		strbuf_reset(out);
		strbuf_addbuf(out, &cs->text);
	} else {
		changeset_text(node, out);
	}
}

static const char *intern_path(struct push_state *st, const char *p, size_t len)
{
	char *s = xmemdupz(p, len);
	struct string_list_item *item = string_list_insert(&st->paths, s);
	free(s);
	return item->string;
}

static struct file_rev *add_file_rev(struct push_state *st, const char *path,
				     size_t len, const struct hg_oid *node,
				     const struct hg_oid *link)
{
	struct file_rev *f;
	ALLOC_GROW(st->files, st->files_nr + 1, st->files_alloc);
	f = &st->files[st->files_nr];
	memset(f, 0, sizeof(*f));
	f->path = intern_path(st, path, len);
	hg_oidcpy(&f->node, node);
	hg_oidcpy(&f->link, link);
	f->order = st->files_nr++;
	return f;
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
 * The parents of a stored file revision, which the metadata does not
 * keep: among the revisions of the same path in the parent manifests
 * (a, b), the pair whose hash with the text gives the revision's id.
 */
static void find_file_parents(struct file_rev *r, const struct strbuf *text)
{
	const struct hg_oid *a = &r->cand1, *b = &r->cand2;
	const struct hg_oid *tries[][2] = {
		{ a, b }, { a, &hg_null_oid }, { b, &hg_null_oid },
		{ a, a }, { &hg_null_oid, &hg_null_oid },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		struct hg_oid h;
		hg_hash(tries[i][0], tries[i][1], text->buf, text->len, &h);
		if (hg_oideq(&h, &r->node)) {
			hg_oidcpy(&r->p1, tries[i][0]);
			hg_oidcpy(&r->p2, tries[i][1]);
			r->need_parents = 0;
			return;
		}
	}
	die("cannot find the parents of file revision %s",
	    hg_oid_to_hex(&r->node));
}

/* The manifests of a changeset's parents, into mp1 and mp2. */
static void parent_manifests(struct cs_rev *cs)
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
		any_changeset_text(p, &text);
		if (parse_changeset(&pc, text.buf, text.len))
			die("changeset %s is damaged", hg_oid_to_hex(p));
		hg_oidcpy(mp, &pc.manifest);
	}
	strbuf_release(&text);
}

static void add_stored(struct push_state *st, struct cs_rev *cs)
{
	struct hg_changeset parsed;
	const struct mmap *m, *m1, *m2;
	size_t i, j;

	changeset_text(&cs->node, &cs->text);
	if (parse_changeset(&parsed, cs->text.buf, cs->text.len))
		die("changeset %s is damaged", hg_oid_to_hex(&cs->node));
	hg_oidcpy(&cs->manifest, &parsed.manifest);
	parent_manifests(cs);
	/* Three manifests: all stay in the cache of four. */
	m1 = mmap_get_manifest(&cs->mp1);
	m2 = mmap_get_manifest(&cs->mp2);
	m = mmap_get_manifest(&cs->manifest);
	cs->send_manifest = !hg_oid_is_null(&cs->manifest);
	/* m and m1 are both sorted: walked together. */
	for (i = 0, j = 0; m && i < m->nr; i++) {
		const struct mline *l = &m->lines[i];
		const struct mline *l1 = NULL, *l2;
		struct file_rev *f;
		int cmp = -1;
		while (j < (m1 ? m1->nr : 0) &&
		       (cmp = path_cmp(m1->lines[j].path, m1->lines[j].len,
				       l->path, l->len)) < 0)
			j++;
		if (!cmp)
			l1 = &m1->lines[j];
		if (l1 && hg_oideq(&l1->node, &l->node))
			continue;
		l2 = mmap_get(m2, l->path, l->len);
		if (l2 && hg_oideq(&l2->node, &l->node))
			continue;
		f = add_file_rev(st, l->path, l->len, &l->node, &cs->node);
		hg_oidcpy(&f->cand1, l1 ? &l1->node : &hg_null_oid);
		hg_oidcpy(&f->cand2, l2 ? &l2->node : &hg_null_oid);
		f->need_parents = 1;
	}
}

/* Differences between two git trees. */
struct tree_change {
	char *path;
	unsigned old_mode, new_mode;	/* 0 when absent */
	struct object_id old_oid, new_oid;
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
static const struct object_id *blob_of(const struct mline *l)
{
	static struct object_id empty;
	const struct object_id *blob;
	size_t i;
	if (hg_oideq(&l->node, &hg_empty_file_oid)) {
		store_object_buf(OBJ_BLOB, "", 0, &empty);
		return &empty;
	}
	blob = hg2git(&l->node);
	if (!blob && current && get_pos(current->new_files, &l->node, &i))
		blob = &current->files[i].blob;
	return blob;
}

/* A new manifest line, kept until the manifest text is written. */
struct new_line {
	const char *path;
	size_t len;
	struct hg_oid node;
	char flag;
	int removed;
	int new_rev;
};

static int new_line_cmp(const void *a, const void *b)
{
	const struct new_line *x = a, *y = b;
	return path_cmp(x->path, x->len, y->path, y->len);
}

/*
 * The text of a new file revision: the blob's content, framed by "\1\n"
 * with the metadata `meta` before it when there is some, or when the
 * content itself starts with "\1\n" (then with empty metadata). Return
 * whether it is framed.
 */
static int new_file_text(struct strbuf *out, const struct object_id *blob,
			 const char *meta)
{
	enum object_type type;
	unsigned long size;
	char *content = store_read_object(blob, &type, &size);
	int framed;

	if (!content || type != OBJ_BLOB)
		die("missing blob %s", oid_to_hex(blob));
	framed = meta || (size >= 2 && !memcmp(content, "\1\n", 2));
	strbuf_reset(out);
	if (framed) {
		strbuf_addstr(out, "\1\n");
		strbuf_addstr(out, meta ? meta : "");
		strbuf_addstr(out, "\1\n");
	}
	strbuf_add(out, content, size);
	free(content);
	return framed;
}

/*
 * The revision for a changed file of a converted commit; return 1 when it
 * is a new revision, 0 when an existing one is reused.
 */
static int file_revision(struct push_state *st, struct cs_rev *cs,
			  struct tree_change *ch, const struct mmap *m1,
			  const struct mmap *m2, const char *copy_from,
			  struct hg_oid *node)
{
	size_t len = strlen(ch->path);
	const struct mline *l1 = mmap_get(m1, ch->path, len);
	const struct mline *l2 = mmap_get(m2, ch->path, len);
	const struct object_id *b1 = l1 ? blob_of(l1) : NULL;
	const struct object_id *b2 = l2 ? blob_of(l2) : NULL;
	struct hg_oid fp1, fp2;
	struct strbuf text = STRBUF_INIT, meta = STRBUF_INIT;
	struct file_rev *f;
	int framed;

	if (!copy_from) {
		if (l1 && b1 && oideq(b1, &ch->new_oid) &&
		    (!l2 || hg_oideq(&l2->node, &l1->node) ||
		     (b2 && oideq(b2, b1)))) {
			hg_oidcpy(node, &l1->node);
			return 0;
		}
		if (l2 && b2 && oideq(b2, &ch->new_oid)) {
			hg_oidcpy(node, &l2->node);
			return 0;
		}
	}
	hg_oidcpy(&fp1, l1 ? &l1->node : &hg_null_oid);
	hg_oidcpy(&fp2, l2 ? &l2->node : &hg_null_oid);
	if (hg_oideq(&fp1, &fp2))
		hg_oidcpy(&fp2, &hg_null_oid);
	if (hg_oid_is_null(&fp1)) {
		hg_oidcpy(&fp1, &fp2);
		hg_oidcpy(&fp2, &hg_null_oid);
	}
	if (copy_from) {
		const struct mline *src = mmap_get(m1, copy_from,
						   strlen(copy_from));
		strbuf_addf(&meta, "copy: %s\ncopyrev: %s\n", copy_from,
			    hg_oid_to_hex(&src->node));
		hg_oidcpy(&fp1, &hg_null_oid);
		hg_oidcpy(&fp2, &hg_null_oid);
	}
	framed = new_file_text(&text, &ch->new_oid, meta.len ? meta.buf : NULL);
	hg_hash(&fp1, &fp2, text.buf, text.len, node);
	f = add_file_rev(st, ch->path, len, node, &cs->node);
	hg_oidcpy(&f->p1, &fp1);
	hg_oidcpy(&f->p2, &fp2);
	oidcpy(&f->blob, &ch->new_oid);
	f->meta = framed ? strbuf_detach(&meta, NULL) : NULL;
	f->is_new = 1;
	set_pos(st->new_files, node, f->order);
	strbuf_release(&meta);
	strbuf_release(&text);
	return 1;
}

/*
 * Renames and copies by similarity, when `cinnabar.similarity` (a
 * percentage) is set, or the similarity=<n> experiment (experiments.h): git's own detection between the two trees, as
 * `git diff -M<n>% -C<n>% --find-copies-harder`. Fills `renames` with
 * "new path" -> util: "source path".
 */
static void similar_renames(const struct object_id *old_tree,
			    const struct object_id *new_tree,
			    struct string_list *renames)
{
	struct diff_options opts;
	int percent, i;

	if (push_similarity(&percent) || !old_tree)
		return;
	repo_diff_setup(the_repository, &opts);
	opts.flags.recursive = 1;
	opts.detect_rename = DIFF_DETECT_COPY;
	opts.flags.find_copies_harder = 1;
	opts.rename_score = (int)(percent * MAX_SCORE / 100);
	opts.output_format = DIFF_FORMAT_NO_OUTPUT;
	diff_setup_done(&opts);
	diff_tree_oid(old_tree, new_tree, "", &opts);
	diffcore_std(&opts);
	for (i = 0; i < diff_queued_diff.nr; i++) {
		struct diff_filepair *p = diff_queued_diff.queue[i];
		if (p->status == DIFF_STATUS_RENAMED ||
		    p->status == DIFF_STATUS_COPIED)
			string_list_insert(renames, p->two->path)->util =
				xstrdup(p->one->path);
	}
	diff_flush(&opts);
}

/*
 * Renames: a removed path whose exact content a new path has, or one git
 * pairs with it by similarity (see similar_renames).
 */
static const char *rename_source(struct changes *c, size_t i,
				 const struct mmap *m1,
				 struct string_list *similar)
{
	struct tree_change *add = &c->items[i];
	struct string_list_item *item;
	size_t j;
	if (add->old_mode || S_ISLNK(add->new_mode))
		return NULL;
	item = string_list_lookup(similar, add->path);
	if (item && mmap_get(m1, item->util, strlen(item->util))) {
		for (j = 0; j < c->nr; j++)
			if (!c->items[j].new_mode &&
			    !strcmp(c->items[j].path, item->util))
				c->items[j].old_mode = 0;
		return item->util;
	}
	for (j = 0; j < c->nr; j++) {
		struct tree_change *del = &c->items[j];
		if (!del->new_mode && del->old_mode &&
		    !S_ISLNK(del->old_mode) && !S_ISGITLINK(del->old_mode) &&
		    oideq(&del->old_oid, &add->new_oid) &&
		    mmap_get(m1, del->path, strlen(del->path))) {
			/* One source per rename. */
			del->old_mode = 0;
			return del->path;
		}
	}
	return NULL;
}

static const char *branch_of(const struct hg_oid *node, struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;
	struct hg_changeset cs;
	const char *branch;
	size_t len;

	strbuf_reset(out);
	if (hg_oid_is_null(node))
		return NULL;
	any_changeset_text(node, &text);
	if (parse_changeset(&cs, text.buf, text.len))
		die("changeset %s is damaged", hg_oid_to_hex(node));
	branch = changeset_extra_branch(&cs, &len);
	if (branch)
		strbuf_add(out, branch, len);
	strbuf_release(&text);
	return out->len ? out->buf : NULL;
}

/* Branches given by push_set_branch: oid hex -> branch name. */
static struct string_list set_branches = STRING_LIST_INIT_DUP;

void push_set_branch(const struct object_id *commit, const char *branch)
{
	string_list_insert(&set_branches, oid_to_hex(commit))->util =
		xstrdup(branch);
}

/* The changeset's branch: the one set for its commit, or p1's. */
static void branch_for(struct cs_rev *cs, struct strbuf *out)
{
	struct string_list_item *set =
		string_list_lookup(&set_branches, oid_to_hex(&cs->commit));

	if (!set) {
		branch_of(&cs->p1, out);
		return;
	}
	strbuf_reset(out);
	if (strcmp(set->util, "default"))
		strbuf_addstr(out, set->util);
}

static void write_changeset_text(struct cs_rev *cs, struct raw_commit *c,
				 struct string_list *files)
{
	struct hg_authorship a = HG_AUTHORSHIP_INIT;
	struct strbuf branch = STRBUF_INIT, committer = STRBUF_INIT;
	int extra = 0;
	size_t i;

	if (hg_authorship_from_git(&a, c->author.buf, c->author.len))
		die("commit %s has an author git cannot parse",
		    oid_to_hex(&cs->commit));
	branch_for(cs, &branch);
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

static void convert_commit(struct push_state *st, struct cs_rev *cs,
			   struct raw_commit *c)
{
	const struct mmap *m1, *m2;
	struct changes changes = { 0 };
	struct object_id p1_tree;
	struct strbuf base = STRBUF_INIT;
	struct string_list files = STRING_LIST_INIT_DUP;
	struct string_list similar = STRING_LIST_INIT_DUP;
	struct new_line *lines = NULL;
	size_t nr = 0, alloc = 0, i, j, first_file = st->files_nr;

	parent_manifests(cs);
	m2 = mmap_get_manifest(&cs->mp2);
	m1 = mmap_get_manifest(&cs->mp1);
	if (c->parents.nr)
		commit_tree_oid(&c->parents.oid[0], &p1_tree);
	diff_trees(&changes, c->parents.nr ? &p1_tree : NULL, &c->tree, &base);
	strbuf_release(&base);
	similar_renames(c->parents.nr ? &p1_tree : NULL, &c->tree, &similar);

	for (i = 0; i < changes.nr; i++) {
		struct tree_change *ch = &changes.items[i];
		struct new_line *l;
		const char *copy;
		if (!ch->new_mode)
			continue;
		hg_path_audit(ch->path, strlen(ch->path), "push");
		copy = rename_source(&changes, i, m1, &similar);
		ALLOC_GROW(lines, nr + 1, alloc);
		l = &lines[nr++];
		l->path = ch->path;
		l->len = strlen(ch->path);
		l->flag = flag_of(ch->new_mode, ch->path);
		l->removed = 0;
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
		l->new_rev = 0;
	}
	QSORT(lines, nr, new_line_cmp);

	/* The new manifest: m1's lines merged with the changed ones. */
	for (i = 0, j = 0; i < (m1 ? m1->nr : 0) || j < nr;) {
		int cmp = i == (m1 ? m1->nr : 0) ? 1 : j == nr ? -1 :
			  path_cmp(m1->lines[i].path, m1->lines[i].len,
				   lines[j].path, lines[j].len);
		const struct mline *old = cmp <= 0 ? &m1->lines[i] : NULL;
		if (cmp < 0) {
			strbuf_add(&cs->manifest_text, old->path, old->len);
			strbuf_addf(&cs->manifest_text, "%c%s", '\0',
				    hg_oid_to_hex(&old->node));
			if (old->flag)
				strbuf_addch(&cs->manifest_text, old->flag);
			strbuf_addch(&cs->manifest_text, '\n');
			i++;
			continue;
		}
		if (!lines[j].removed) {
			strbuf_add(&cs->manifest_text, lines[j].path,
				   lines[j].len);
			strbuf_addf(&cs->manifest_text, "%c%s", '\0',
				    hg_oid_to_hex(&lines[j].node));
			if (lines[j].flag)
				strbuf_addch(&cs->manifest_text,
					     lines[j].flag);
			strbuf_addch(&cs->manifest_text, '\n');
		}
		/*
		 * As Mercurial lists them: new revisions, flag changes and
		 * removals (a merge reusing the other side's revision is not
		 * a change).
		 */
		if (lines[j].removed ? !!old : lines[j].new_rev ||
		    (old && old->flag != lines[j].flag) ||
		    (!old && hg_oid_is_null(&cs->p2)))
			string_list_append(&files, lines[j].path);
		if (cmp == 0)
			i++;
		j++;
	}
	string_list_sort(&files);
	string_list_remove_duplicates(&files, 0);

	if (!files.nr && hg_oid_is_null(&cs->p2) && !hg_oid_is_null(&cs->mp1)) {
		hg_oidcpy(&cs->manifest, &cs->mp1);
	} else {
		hg_hash(&cs->mp1, &cs->mp2, cs->manifest_text.buf,
			cs->manifest_text.len, &cs->manifest);
		cs->send_manifest = cs->new_manifest = 1;
	}
	write_changeset_text(cs, c, &files);
	for (i = first_file; i < st->files_nr; i++)
		hg_oidcpy(&st->files[i].link, &cs->node);

	string_list_clear(&files, 0);
	string_list_clear(&similar, 1);
	free(lines);
	for (i = 0; i < changes.nr; i++)
		free(changes.items[i].path);
	free(changes.items);
}

/*
 * The delta of a changeset's manifest, made as soon as the changeset is,
 * while its manifest and its base are in the cache, with no general diff
 * (see manifest-delta.h). The base, as for files (write_file_groups): in
 * version 02 and 03 the first parent's manifest (known to the server:
 * sent before, or stored there), else the previous manifest sent; in
 * version 01 the previous manifest sent, for the first one the first
 * parent's. A manifest is sent once.
 */
static void make_manifest_delta(struct push_state *st, struct cs_rev *cs,
				int version)
{
	const struct mmap *m, *base;
	const struct hg_oid *base_id = &st->last_sent_manifest;
	int ret;

	if (!cs->send_manifest)
		return;
	kh_put_hg_pos(st->sent_manifests, cs->manifest, &ret);
	if (!ret) {
		cs->send_manifest = 0;
		return;
	}
	if (version == 1 ? hg_oid_is_null(base_id)
			 : !hg_oid_is_null(&cs->mp1))
		base_id = &cs->mp1;
	base = mmap_get_manifest(base_id);
	m = mmap_get_manifest(&cs->manifest);
	manifest_delta(base ? base->text.buf : "", base ? base->text.len : 0,
		       m->text.buf, m->text.len, &cs->manifest_delta);
	hg_oidcpy(&cs->manifest_base, base_id);
	hg_oidcpy(&st->last_sent_manifest, &cs->manifest);
}

/* Writing the changegroup. */

static void write_chunk_header(struct strbuf *out, size_t payload)
{
	unsigned char hdr[4];
	put_be32(hdr, payload + 4);
	strbuf_add(out, hdr, 4);
}

/*
 * One revision, as a delta against `base` (the previous revision of the
 * group, or for the first one of a version 01 group, its p1; base_node is
 * its id, named in version 02's header): see hg-diff.h.
 */
/* Revisions written so far, shown as progress on long writes. */
static struct progress *write_progress;
static uint64_t revisions_written;

static void write_rev_delta(FILE *f, int version, const struct hg_oid *node,
			    const struct hg_oid *p1, const struct hg_oid *p2,
			    const struct hg_oid *link,
			    const struct hg_oid *base_node,
			    const struct strbuf *delta)
{
	static struct strbuf buf = STRBUF_INIT;
	size_t hdr = version == 1 ? 80 : 100;

	strbuf_reset(&buf);
	write_chunk_header(&buf, hdr + delta->len);
	strbuf_add(&buf, node->hash, HG_RAWSZ);
	strbuf_add(&buf, p1->hash, HG_RAWSZ);
	strbuf_add(&buf, p2->hash, HG_RAWSZ);
	if (version != 1)
		strbuf_add(&buf, base_node->hash, HG_RAWSZ);
	strbuf_add(&buf, link->hash, HG_RAWSZ);
	if (fwrite(buf.buf, 1, buf.len, f) != buf.len ||
	    fwrite(delta->buf, 1, delta->len, f) != delta->len)
		die_errno("cannot write the changegroup");
	display_progress(write_progress, ++revisions_written);
}

static void write_rev(FILE *f, int version, const struct hg_oid *node,
		      const struct hg_oid *p1, const struct hg_oid *p2,
		      const struct hg_oid *link, const struct hg_oid *base_node,
		      const char *base, size_t base_len,
		      const char *text, size_t len)
{
	static struct strbuf delta = STRBUF_INIT;

	strbuf_reset(&delta);
	hg_diff(base, base_len, text, len, &delta);
	write_rev_delta(f, version, node, p1, p2, link, base_node, &delta);
}

static void write_end(FILE *f)
{
	if (fwrite("\0\0\0\0", 1, 4, f) != 4)
		die_errno("cannot write the changegroup");
}

static int file_rev_cmp(const void *a, const void *b)
{
	const struct file_rev *x = a, *y = b;
	int cmp = strcmp(x->path, y->path);
	return cmp ? cmp : x->order < y->order ? -1 : x->order > y->order;
}

static void file_rev_text(const struct file_rev *r, struct strbuf *out)
{
	if (r->is_new)
		new_file_text(out, &r->blob, r->meta);
	else
		file_text(&r->node, out);
}

/* The blob of a revision whose text is exactly the blob's content. */
static int plain_blob(const struct file_rev *r, struct object_id *blob)
{
	struct object_id key;
	const struct object_id *b;

	if (r->is_new) {
		if (r->meta)
			return 0;
		oidcpy(blob, &r->blob);
		return 1;
	}
	if (hg_oideq(&r->node, &hg_empty_file_oid))
		return 0;
	hg_oid_to_git(&key, &r->node);
	if (notes_map_get(&metadata.files_meta, &key))
		return 0;
	b = hg2git(&r->node);
	if (!b)
		return 0;
	oidcpy(blob, b);
	return 1;
}

/*
 * The last revisions written of the current group: a revision whose blob
 * the pack stores as a delta against the blob of one of them is sent as
 * that delta, against that revision (version 01 deltas can only be
 * against the previous one).
 */
#define RECENT_REVS 16
struct recent_rev {
	struct hg_oid node;
	struct strbuf text;
	struct packed_git *pack;	/* NULL: not a blob of a pack */
	off_t offset;
};

static struct recent_rev *recent_base(struct recent_rev *recent,
				      size_t last, size_t nr, int version,
				      struct packed_git *pack, off_t offset)
{
	/* Not the oldest: its slot is the one being written. */
	size_t k, max = version == 1 ? 1 : RECENT_REVS - 1;
	for (k = 0; k < nr && k < max; k++) {
		struct recent_rev *c = &recent[(last + RECENT_REVS - k) %
					       RECENT_REVS];
		if (c->pack == pack && c->offset == offset)
			return c;
	}
	return NULL;
}

/* The text of file revision `node`: one of this push's, or stored. */
static void any_file_text(struct push_state *st, const struct hg_oid *node,
			  struct strbuf *out)
{
	size_t i;
	if (get_pos(st->new_files, node, &i))
		file_rev_text(&st->files[i], out);
	else
		file_text(node, out);
}

/* The recent revision `node`, or NULL. */
static struct recent_rev *recent_node(struct recent_rev *recent,
				      size_t last, size_t nr,
				      const struct hg_oid *node)
{
	size_t k;
	for (k = 0; k < nr && k < RECENT_REVS - 1; k++) {
		struct recent_rev *c = &recent[(last + RECENT_REVS - k) %
					       RECENT_REVS];
		if (hg_oideq(&c->node, node))
			return c;
	}
	return NULL;
}

/*
 * The groups of files [from, to) (whole paths) of the sorted files.
 *
 * In version 02 and 03, a revision is sent as a delta against its first
 * parent, as Mercurial itself sends them from a generaldelta repository
 * (the receiving server then stores the delta it gets rather than
 * computing another: measured on nginx, 0.2 s less of the server's CPU
 * than deltas against the previous revision of the group); a revision
 * without parent against the previous one of the group, if any. The
 * first parent is known to the server: sent before in the group (the
 * revisions of a path are in the order of their changesets), or stored
 * there. The pack's delta is used when it is against that base.
 */
static void write_file_groups(FILE *f, int version, struct push_state *st,
			      size_t from, size_t to)
{
	struct recent_rev recent[RECENT_REVS];
	struct strbuf delta = STRBUF_INIT, git_delta = STRBUF_INIT;
	struct strbuf base_text = STRBUF_INIT;
	size_t i, last = 0, nr = 0;

	for (i = 0; i < RECENT_REVS; i++)
		strbuf_init(&recent[i].text, 0);
	for (i = from; i < to; i++) {
		struct file_rev *r = &st->files[i];
		struct strbuf name = STRBUF_INIT;
		int first = i == from || strcmp(st->files[i - 1].path, r->path);
		struct recent_rev *slot, *base = NULL;
		const struct hg_oid *base_node;
		struct object_id blob;
		off_t base_offset;
		int have_delta = 0;

		if (!first && hg_oideq(&st->files[i - 1].node, &r->node))
			continue;
		if (first) {
			if (i != from)
				write_end(f);
			write_chunk_header(&name, strlen(r->path));
			strbuf_addstr(&name, r->path);
			if (fwrite(name.buf, 1, name.len, f) != name.len)
				die_errno("cannot write the changegroup");
			strbuf_release(&name);
			nr = 0;
		}
		slot = &recent[(last + 1) % RECENT_REVS];
		slot->pack = NULL;
		if (plain_blob(r, &blob))
			pack_entry_of(&blob, &slot->pack, &slot->offset);
		if (nr && slot->pack &&
		    !pack_delta_at(slot->pack, slot->offset, &git_delta,
				   &base_offset))
			base = recent_base(recent, last, nr, version,
					   slot->pack, base_offset);
		if (base && !git_delta_to_hg(base->text.buf, base->text.len,
					     git_delta.buf, git_delta.len,
					     &slot->text, &delta))
			have_delta = 1;
		else
			file_rev_text(r, &slot->text);
		if (r->need_parents)
			find_file_parents(r, &slot->text);

		/* The base: see above. Version 01's is implied: the
		 * previous revision, for the first one its first parent. */
		if (version == 1)
			base_node = nr ? &recent[last].node : &r->p1;
		else if (hg_oid_is_null(&r->p1))
			base_node = nr ? &recent[last].node : &hg_null_oid;
		else
			base_node = &r->p1;
		if (have_delta && hg_oideq(&base->node, base_node)) {
			write_rev_delta(f, version, &r->node, &r->p1, &r->p2,
					&r->link, base_node, &delta);
		} else {
			const struct strbuf *text = &base_text;
			struct recent_rev *want =
				recent_node(recent, last, nr, base_node);
			strbuf_reset(&base_text);
			if (want)
				text = &want->text;
			else if (!hg_oid_is_null(base_node))
				any_file_text(st, base_node, &base_text);
			write_rev(f, version, &r->node, &r->p1, &r->p2,
				  &r->link, base_node, text->buf, text->len,
				  slot->text.buf, slot->text.len);
		}
		hg_oidcpy(&slot->node, &r->node);
		last = (last + 1) % RECENT_REVS;
		if (nr < RECENT_REVS)
			nr++;
	}
	if (to > from)
		write_end(f);
	for (i = 0; i < RECENT_REVS; i++)
		strbuf_release(&recent[i].text);
	strbuf_release(&delta);
	strbuf_release(&git_delta);
	strbuf_release(&base_text);
}

/*
 * Writing the file revisions (reading every text, finding parents,
 * diffing) is most of a big push's work. From 4096 of them
 * (CINNABAR_TEST_PUSH_SPLIT for tests), a forked copy of the helper
 * writes the groups of the second half of the paths to a temporary file
 * while this one writes the first half, then the copy's part is appended:
 * groups of different paths do not depend on each other. The copy only
 * reads objects and leaves with _exit (no exit handlers, default signal
 * handlers).
 */
static FILE *files_child_out;

static NORETURN void die_writing_files(const char *err, va_list params)
{
	fputs("fatal: ", stderr);
	vfprintf(stderr, err, params);
	fputc('\n', stderr);
	_exit(128);
}

static NORETURN void write_files_child(int version, struct push_state *st,
				       size_t from)
{
	int signals[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(signals); i++)
		signal(signals[i], SIG_DFL);
	set_die_routine(die_writing_files);
	write_progress = NULL;
	write_file_groups(files_child_out, version, st, from, st->files_nr);
	_exit(fflush(files_child_out) || ferror(files_child_out) ? 1 : 0);
}

/* Where the second half of the paths starts, or files_nr to not split. */
static size_t files_split_point(struct push_state *st)
{
	const char *env = getenv("CINNABAR_TEST_PUSH_SPLIT");
	size_t min = env ? strtoul(env, NULL, 10) : 4096, mid;

	if (st->files_nr < 2 || st->files_nr < min)
		return st->files_nr;
	mid = st->files_nr / 2;
	while (mid < st->files_nr &&
	       !strcmp(st->files[mid - 1].path, st->files[mid].path))
		mid++;
	return mid;
}

static void append_child_part(FILE *f, pid_t child)
{
	char buf[65536];
	size_t n;
	int status;

	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die_errno("cannot wait for the process writing files");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("the process writing file revisions failed");
	rewind(files_child_out);
	while ((n = fread(buf, 1, sizeof(buf), files_child_out)) > 0)
		if (fwrite(buf, 1, n, f) != n)
			die_errno("cannot write the changegroup");
	if (ferror(files_child_out))
		die_errno("cannot read the file revisions written");
	fclose(files_child_out);
	files_child_out = NULL;
}

static void write_files(FILE *f, int version, struct push_state *st)
{
	size_t mid, i;
	pid_t child = 0;

	QSORT(st->files, st->files_nr, file_rev_cmp);
	/* New revisions by id, now at their sorted positions. */
	for (i = 0; i < st->files_nr; i++)
		if (st->files[i].is_new)
			set_pos(st->new_files, &st->files[i].node, i);
	mid = files_split_point(st);
	if (mid < st->files_nr) {
		fflush(f);
		fflush(stderr);
		files_child_out = tmpfile();
		if (files_child_out) {
			child = fork();
			if (!child)
				write_files_child(version, st, mid);
			if (child < 0) {
				child = 0;
				fclose(files_child_out);
			}
		}
	}
	write_file_groups(f, version, st, 0, child ? mid : st->files_nr);
	if (child)
		append_child_part(f, child);
	write_end(f);
	file_reset_cache();
}

static void write_changegroup(FILE *f, int version, struct push_state *st)
{
	struct strbuf base = STRBUF_INIT;
	struct hg_oid base_node;
	size_t i;

	hg_oidcpy(&base_node, &hg_null_oid);
	if (version == 1 && st->nr && !hg_oid_is_null(&st->cs[0].p1))
		changeset_text(&st->cs[0].p1, &base);
	for (i = 0; i < st->nr; i++) {
		struct cs_rev *cs = &st->cs[i];
		write_rev(f, version, &cs->node, &cs->p1, &cs->p2, &cs->node,
			  &base_node, base.buf, base.len, cs->text.buf,
			  cs->text.len);
		strbuf_reset(&base);
		strbuf_addbuf(&base, &cs->text);
		hg_oidcpy(&base_node, &cs->node);
	}
	write_end(f);

	for (i = 0; i < st->nr; i++) {
		struct cs_rev *cs = &st->cs[i];
		if (cs->send_manifest)
			write_rev_delta(f, version, &cs->manifest, &cs->mp1,
					&cs->mp2, &cs->node, &cs->manifest_base,
					&cs->manifest_delta);
	}
	write_end(f);
	write_files(f, version, st);
	strbuf_release(&base);
}

/* Import the changegroup back, and check it maps to the same commits. */
static void import_back(const char *path, int version, struct push_state *st)
{
	struct stream raw;
	struct bundle b;
	struct import_stats stats;
	size_t i;

	stream_init_file(&raw, path);
	bundle_open(&b, &raw, version);
	import_bundle(&b, &stats);
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

void create_changegroup(int version, const char *path,
			const struct object_id *commits, size_t nr, FILE *out)
{
	struct push_state st = { 0 };
	FILE *f;
	size_t i;

	string_list_init_dup(&st.paths);
	CALLOC_ARRAY(st.cs, nr ? nr : 1);
	st.by_commit = kh_init_oid_pos();
	st.by_node = kh_init_hg_pos();
	st.by_manifest = kh_init_hg_pos();
	st.new_files = kh_init_hg_pos();
	st.sent_manifests = kh_init_hg_pos();
	hg_oidcpy(&st.last_sent_manifest, &hg_null_oid);
	current = &st;
	new_manifest_text = batch_manifest_text;
	for (i = 0; i < nr; i++) {
		struct cs_rev *cs = &st.cs[i];
		struct raw_commit c;
		size_t k;

		oidcpy(&cs->commit, &commits[i]);
		strbuf_init(&cs->text, 0);
		strbuf_init(&cs->manifest_text, 0);
		strbuf_init(&cs->manifest_delta, 0);
		read_commit_info(&commits[i], &c);
		hg_oidcpy(&cs->p1, &hg_null_oid);
		hg_oidcpy(&cs->p2, &hg_null_oid);
		for (k = 0; k < c.parents.nr; k++)
			if (hg_of_commit(&st, i, &c.parents.oid[k],
					 k ? &cs->p2 : &cs->p1))
				die("commit %s has a parent (%s) that is neither "
				    "pushed nor known to come from Mercurial",
				    oid_to_hex(&commits[i]),
				    oid_to_hex(&c.parents.oid[k]));
		st.nr = i + 1;
		if (!git2hg(&commits[i], &cs->node))
			add_stored(&st, cs);
		else
			convert_commit(&st, cs, &c);
		index_commit(&st, i);
		make_manifest_delta(&st, cs, version);
		spill_manifest_text(cs);
		raw_commit_release(&c);
	}
	f = fopen(path, "wb");
	if (!f)
		die_errno("cannot create '%s'", path);
	revisions_written = 0;
	if (show_progress)
		write_progress = start_delayed_progress(
			_("Writing revisions"), 0);
	write_changegroup(f, version, &st);
	stop_progress(&write_progress);
	if (fclose(f))
		die_errno("cannot write '%s'", path);
	for (i = 0; i < nr; i++)
		if (st.cs[i].new_manifest || !hg2git(&st.cs[i].node))
			break;
	/* Only converted commits need checking and recording. */
	if (i < nr)
		import_back(path, version, &st);
	current = NULL;
	new_manifest_text = NULL;
	if (manifest_spill) {
		fclose(manifest_spill);
		manifest_spill = NULL;
	}
	for (i = 0; i < MMAP_CACHE; i++) {
		mmap_free(mmap_cache[i]);
		mmap_cache[i] = NULL;
	}

	fprintf(out, "ok %"PRIuMAX"\n", (uintmax_t)nr);
	for (i = 0; i < nr; i++)
		fprintf(out, "%s %s\n", oid_to_hex(&st.cs[i].commit),
			hg_oid_to_hex(&st.cs[i].node));
	fflush(out);
	for (i = 0; i < nr; i++) {
		strbuf_release(&st.cs[i].text);
		strbuf_release(&st.cs[i].manifest_text);
		strbuf_release(&st.cs[i].manifest_delta);
	}
	string_list_clear(&set_branches, 1);
	for (i = 0; i < st.files_nr; i++)
		free(st.files[i].meta);
	free(st.files);
	free(st.cs);
	kh_destroy_oid_pos(st.by_commit);
	kh_destroy_hg_pos(st.by_node);
	kh_destroy_hg_pos(st.by_manifest);
	kh_destroy_hg_pos(st.new_files);
	kh_destroy_hg_pos(st.sent_manifests);
	string_list_clear(&st.paths, 0);
}
