/*
 * Large texts edited by Mercurial deltas, held as a list of shared blocks.
 *
 * A manifest of 100,000 files is about 6 MB, and most deltas change a few
 * lines of it. Applying a delta to a flat buffer copies the whole text;
 * here the result shares every block the delta leaves alone with its base
 * and only the blocks around each hunk are new (tens of kB per hunk:
 * texts in flight to the threads verifying ids cost little). A text stays
 * readable while the next one is built from it, so a worker thread can
 * hash it meanwhile (id-verify.h).
 *
 * Blocks are reference-counted without locks: only one thread may create,
 * apply to or release texts; others may only read a text they were given.
 * Blocks are about BLOCK_TEXT_SIZE bytes (at most twice that); every
 * block but the last is at least a quarter of that, so a text has few
 * blocks. The hashing threads feed their 16 lanes a block at a time, and
 * a run of the lanes stops at the first block end any lane reaches, so
 * smaller blocks cost the hashing more than they save in copies
 * (doc/performance.md, "Writing objects").
 */
#ifndef CINNABAR_BLOCK_TEXT_H
#define CINNABAR_BLOCK_TEXT_H

#include "strbuf.h"

#define BLOCK_TEXT_SIZE 16384

struct text_block;

struct block_text {
	struct text_block **blocks;
	size_t *starts;		/* offset of each block in the text */
	size_t nr, alloc, len;
	size_t own;		/* bytes of the blocks made for this text */
};

#define BLOCK_TEXT_INIT { 0 }

/* Drop every block (the text becomes empty). */
void block_text_release(struct block_text *text);
/* Replace the content by a copy of `buf`. */
void block_text_set(struct block_text *text, const char *buf, size_t len);
/*
 * Append the bytes of `buf` to `text` in whole blocks, leaving in `buf`
 * what is less than a block, or all of them with `all`: a text made a
 * piece at a time is never held whole in one buffer too.
 */
void block_text_append(struct block_text *text, struct strbuf *buf, int all);
/*
 * Apply the Mercurial delta to `base`, into `out` (released first).
 * Return 0, or -1 if the delta is malformed or does not fit the base.
 */
int block_text_apply(const struct block_text *base, const char *delta,
		     size_t delta_len, struct block_text *out);
/* Make `to` (released first) a copy of `from` sharing all its blocks. */
void block_text_share(const struct block_text *from, struct block_text *to);
/* Append the bytes [start, end) to `out`. */
void block_text_copy(const struct block_text *text, size_t start, size_t end,
		     struct strbuf *out);
/* The byte at `pos` (< len). */
char block_text_at(const struct block_text *text, size_t pos);
/*
 * The offset just after the last `c` before `pos` (0 if none), and the
 * offset just after the first `c` at or after `pos` (len if none).
 */
size_t block_text_after_prev(const struct block_text *text, size_t pos,
			     char c);
size_t block_text_after_next(const struct block_text *text, size_t pos,
			     char c);
/* Block i (< nr): its bytes, and their count in *len. */
const char *block_text_block(const struct block_text *text, size_t i,
			     size_t *len);
/* Visit the blocks in order (e.g. to hash the text). */
void block_text_each(const struct block_text *text,
		     void (*fn)(const char *data, size_t len, void *cb_data),
		     void *cb_data);

#endif
