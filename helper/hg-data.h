/*
 * The raw Mercurial data of stored revisions, for `git cinnabar data`:
 * the `data` command of PROTOCOL.md.
 *
 * A revision is named by its kind (changeset, manifest or file) and its hg
 * id, full or abbreviated (at least MIN_HG_PREFIX hex digits). An
 * abbreviation is resolved among the stored revisions of that kind only,
 * as `hg debugdata` resolves it in one revlog; the hg2git map knows them
 * all: a changeset's git commit has a git2hg note, a manifest's commit has
 * none, a file revision's git object is a blob.
 */
#ifndef CINNABAR_HG_DATA_H
#define CINNABAR_HG_DATA_H

#define MIN_HG_PREFIX 4

/*
 * Answer `data <kind> <hex>` on `out`: `ok <full id>` then the text as a
 * block stream, or `unknown`, `ambiguous <count>`, or `other <kind>` (the
 * id is known, as a revision of another kind). Dies on a bad request.
 */
void answer_hg_data(const char *kind, const char *hex, FILE *out);

/*
 * How many stored revisions, of any kind, have an hg id starting with the
 * 1 to 39 hex digits `hex`: 0, 1 (copied to `found`) or 2 for more than
 * one; -1 when `hex` is not such digits.
 */
int hg_prefix_lookup(const char *hex, struct hg_oid *found);

#endif
