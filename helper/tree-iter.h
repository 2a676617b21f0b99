/*
 * Reading raw git tree objects.
 *
 * A tree is a sequence of entries "<octal mode> <name>\0<20-byte id>".
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

#endif
