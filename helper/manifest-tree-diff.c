/* Differences between two manifest trees: see manifest-tree-diff.h. */
#include "libgit.h"
#include "store.h"
#include "tree-iter.h"
#include "manifest.h"
#include "manifest-tree-diff.h"

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

/* Every entry of a manifest tree is named "_" + a path component. */
static void check_entry(const struct tree_iter *e, const struct object_id *tree)
{
	if (e && (!e->pathlen || e->path[0] != '_'))
		die("manifest tree %s is damaged", oid_to_hex(tree));
}

static void diff(struct manifest_changes *c, const struct object_id *a,
		 const struct object_id *b, struct strbuf *base)
{
	struct tree_pair p;
	const struct tree_iter *ea, *eb;

	tree_pair_open(&p, a, b);
	while (tree_pair_next(&p, &ea, &eb)) {
		check_entry(ea, a);
		check_entry(eb, b);
		if (!eb) {
			one_side(c, base, ea, a, 1);
		} else if (!ea) {
			one_side(c, base, eb, b, 0);
		} else if (ea->mode == eb->mode && oideq(&ea->oid, &eb->oid)) {
			continue;
		} else if (S_ISDIR(ea->mode)) {
			/* Same name, same kind: both directories. */
			size_t len = base->len;
			strbuf_add(base, ea->path + 1, ea->pathlen - 1);
			strbuf_addch(base, '/');
			diff(c, &ea->oid, &eb->oid, base);
			strbuf_setlen(base, len);
		} else {
			add(c, base, eb, b, 0);
		}
	}
	tree_pair_release(&p);
}

static int change_cmp(const void *x, const void *y)
{
	const struct manifest_change *a = x, *b = y;
	int cmp = manifest_path_cmp(a->path, a->len, b->path, b->len);
	if (cmp)
		return cmp;
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
