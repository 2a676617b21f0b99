/* Differences between two manifest trees: see manifest-diff.h. */
#include "cache.h"
#include "store.h"
#include "tree-iter.h"
#include "manifest.h"
#include "manifest-diff.h"

static char flag_of_mode(unsigned mode, const struct object_id *tree)
{
	const char *flag = manifest_flag_of_mode(mode);
	if (!flag)
		die("manifest tree %s is damaged (mode %06o)",
		    oid_to_hex(tree), mode);
	return *flag;
}

static void add(struct manifest_changes *c, struct strbuf *base,
		const struct tree_iter *e, const struct object_id *tree,
		int removed)
{
	struct manifest_change *ch;

	ALLOC_GROW(c->items, c->nr + 1, c->alloc);
	ch = &c->items[c->nr++];
	memset(ch, 0, sizeof(*ch));
	ch->len = base->len + e->pathlen - 1;
	ch->path = xstrfmt("%.*s%.*s", (int)base->len, base->buf,
			   (int)e->pathlen - 1, e->path + 1);
	ch->removed = removed;
	if (!removed) {
		memcpy(ch->node.hash, e->oid.hash, HG_RAWSZ);
		ch->flag = flag_of_mode(e->mode, tree);
	}
}

static void diff(struct manifest_changes *c, const struct object_id *a,
		 const struct object_id *b, struct strbuf *base);

/* Everything under one side's entry: added (new) or removed. */
static void one_side(struct manifest_changes *c, struct strbuf *base,
		     const struct tree_iter *e, const struct object_id *tree,
		     int removed)
{
	size_t len = base->len;

	if (!S_ISDIR(e->mode)) {
		add(c, base, e, tree, removed);
		return;
	}
	strbuf_add(base, e->path + 1, e->pathlen - 1);
	strbuf_addch(base, '/');
	diff(c, removed ? &e->oid : NULL, removed ? NULL : &e->oid, base);
	strbuf_setlen(base, len);
}

static int read_entry(struct tree_iter *it, const struct object_id *tree)
{
	int more = tree_iter_next(it);
	if (more && (!it->pathlen || it->path[0] != '_'))
		die("manifest tree %s is damaged", oid_to_hex(tree));
	return more;
}

/* git orders a directory's name as if it ended with '/'. */
static int entry_cmp(const struct tree_iter *a, const struct tree_iter *b)
{
	size_t len = a->pathlen < b->pathlen ? a->pathlen : b->pathlen;
	int cmp = memcmp(a->path, b->path, len);
	unsigned char ca, cb;

	if (cmp)
		return cmp;
	ca = a->pathlen > len ? a->path[len] : S_ISDIR(a->mode) ? '/' : 0;
	cb = b->pathlen > len ? b->path[len] : S_ISDIR(b->mode) ? '/' : 0;
	return ca < cb ? -1 : ca > cb;
}

static void diff(struct manifest_changes *c, const struct object_id *a,
		 const struct object_id *b, struct strbuf *base)
{
	struct tree_iter ia, ib;
	unsigned long size;
	void *bufa = NULL, *bufb = NULL;
	int has_a = 0, has_b = 0;

	if (a) {
		bufa = store_read_object_typed(a, OBJ_TREE, &size);
		tree_iter_init(&ia, bufa, size);
		has_a = read_entry(&ia, a);
	}
	if (b) {
		bufb = store_read_object_typed(b, OBJ_TREE, &size);
		tree_iter_init(&ib, bufb, size);
		has_b = read_entry(&ib, b);
	}
	while (has_a || has_b) {
		int cmp = !has_a ? 1 : !has_b ? -1 : entry_cmp(&ia, &ib);
		if (cmp < 0) {
			one_side(c, base, &ia, a, 1);
		} else if (cmp > 0) {
			one_side(c, base, &ib, b, 0);
		} else if (ia.mode != ib.mode || !oideq(&ia.oid, &ib.oid)) {
			if (S_ISDIR(ia.mode) && S_ISDIR(ib.mode)) {
				size_t len = base->len;
				strbuf_add(base, ia.path + 1, ia.pathlen - 1);
				strbuf_addch(base, '/');
				diff(c, &ia.oid, &ib.oid, base);
				strbuf_setlen(base, len);
			} else if (!S_ISDIR(ia.mode) && !S_ISDIR(ib.mode)) {
				add(c, base, &ib, b, 0);
			} else {
				one_side(c, base, &ia, a, 1);
				one_side(c, base, &ib, b, 0);
			}
		}
		if (cmp <= 0)
			has_a = read_entry(&ia, a);
		if (cmp >= 0)
			has_b = read_entry(&ib, b);
	}
	free(bufa);
	free(bufb);
}

static int change_cmp(const void *x, const void *y)
{
	const struct manifest_change *a = x, *b = y;
	int cmp = memcmp(a->path, b->path, a->len < b->len ? a->len : b->len);
	if (cmp)
		return cmp;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	/* A removal and an addition of the same path: the addition last. */
	return b->removed - a->removed;
}

void manifest_tree_diff(const struct object_id *old,
			const struct object_id *new,
			struct manifest_changes *out)
{
	struct strbuf base = STRBUF_INIT;
	size_t first = out->nr;

	diff(out, old, new, &base);
	strbuf_release(&base);
	QSORT(out->items + first, out->nr - first, change_cmp);
}

void manifest_changes_clear(struct manifest_changes *c)
{
	size_t i;
	for (i = 0; i < c->nr; i++)
		free(c->items[i].path);
	FREE_AND_NULL(c->items);
	c->nr = c->alloc = 0;
}
