/* Git pack deltas reused as Mercurial deltas: see pack-delta-reuse.h. */
#include "libgit.h"
#include "packfile.h"
#include "hg-delta.h"
#include "git-delta.h"
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

int git_delta_to_hg(const char *base, size_t base_len, const char *delta,
		    size_t len, struct strbuf *text, struct strbuf *hg_delta)
{
	const unsigned char *p = (const unsigned char *)delta, *end = p + len;
	size_t src, dst;
	/* base[0, done) is accounted for; text from `loose` is not yet. */
	size_t done = 0, loose = 0;

	strbuf_reset(text);
	strbuf_reset(hg_delta);
	if (git_delta_read_size(&p, end, &src) ||
	    git_delta_read_size(&p, end, &dst) ||
	    src != base_len)
		return -1;
	strbuf_grow(text, dst);
	while (p < end) {
		struct git_delta_op op;
		size_t before = text->len;
		if (git_delta_read_op(&p, end, &op))
			return -1;
		if (!op.copy) {
			strbuf_add(text, op.data, op.size);
			continue;
		}
		if (op.off > base_len || op.size > base_len - op.off)
			return -1;
		strbuf_add(text, base + op.off, op.size);
		/* A copy going back stays in the inserted bytes. */
		if (op.off < done)
			continue;
		if (op.off > done || before > loose)
			hg_delta_add_hunk(hg_delta, done, op.off, text->buf + loose,
					  before - loose);
		done = op.off + op.size;
		loose = text->len;
	}
	if (text->len != dst)
		return -1;
	if (done < base_len || text->len > loose)
		hg_delta_add_hunk(hg_delta, done, base_len, text->buf + loose,
				  text->len - loose);
	return 0;
}
