/*
 * Reading raw git tree objects, one at a time or two side by side.
 *
 * A tree is a sequence of entries "<octal mode> <name>\0<20-byte id>",
 * sorted in git's order: names byte by byte, a directory's name as if it
 * ended with '/'. So `a.b` and `a-c` come before the directory `a`, and
 * `a0` after it, while Mercurial sorts the whole paths `a.b`, `a/x`,
 * `a0`. Walking two trees must pair their entries in git's order, never
 * with a plain comparison of names.
 *
 * git's tree-walk canonicalizes modes, losing the permission bits that
 * manifest trees keep on their gitlinks (160644, 160755); this reader
 * keeps the mode as written.
 */
#ifndef CINNABAR_TREE_ITER_H
#define CINNABAR_TREE_ITER_H

struct tree_iter {
	const char *cur, *end;
	/* the current entry */
	unsigned mode;
	const char *path;
	size_t pathlen;
	struct object_id oid;
};

void tree_iter_init(struct tree_iter *it, const void *buf, size_t len);
/* Return 1 with the next entry, 0 at the end; dies on a corrupt tree. */
int tree_iter_next(struct tree_iter *it);

/* The order of two entries in a tree: <0, 0 (same name and kind), >0. */
int tree_entry_cmp(const struct tree_iter *a, const struct tree_iter *b);

/*
 * Move `it`, whose current entry is valid when `*has` is set, forward to
 * the entry sorting as `e`; return whether it has one (then current).
 */
int tree_iter_seek(struct tree_iter *it, int *has, const struct tree_iter *e);

/*
 * Two trees walked side by side, in git's order. Each step gives the
 * entries of one name from each tree that has it (NULL for the other):
 * a file and a directory of the same name come in two steps, as git
 * sorts them apart.
 *
 *	struct tree_pair p;
 *	const struct tree_iter *old, *new;
 *	tree_pair_open(&p, old_tree, new_tree);	(either may be NULL)
 *	while (tree_pair_next(&p, &old, &new))
 *		...;
 *	tree_pair_release(&p);
 */
struct tree_pair {
	void *buf_a, *buf_b;
	struct tree_iter a, b;
	int has_a, has_b;
	int cmp;	/* of the last step: which sides to move on */
	int started;
};

/* Read the trees `a` and `b` (NULL: an empty tree) to walk them. */
void tree_pair_open(struct tree_pair *p, const struct object_id *a,
		    const struct object_id *b);
int tree_pair_next(struct tree_pair *p, const struct tree_iter **a,
		   const struct tree_iter **b);
void tree_pair_release(struct tree_pair *p);

#endif
