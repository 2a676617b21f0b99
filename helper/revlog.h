/*
 * Revlogs: Mercurial's storage files, as a stream clone sends them
 * (`hg help internals.revlogs`).
 *
 * A revlog is an index (`.i`) and, unless the index is "inline", a data
 * file (`.d`). The index is a sequence of 64-byte entries, one per
 * revision, all integers big-endian:
 *
 *    0  6 bytes  offset of the revision's chunk in the data file
 *    6  2 bytes  flags (censored, ellipsis, external storage...: refused)
 *    8  4 bytes  length of the chunk (compressed)
 *   12  4 bytes  length of the revision's full text
 *   16  4 bytes  delta base revision: with generaldelta, the revision the
 *                chunk is a delta against, or the revision itself for a
 *                full text; without, the start of the chain (the chunk
 *                being a delta against the previous revision, or a full
 *                text when the base is the revision itself)
 *   20  4 bytes  linked changelog revision
 *   24  4 bytes  first parent revision (-1 for none)
 *   28  4 bytes  second parent revision (-1 for none)
 *   32 20 bytes  node (hg id), then 12 bytes of zeros
 *
 * The first 4 bytes of the first entry are the header instead of the high
 * part of its offset (always 0): 16 bits of feature flags (inline data
 * 1 << 16, generaldelta 1 << 17, others refused) then the 16-bit version,
 * 1 (revlogv1; version 0 and revlogv2 are refused). When inline, each
 * entry is followed by its chunk and there is no data file.
 *
 * A chunk starts with its compression: empty (empty text), '\0' (stored
 * as is, that byte included), 'u' (stored as is after that byte), 'x'
 * (a zlib stream, the 'x' being its first byte), '(' (0x28, a zstd frame,
 * the byte being the first of its magic). Once decompressed, it is either
 * the full text or a delta (hg-delta.h) against the base's full text.
 *
 * Everything read is checked against the sizes the files have: chunks
 * inside the data, offsets following each other, bases and parents
 * before the revision, texts of their stated length (a delta's hunks are
 * checked against its base's length and give the revision's), that
 * length within what a changegroup chunk carries (REVLOG_MAX_TEXT).
 * Nothing is inflated past those lengths: a chunk is inflated piecewise
 * and refused once it outgrows them, a zstd frame stating a larger
 * content size before it starts.
 */
#ifndef CINNABAR_REVLOG_H
#define CINNABAR_REVLOG_H

#include "hg-id.h"

struct strbuf;

struct revlog_entry {
	uint64_t offset;	/* of the chunk, in the data file */
	uint32_t chunk_len, text_len;
	int32_t base, link, p1, p2;	/* revisions, -1 for none */
	struct hg_oid node;
};

/* Where a file of a revlog lies in the file holding it. */
struct revlog_extent {
	uint64_t offset, size;
};

/*
 * The most a revision's text may hold: a changegroup chunk's length is a
 * signed 32-bit number counting itself, the five ids of its header and,
 * for a full text, the 12-byte hunk header it is sent behind.
 */
#define REVLOG_MAX_TEXT ((1U << 31) - 4 - 5 * HG_RAWSZ - 12)

struct revlog_texts;

struct revlog {
	char *name;		/* for messages */
	int fd;			/* holds the index and the data; not owned */
	uint64_t index_start, data_start;	/* equal when inline */
	int is_inline, generaldelta;
	uint64_t index_size, data_size;
	/* Filled as revisions are read (revlog_next, revlog_text), in order. */
	uint32_t nr;
	struct revlog_entry *entries;
	uint32_t alloc;
	uint64_t next_pos;	/* in the index file */
	uint32_t next_rev;	/* the revision revlog_next gives next */
	struct revlog_texts *texts;	/* revlog_text's, once called */
};

/*
 * Open the revlog whose index lies at `index` and data at `data` (of
 * size 0 when the index is inline) in the file `fd`, which the caller
 * keeps open while the revlog is read and closes. `name` says what it is
 * in messages. Dies naming it when the header is not one we read.
 */
void revlog_open(struct revlog *rl, const char *name, int fd,
		 const struct revlog_extent *index,
		 const struct revlog_extent *data);
void revlog_release(struct revlog *rl);

/*
 * The next revision's entry (from the first; its revision is
 * rl->next_rev - 1), read from the index unless revlog_text read it
 * already; NULL at the end of the index. The entry stays valid until the
 * next call. Dies on an entry that does not fit the files or the
 * revisions before it.
 */
const struct revlog_entry *revlog_next(struct revlog *rl);

/*
 * The decompressed chunk of revision `rev` (already read by revlog_next)
 * into `out`: its full text when it is its own base, else a delta.
 */
void revlog_chunk(struct revlog *rl, uint32_t rev, struct strbuf *out);

/* Whether revision `rev`'s chunk is a full text. */
int revlog_is_full(const struct revlog *rl, uint32_t rev);
/* The revision `rev`'s chunk is a delta against (when not full). */
uint32_t revlog_delta_parent(const struct revlog *rl, uint32_t rev);

/*
 * The full text of revision `rev`, into `out`. Call it for every revision
 * in turn, from the first: it reads the whole index at its first call,
 * then builds each text from its delta base's, kept from when that was
 * built for as long as later deltas need it (up to 64 MB of texts in
 * all). Past that, a base not kept is built again from its chain, from
 * a budget of work each revision earns (16 times its text's length and
 * a little), so that no shape of chains makes the texts cost more than
 * a multiple of their length. Dies when the budget runs out.
 */
void revlog_text(struct revlog *rl, uint32_t rev, struct strbuf *out);

#endif
