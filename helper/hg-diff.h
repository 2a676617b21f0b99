/*
 * Making Mercurial deltas (format in hg-delta.h) between two texts, line
 * by line as Mercurial's bdiff does, with git's xdiff: one hunk for each
 * run of changed lines.
 */
#ifndef CINNABAR_HG_DIFF_H
#define CINNABAR_HG_DIFF_H

struct strbuf;

/* Append to `delta` a delta turning `base` into `text`. */
void hg_diff(const char *base, size_t base_len, const char *text,
	     size_t len, struct strbuf *delta);

#endif
