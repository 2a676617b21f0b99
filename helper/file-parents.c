/* The parents of a stored file revision: see file-parents.h. */
#include "libgit.h"
#include "oidmap.h"
#include "manifest.h"
#include "metadata.h"
#include "raw-commit.h"
#include "store.h"
#include "tree-iter.h"
#include "file-parents.h"

int file_parents_among(const struct hg_oid *node, const struct strbuf *text,
		       const struct hg_oid *a, const struct hg_oid *b,
		       struct hg_oid *p1, struct hg_oid *p2)
{
	/* Both, one side (the other an ancestor), a copy (no parents). */
	const struct hg_oid *tries[][2] = {
		{ a, b }, { a, &hg_null_oid }, { b, &hg_null_oid },
		{ a, a }, { &hg_null_oid, &hg_null_oid },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		struct hg_oid h;
		hg_hash(tries[i][0], tries[i][1], text->buf, text->len, &h);
		if (hg_oideq(&h, node)) {
			hg_oidcpy(p1, tries[i][0]);
			hg_oidcpy(p2, tries[i][1]);
			return 0;
		}
	}
	return -1;
}

/*
 * The trees of manifests read by the searches below, kept until
 * file_parents_forget() or until they exceed TREE_CACHE_BYTES (then all
 * dropped): a push checking many paths probes the same manifests, and
 * reads each of their directories once rather than once per path.
 */
#define TREE_CACHE_BYTES (8 << 20)

struct cached_tree {
	struct oidmap_entry ent;
	unsigned long size;
	char buf[FLEX_ARRAY];
};

static struct oidmap trees = OIDMAP_INIT;
static size_t trees_bytes;

void file_parents_forget(void)
{
	cinnabar_oidmap_clear(&trees);
	trees_bytes = 0;
}

static const struct cached_tree *read_tree_kept(const struct object_id *oid)
{
	struct cached_tree *t = oidmap_get(&trees, oid);
	unsigned long size;
	void *buf;

	if (t)
		return t;
	buf = store_read_object_typed(oid, OBJ_TREE, &size);
	if (trees_bytes + size > TREE_CACHE_BYTES)
		file_parents_forget();
	FLEX_ALLOC_MEM(t, buf, buf, size);
	free(buf);
	t->size = size;
	oidcpy(&t->ent.oid, oid);
	oidmap_put(&trees, t);
	trees_bytes += size + sizeof(*t);
	return t;
}

/*
 * The revision of `path` in manifest tree `tree` (each component under
 * "_" + its name), or the null id.
 */
static void path_in_tree(const struct object_id *tree, const char *path,
			 struct hg_oid *out)
{
	struct object_id cur;
	const char *end = path + strlen(path);

	hg_oidcpy(out, &hg_null_oid);
	oidcpy(&cur, tree);
	for (;;) {
		const char *slash = memchr(path, '/', end - path);
		size_t len = (slash ? slash : end) - path;
		struct tree_iter it;
		const struct cached_tree *t = read_tree_kept(&cur);
		int found = 0;

		tree_iter_init(&it, t->buf, t->size);
		while (tree_iter_next(&it)) {
			if (it.pathlen != len + 1 || it.path[0] != '_' ||
			    memcmp(it.path + 1, path, len) ||
			    !S_ISDIR(it.mode) != !slash)
				continue;
			oidcpy(&cur, &it.oid);
			found = 1;
			break;
		}
		if (!found)
			return;
		if (!slash) {
			git_oid_to_hg(out, &cur);
			return;
		}
		path = slash + 1;
	}
}

/* A manifest commit's tree and parents (at most two). */
struct mcommit {
	struct object_id tree, parents[2];
	size_t nr;
};

static int read_mcommit(const struct object_id *oid, struct mcommit *m)
{
	struct raw_commit c;
	size_t i;

	if (raw_commit_read(&c, oid) || c.parents.nr > 2)
		return -1;
	oidcpy(&m->tree, &c.tree);
	m->nr = c.parents.nr;
	for (i = 0; i < m->nr; i++)
		oidcpy(&m->parents[i], &c.parents.oid[i]);
	raw_commit_release(&c);
	return 0;
}

/*
 * The first-parent chain of manifest commits from a start, read as far
 * as a search needs it. Chains are kept between searches (a push checks
 * many paths from the same parent manifest) and stay valid: git objects
 * do not change.
 */
struct chain {
	struct object_id start;
	struct mcommit *m;
	size_t nr, alloc;
	int ended;	/* m[nr - 1] has no (readable) first parent */
};

#define CHAINS 4
static struct chain chains[CHAINS];
static size_t next_chain;

/* The chain from manifest commit `start`, or NULL when it is unreadable. */
static struct chain *chain_from(const struct object_id *start)
{
	struct chain *c;
	size_t i;

	for (i = 0; i < CHAINS; i++)
		if (chains[i].nr && oideq(&chains[i].start, start))
			return &chains[i];
	c = &chains[next_chain];
	next_chain = (next_chain + 1) % CHAINS;
	c->nr = c->ended = 0;
	ALLOC_GROW(c->m, 1, c->alloc);
	if (read_mcommit(start, &c->m[0]))
		return NULL;
	oidcpy(&c->start, start);
	c->nr = 1;
	return c;
}

