/*
 * Changegroups: the revisions a Mercurial server sends.
 *
 * A changegroup is a sequence of chunks. A chunk is a 4-byte big-endian
 * length, counting itself, followed by its payload; a length of 0 is an
 * empty chunk that ends a group. The stream holds, in order:
 *   - the changelog group: revision chunks, then an empty chunk;
 *   - the manifest group: revision chunks, then an empty chunk;
 *   - (version 03 only, tree manifests: not supported)
 *   - for each file: a chunk whose payload is the file's path, then the
 *     file's revision chunks, then an empty chunk;
 *   - an empty chunk where the next file path would be.
 * A revision chunk's payload is a delta header, then a delta (hg-delta.h)
 * giving the revision's full text from its delta base's text:
 *   01: node, p1, p2, linked changeset (4 x 20 bytes); the delta base is
 *       the previous revision of the group, or p1 for the first one;
 *   02: node, p1, p2, delta base, linked changeset (5 x 20 bytes);
 *   03: as 02, then 2 bytes of big-endian flags.
 * A null delta base means the delta applies to the empty text.
 *
 * The reader (read_*) is for what servers and bundles send, the writer
 * (write_*) for what a push sends: both in this one file.
 */
#ifndef CINNABAR_CHANGEGROUP_H
#define CINNABAR_CHANGEGROUP_H

#include "hg-id.h"

struct stream;

struct rev_chunk {
	struct strbuf raw;		/* the chunk's payload */
	struct hg_oid node, p1, p2, delta_base, changeset;
	unsigned flags;
	const char *delta;		/* points into raw */
	size_t delta_len;
	/*
	 * Bytes of the chunk still in the stream (read_rev_chunk_head),
	 * after the delta's first hunk header: 0 when read whole.
	 */
	uint64_t unread;
};

#define REV_CHUNK_INIT { .raw = STRBUF_INIT }

/* Parse a version string ("01", "02", "03"); return 0 if unsupported. */
int changegroup_version(const char *name);

/* Read one chunk's payload into out; return 0 for an empty chunk. */
int read_cg_chunk(struct stream *s, struct strbuf *out);

/*
 * Read the next revision chunk of a group. `prev` is the previous revision
 * of the same group, or NULL for the first. Return 0 at the end of the
 * group. Dies on malformed data.
 */
int read_rev_chunk(struct stream *s, int version, const struct hg_oid *prev,
		   struct rev_chunk *chunk);

/*
 * The same, except that of a chunk whose payload is over `max` bytes
 * only the header and its delta's first hunk header (12 bytes: the
 * delta) are read, chunk->unread counting the rest; then
 * rev_chunk_read_rest() reads it, or the caller reads it from `s`.
 */
int read_rev_chunk_head(struct stream *s, int version,
			const struct hg_oid *prev, struct rev_chunk *chunk,
			size_t max);
void rev_chunk_read_rest(struct stream *s, struct rev_chunk *chunk);

/* Parse the payload in chunk->raw (what read_rev_chunk() does after reading). */
void parse_rev_chunk(int version, const struct hg_oid *prev,
		     struct rev_chunk *chunk);

void rev_chunk_release(struct rev_chunk *chunk);

/*
 * Writing a changegroup to `f`; each dies on a write error.
 * write_rev_chunk writes the header of `version` from chunk's ids (the
 * delta base only where the version names it: the caller of version 01
 * must give deltas against the base it implies; flags 0) and the delta at
 * chunk->delta.
 */
void write_rev_chunk(FILE *f, int version, const struct rev_chunk *chunk);
/* A file group's first chunk: its path. */
void write_cg_path(FILE *f, const char *path);
/* The empty chunk that ends a group. */
void write_cg_end(FILE *f);

#endif
