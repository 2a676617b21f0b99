/* Git pack deltas reused as Mercurial deltas: see pack-delta-reuse.h. */
#include "libgit.h"
#include "packfile.h"
#include "hg-delta.h"
#include "pack-delta-reuse.h"

/* Inflate the `size` bytes of the entry data at `pos` of pack `p`. */
static int inflate_entry(struct packed_git *p, struct pack_window **w,
			 off_t pos, unsigned long size, struct strbuf *out)
{
	git_zstream z;
	int status = Z_OK;

	strbuf_reset(out);
	/* One byte more than expected: a longer payload fills it. */
	strbuf_grow(out, size + 1);
	memset(&z, 0, sizeof(z));
	git_inflate_init(&z);
	z.next_out = (unsigned char *)out->buf;
	z.avail_out = size + 1;
	while (status == Z_OK || status == Z_BUF_ERROR) {
		unsigned long avail;
		unsigned char *in = use_pack(p, w, pos, &avail);
		z.next_in = in;
		z.avail_in = avail;
		status = git_inflate(&z, Z_FINISH);
		pos += z.next_in - in;
		if (status == Z_BUF_ERROR && (!avail || !z.avail_out))
			break;
	}
	git_inflate_end(&z);
	if (status != Z_STREAM_END || z.total_out != size)
		return -1;
	strbuf_setlen(out, size);
	return 0;
}

int pack_entry_of(const struct object_id *oid, struct packed_git **pack,
		  off_t *offset)
{
	struct object_info oi = OBJECT_INFO_INIT;

	/* Packs are looked in before loose objects: whence says which. */
	if (cinnabar_object_info_extended(oid, &oi, OBJECT_INFO_QUICK |
					  OBJECT_INFO_SKIP_FETCH_OBJECT) ||
	    oi.whence != OI_PACKED)
		return -1;
	*pack = oi.u.packed.pack;
	*offset = oi.u.packed.offset;
	return 0;
}

int pack_delta_at(struct packed_git *pack, off_t offset, struct strbuf *out,
		  off_t *base_offset)
{
	struct pack_window *w = NULL;
	off_t pos = offset;
	unsigned long size;
	int type, ret = -1;

	type = cinnabar_unpack_object_header(pack, &w, &pos, &size);
	if (type == OBJ_OFS_DELTA || type == OBJ_REF_DELTA) {
		*base_offset = get_delta_base(pack, &w, &pos, type, offset);
		if (*base_offset)
			ret = inflate_entry(pack, &w, pos, size, out);
	}
	unuse_pack(&w);
	return ret;
}

/* A varint of the delta's header; -1 past its end or when too long. */
static int read_size(const unsigned char **p, const unsigned char *end,
		     size_t *out)
{
	int shift = 0;
	*out = 0;
	for (;;) {
		if (*p == end || shift > 56)
			return -1;
		*out |= (size_t)(**p & 0x7f) << shift;
		shift += 7;
		if (!(*(*p)++ & 0x80))
			return 0;
	}
}

/* A copy instruction's offset and size; -1 past the delta's end. */
static int read_copy(unsigned char op, const unsigned char **p,
		     const unsigned char *end, size_t *off, size_t *size)
{
	int i;
	*off = *size = 0;
	for (i = 0; i < 7; i++) {
		if (!(op & (1 << i)))
			continue;
		if (*p == end)
			return -1;
		if (i < 4)
			*off |= (size_t)*(*p)++ << (8 * i);
		else
			*size |= (size_t)*(*p)++ << (8 * (i - 4));
	}
	if (!*size)
		*size = 0x10000;
	return 0;
}

int git_delta_to_hg(const char *base, size_t base_len, const char *delta,
		    size_t len, struct strbuf *text, struct strbuf *hg_delta)
{
	const unsigned char *p = (const unsigned char *)delta, *end = p + len;
	size_t src, dst;
	/* base[0, done) is accounted for; text from `loose` is not yet. */
	size_t done = 0, loose = 0;

	strbuf_reset(text);
	strbuf_reset(hg_delta);
	if (read_size(&p, end, &src) || read_size(&p, end, &dst) ||
	    src != base_len)
		return -1;
	strbuf_grow(text, dst);
	while (p < end) {
		unsigned char op = *p++;
		size_t off, size, before = text->len;
		if (!op)
			return -1;
		if (!(op & 0x80)) {
			if ((size_t)(end - p) < op)
				return -1;
			strbuf_add(text, p, op);
			p += op;
			continue;
		}
		if (read_copy(op, &p, end, &off, &size) ||
		    off > base_len || size > base_len - off)
			return -1;
		strbuf_add(text, base + off, size);
		/* A copy going back stays in the inserted bytes. */
		if (off < done)
			continue;
		if (off > done || before > loose)
			hg_delta_add_hunk(hg_delta, done, off, text->buf + loose,
					  before - loose);
		done = off + size;
		loose = text->len;
	}
	if (text->len != dst)
		return -1;
	if (done < base_len || text->len > loose)
		hg_delta_add_hunk(hg_delta, done, base_len, text->buf + loose,
				  text->len - loose);
	return 0;
}