/* Manifest `i` of chain `c` (0: its start), read now if needed; NULL past
 * its end. */
static const struct mcommit *chain_at(struct chain *c, size_t i)
{
	while (c->nr <= i && !c->ended) {
		struct mcommit next;
		if (!c->m[c->nr - 1].nr ||
		    read_mcommit(&c->m[c->nr - 1].parents[0], &next)) {
			c->ended = 1;
			break;
		}
		ALLOC_GROW(c->m, c->nr + 1, c->alloc);
		c->m[c->nr++] = next;
	}
	return i < c->nr ? &c->m[i] : NULL;
}

static int has_node(const struct mcommit *m, const char *path,
		    const struct hg_oid *node)
{
	struct hg_oid here;
	path_in_tree(&m->tree, path, &here);
	return hg_oideq(&here, node);
}

/*
 * The manifest of chain `c` (its start has `node` at `path`) followed by
 * the first one found without it along first parents: probed 1, 2, 4...
 * manifests back, then bisected, a few tree reads however far (the
 * last manifest of the chain is tried before bisecting up to it). Its
 * index into *found; -1 when it is `max_steps` or more back (0: no limit).
 *
 * Unless `text` is NULL, the revision of `path` in the first manifest
 * probed without `node` is tried as its parent before bisecting: a file
 * changes far less often than the manifests around it, and that is most
 * often the revision `node` was made from. When `text` and it (or no
 * parent) give `node`'s id, the text is checked and its parents found
 * without bisecting: 1 with *p1 and *p2 set, *found left unset.
 */
static int chain_introducer(struct chain *c, const char *path,
			    const struct hg_oid *node, size_t max_steps,
			    size_t *found, const struct strbuf *text,
			    struct hg_oid *p1, struct hg_oid *p2)
{
	size_t lo = 0, hi = 1;	/* lo has `node`; hi is probed */
	const struct mcommit *m;
	struct hg_oid older;

	for (;;) {
		if (max_steps && hi > max_steps)
			hi = max_steps;
		m = chain_at(c, hi);
		if (!m) {
			/* Often there from the first manifest: no bisection. */
			hi = c->nr;
			if (hi - lo > 1 && has_node(&c->m[hi - 1], path, node))
				lo = hi - 1;
			break;
		}
		path_in_tree(&m->tree, path, &older);
		if (!hg_oideq(&older, node)) {
			if (text && !file_parents_among(node, text, &older,
							&hg_null_oid, p1, p2))
				return 1;
			break;
		}
		if (max_steps && hi == max_steps)
			return -1;
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (has_node(chain_at(c, mid), path, node))
			lo = mid;
		else
			hi = mid;
	}
	*found = lo;
	return 0;
}

static int parents_from(const char *path, const struct hg_oid *node,
			const struct strbuf *text,
			const struct object_id *commit, size_t max_steps,
			struct hg_oid *p1, struct hg_oid *p2,
			struct hg_oid where[2])
{
	struct chain *c = chain_from(commit);
	struct mcommit m;
	struct hg_oid in[2];
	size_t at, i;
	int ret;

	if (!c)
		return -1;
	/* The guess gives parents, not the manifests they are in. */
	ret = chain_introducer(c, path, node, max_steps, &at,
			       where ? NULL : text, p1, p2);
	if (ret)
		return ret > 0 ? 0 : -1;
	m = c->m[at];
	/* Brought by the second parent of a merge: from there on. */
	if (m.nr == 2) {
		struct mcommit pm;
		if (!read_mcommit(&m.parents[1], &pm) &&
		    has_node(&pm, path, node))
			return max_steps && at + 1 >= max_steps ? -1 :
				parents_from(path, node, text, &m.parents[1],
					     max_steps ? max_steps - at - 1 : 0,
					     p1, p2, where);
	}
	for (i = 0; i < 2; i++) {
		struct mcommit pm;
		hg_oidcpy(&in[i], &hg_null_oid);
		if (where)
			hg_oidcpy(&where[i], &hg_null_oid);
		if (i >= m.nr || read_mcommit(&m.parents[i], &pm))
			continue;
		if (where && manifest_commit_node(&m.parents[i], &where[i]))
			return -1;
		path_in_tree(&pm.tree, path, &in[i]);
	}
	return file_parents_among(node, text, &in[0], &in[1], p1, p2) ? -2 : 0;
}

int file_parents_and_manifests(const char *path, const struct hg_oid *node,
			       const struct strbuf *text,
			       const struct hg_oid *start, size_t max_steps,
			       struct hg_oid *p1, struct hg_oid *p2,
			       struct hg_oid where[2])
{
	const struct object_id *commit = hg2git(start);
	struct chain *c = commit ? chain_from(commit) : NULL;

	/* The start's manifest commit, read once: parents_from finds it kept. */
	if (!c || !has_node(&c->m[0], path, node))
		return -1;
	return parents_from(path, node, text, commit, max_steps, p1, p2,
			    where);
}
