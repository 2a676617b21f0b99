/* Reading raw git tree objects: see tree-iter.h. */
#include "libgit.h"
#include "tree.h"
#include "store.h"
#include "tree-iter.h"

void tree_iter_init(struct tree_iter *it, const void *buf, size_t len)
{
	it->cur = buf;
	it->end = it->cur + len;
}

int tree_iter_next(struct tree_iter *it)
{
	const char *p = it->cur, *nul;
	unsigned mode = 0;

	if (p == it->end)
		return 0;
	while (p < it->end && *p >= '0' && *p <= '7')
		mode = (mode << 3) | (*p++ - '0');
	if (p == it->cur || p >= it->end || *p != ' ')
		die("corrupt tree object");
	p++;
	nul = memchr(p, '\0', it->end - p);
	if (!nul || it->end - nul - 1 < GIT_SHA1_RAWSZ)
		die("corrupt tree object");
	it->mode = mode;
	it->path = p;
	it->pathlen = nul - p;
	oidread(&it->oid, (const unsigned char *)nul + 1, the_hash_algo);
	it->cur = nul + 1 + GIT_SHA1_RAWSZ;
	return 1;
}

int tree_entry_cmp(const struct tree_iter *a, const struct tree_iter *b)
{
	/* git's own comparison; a gitlink is not a directory. */
	return base_name_compare(a->path, a->pathlen, a->mode,
				 b->path, b->pathlen, b->mode);
}

int tree_iter_seek(struct tree_iter *it, int *has, const struct tree_iter *e)
{
	for (; *has; *has = tree_iter_next(it)) {
		int cmp = tree_entry_cmp(it, e);
		if (cmp >= 0)
			return !cmp;
	}
	return 0;
}

static int open_side(struct tree_iter *it, void **buf,
		     const struct object_id *oid)
{
	unsigned long size;

	*buf = NULL;
	if (!oid)
		return 0;
	*buf = store_read_object_typed(oid, OBJ_TREE, &size);
	tree_iter_init(it, *buf, size);
	return tree_iter_next(it);
}

void tree_pair_open(struct tree_pair *p, const struct object_id *a,
		    const struct object_id *b)
{
	memset(p, 0, sizeof(*p));
	p->has_a = open_side(&p->a, &p->buf_a, a);
	p->has_b = open_side(&p->b, &p->buf_b, b);
}

int tree_pair_next(struct tree_pair *p, const struct tree_iter **a,
		   const struct tree_iter **b)
{
	if (p->started) {
		if (p->cmp <= 0)
			p->has_a = tree_iter_next(&p->a);
		if (p->cmp >= 0)
			p->has_b = tree_iter_next(&p->b);
	}
	p->started = 1;
	if (!p->has_a && !p->has_b)
		return 0;
	p->cmp = !p->has_a ? 1 : !p->has_b ? -1 : tree_entry_cmp(&p->a, &p->b);
	*a = p->cmp <= 0 ? &p->a : NULL;
	*b = p->cmp >= 0 ? &p->b : NULL;
	return 1;
}

void tree_pair_release(struct tree_pair *p)
{
	FREE_AND_NULL(p->buf_a);
	FREE_AND_NULL(p->buf_b);
}
