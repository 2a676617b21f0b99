/*
 * Mercurial binary deltas ("bdiff" patches).
 *
 * A delta is a sequence of hunks, each a 12-byte header of three big-endian
 * 32-bit integers, start, end and length, followed by `length` bytes: the
 * bytes [start, end) of the base text are replaced by the hunk's data. Hunks
 * are sorted by start and do not overlap.
 */
#ifndef CINNABAR_HG_DELTA_H
#define CINNABAR_HG_DELTA_H

struct hg_hunk {
	size_t start, end;
	const char *data;
	size_t len;
};

struct hg_delta_iter {
	const char *cur, *end;
};

void hg_delta_iter_init(struct hg_delta_iter *it, const char *delta,
			size_t len);
/* Return 1 and fill `hunk`, 0 at the end, -1 if the delta is malformed. */
int hg_delta_next(struct hg_delta_iter *it, struct hg_hunk *hunk);

/*
 * The 12-byte header of a hunk replacing bytes [start, end) of the base
 * with `len` bytes (which follow it in a delta).
 */
void hg_delta_hunk_header(unsigned char header[12], size_t start,
			  size_t end, size_t len);

/*
 * Append to `delta` a hunk replacing bytes [start, end) of the base with the
 * `len` bytes at `data`.
 */
void hg_delta_add_hunk(struct strbuf *delta, size_t start, size_t end,
		       const char *data, size_t len);

/*
 * Apply `delta` to `base`, appending the result to `out`. Return 0, or -1
 * if the delta is malformed or does not fit the base.
 */
int hg_delta_apply(const char *base, size_t base_len, const char *delta,
		   size_t delta_len, struct strbuf *out);

/*
 * The length of what `delta` makes of a base of `base_len` bytes, into
 * `result_len`, without the base. Return 0, or -1 as hg_delta_apply would.
 */
int hg_delta_result_len(const char *delta, size_t delta_len, size_t base_len,
			size_t *result_len);

/*
 * Translate a delta between two texts into git's delta format (base and
 * result sizes as varints, then "copy" and "insert" instructions), into
 * `out`. base_len and result_len are the sizes of the two texts.
 */
void hg_delta_to_git(const char *delta, size_t delta_len, size_t base_len,
		     size_t result_len, struct strbuf *out);

/*
 * When `text` differs from `base` in one span only, of at most `max_span`
 * bytes of `text` (an entry of a tree edited, added or removed), the git
 * delta that copies their common start and end and inserts that span,
 * into `out`; return 0. Otherwise return -1 (`out` is left alone).
 */
int git_delta_of_one_span(const char *base, size_t base_len,
			  const char *text, size_t len, size_t max_span,
			  struct strbuf *out);

#endif
