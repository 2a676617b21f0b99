/* Changegroups: see changegroup.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "input-stream.h"
#include "changegroup.h"

int changegroup_version(const char *name)
{
	if (!strcmp(name, "01"))
		return 1;
	if (!strcmp(name, "02"))
		return 2;
	if (!strcmp(name, "03"))
		return 3;
	return 0;
}

/*
 * Read a chunk's length, and its payload into `out`, or only its first
 * `keep` bytes when it is over `max`: the length of the rest into
 * `*unread`. Return 0 for an empty chunk.
 */
static int read_cg_chunk_part(struct stream *s, struct strbuf *out,
			      size_t max, size_t keep, uint64_t *unread)
{
	unsigned char hdr[4];
	uint32_t len;

	strbuf_reset(out);
	*unread = 0;
	stream_read_exact(s, hdr, 4);
	len = get_be32(hdr);
	if (len == 0)
		return 0;
	/* Signed in Mercurial: from 2^31 on, negative. Only the end chunk
	 * is empty. */
	if (len <= 4 || len > INT32_MAX)
		die("invalid changegroup chunk length %"PRIu32
		    " (corrupt input)", len);
	len -= 4;
	if (len > max && len > keep) {
		*unread = len - keep;
		len = keep;
	}
	strbuf_grow(out, len);
	stream_read_exact(s, out->buf, len);
	strbuf_setlen(out, len);
	return 1;
}

int read_cg_chunk(struct stream *s, struct strbuf *out)
{
	uint64_t unread;
	return read_cg_chunk_part(s, out, SIZE_MAX, 0, &unread);
}

static size_t header_size(int version)
{
	switch (version) {
	case 1: return 80;
	case 2: return 100;
	case 3: return 102;
	}
	BUG("unknown changegroup version %d", version);
}

int read_rev_chunk(struct stream *s, int version, const struct hg_oid *prev,
		   struct rev_chunk *chunk)
{
	chunk->unread = 0;
	if (!read_cg_chunk(s, &chunk->raw))
		return 0;
	parse_rev_chunk(version, prev, chunk);
	return 1;
}

int read_rev_chunk_head(struct stream *s, int version,
			const struct hg_oid *prev, struct rev_chunk *chunk,
			size_t max)
{
	size_t head = header_size(version) + 12;

	if (!read_cg_chunk_part(s, &chunk->raw, max, head, &chunk->unread))
		return 0;
	parse_rev_chunk(version, prev, chunk);
	return 1;
}

void rev_chunk_read_rest(struct stream *s, struct rev_chunk *chunk)
{
	size_t at = chunk->delta - chunk->raw.buf, len = chunk->raw.len;

	if (!chunk->unread)
		return;
	if (chunk->unread > SIZE_MAX - len - 1)
		die("a changegroup chunk too large for this machine");
	strbuf_grow(&chunk->raw, chunk->unread);
	stream_read_exact(s, chunk->raw.buf + len, chunk->unread);
	strbuf_setlen(&chunk->raw, len + chunk->unread);
	chunk->delta = chunk->raw.buf + at;
	chunk->delta_len = chunk->raw.len - at;
	chunk->unread = 0;
}

void parse_rev_chunk(int version, const struct hg_oid *prev,
		     struct rev_chunk *chunk)
{
	const unsigned char *p;
	size_t hdr = header_size(version);

	if (chunk->raw.len < hdr)
		die("changegroup chunk too short (corrupt input)");
	p = (const unsigned char *)chunk->raw.buf;
	memcpy(chunk->node.hash, p, HG_RAWSZ);
	memcpy(chunk->p1.hash, p + 20, HG_RAWSZ);
	memcpy(chunk->p2.hash, p + 40, HG_RAWSZ);
	if (version == 1) {
		hg_oidcpy(&chunk->delta_base, prev ? prev : &chunk->p1);
		memcpy(chunk->changeset.hash, p + 60, HG_RAWSZ);
		chunk->flags = 0;
	} else {
		memcpy(chunk->delta_base.hash, p + 60, HG_RAWSZ);
		memcpy(chunk->changeset.hash, p + 80, HG_RAWSZ);
		chunk->flags = version == 3 ? get_be16(p + 100) : 0;
	}
	if (chunk->flags)
		die("revision %s has flags %#x this helper does not support",
		    hg_oid_to_hex(&chunk->node), chunk->flags);
	chunk->delta = chunk->raw.buf + hdr;
	chunk->delta_len = chunk->raw.len - hdr;
}

void rev_chunk_release(struct rev_chunk *chunk)
{
	strbuf_release(&chunk->raw);
}

static void write_or_die(FILE *f, const void *buf, size_t len)
{
	if (fwrite(buf, 1, len, f) != len)
		die_errno("cannot write the changegroup");
}

static void write_cg_length(FILE *f, size_t payload)
{
	unsigned char hdr[4];
	if (payload > INT32_MAX - 4)
		die("a changegroup chunk of %"PRIuMAX" bytes is too big",
		    (uintmax_t)payload);
	put_be32(hdr, payload + 4);
	write_or_die(f, hdr, 4);
}

void write_rev_chunk(FILE *f, int version, const struct rev_chunk *chunk)
{
	unsigned char hdr[102];
	size_t len = header_size(version);

	memcpy(hdr, chunk->node.hash, HG_RAWSZ);
	memcpy(hdr + 20, chunk->p1.hash, HG_RAWSZ);
	memcpy(hdr + 40, chunk->p2.hash, HG_RAWSZ);
	if (version == 1) {
		memcpy(hdr + 60, chunk->changeset.hash, HG_RAWSZ);
	} else {
		memcpy(hdr + 60, chunk->delta_base.hash, HG_RAWSZ);
		memcpy(hdr + 80, chunk->changeset.hash, HG_RAWSZ);
		if (version == 3)
			hdr[100] = hdr[101] = 0;	/* no flags */
	}
	write_cg_length(f, len + chunk->delta_len);
	write_or_die(f, hdr, len);
	write_or_die(f, chunk->delta, chunk->delta_len);
}

void write_cg_path(FILE *f, const char *path)
{
	size_t len = strlen(path);
	write_cg_length(f, len);
	write_or_die(f, path, len);
}

void write_cg_end(FILE *f)
{
	write_or_die(f, "\0\0\0\0", 4);
}
