/* Reading raw git tree objects: see tree-iter.h. */
#include "cache.h"
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
	oidread(&it->oid, (const unsigned char *)nul + 1);
	it->cur = nul + 1 + GIT_SHA1_RAWSZ;
	return 1;
}
