/*
 * Reusing the deltas of git packs as Mercurial deltas, for pushing.
 *
 * The blobs of a clone are mostly stored in its pack as deltas against
 * the blob of the previous revision of the same file (the Mercurial
 * delta translated, see store_blob_from_delta). When a push sends that
 * previous revision just before, the pack's delta gives both the text
 * and the changegroup's delta without reading the blob whole or diffing.
 * git's delta format: git-delta.h.
 */
#ifndef CINNABAR_PACK_DELTA_REUSE_H
#define CINNABAR_PACK_DELTA_REUSE_H

struct packed_git;

/* Where object `oid` is in a pack: return 0, or -1 if it is in none. */
int pack_entry_of(const struct object_id *oid, struct packed_git **pack,
		  off_t *offset);

/*
 * When the entry at `offset` of `pack` is a delta against another entry
 * of the pack, put the delta, inflated, into `out`, the base's offset in
 * `base_offset`, and return 0; otherwise (a whole object, a damaged
 * entry) return -1.
 */
int pack_delta_at(struct packed_git *pack, off_t offset, struct strbuf *out,
		  off_t *base_offset);

/*
 * Apply the git delta `delta` to `base`: the result into `text`, and the
 * same change as a Mercurial delta (hg-delta.h) into `hg_delta` (copies in
 * increasing base order become the gaps between hunks; a copy going back
 * becomes inserted bytes). Both are reset first. Return 0, or -1 if the
 * delta is malformed or does not fit the base.
 */
int git_delta_to_hg(const char *base, size_t base_len, const char *delta,
		    size_t len, struct strbuf *text, struct strbuf *hg_delta);

#endif
