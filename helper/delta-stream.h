/*
 * Texts read as streams: a base's stream with a delta applied, for texts
 * too large to hold in memory (file.c, "Large file revisions").
 *
 * A Mercurial delta's hunks are sorted and do not overlap (hg-delta.h),
 * so its text is its base read once, in order: the bytes before a hunk
 * copied, the hunk's data, the bytes it replaces skipped. A git delta
 * (gitformat-pack.txt, "Deltified representation") may copy from
 * anywhere in its base, in any order; only one whose copies go forward,
 * as those made from Mercurial deltas do (hg_delta_to_git), can be read
 * so: git_delta_is_forward() says.
 */
#ifndef CINNABAR_DELTA_STREAM_H
#define CINNABAR_DELTA_STREAM_H

#include "input-stream.h"

/*
 * The text of `delta` (`delta_len` bytes, which must stay until release)
 * applied to the `base_len` bytes of `base`, which the new stream takes
 * over. `what` names the revision in errors (a malformed delta, a base
 * shorter than said).
 */
void stream_init_hg_patch(struct stream *s, struct stream *base,
			  uint64_t base_len, const char *delta,
			  size_t delta_len, const char *what);
/*
 * The same for a delta of one hunk, replacing bytes [start, end) of the
 * base with the `len` bytes that `data` gives next (not taken over: it
 * must outlive the new stream).
 */
void stream_init_hg_hunk(struct stream *s, struct stream *base,
			 uint64_t base_len, uint64_t start, uint64_t end,
			 struct stream *data, uint64_t len, const char *what);

/*
 * Whether git delta `delta` is well formed and copies from its base in
 * order only (each copy at or after the end of the one before); then its
 * base's and result's sizes go to `base_len` and `result_len`.
 */
int git_delta_is_forward(const char *delta, size_t len, uint64_t *base_len,
			 uint64_t *result_len);
/*
 * The text of such a delta (xmalloc'ed, freed on release) applied to
 * `base`, taken over.
 */
void stream_init_git_patch(struct stream *s, struct stream *base,
			   char *delta, size_t len);

#endif
