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
#ifndef CINNABAR_DATA_H
#define CINNABAR_DATA_H

#define MIN_HG_PREFIX 4

/* What `data <kind> <hex>` finds. */
struct hg_data {
	enum { HG_DATA_FOUND, HG_DATA_UNKNOWN, HG_DATA_AMBIGUOUS,
	       HG_DATA_OTHER } result;
	struct hg_oid found;	/* HG_DATA_FOUND: the full id */
	struct strbuf text;	/* HG_DATA_FOUND: the raw text */
	size_t matches;		/* HG_DATA_AMBIGUOUS: how many */
	const char *other;	/* HG_DATA_OTHER: the kind the id is of */
};
#define HG_DATA_INIT { .text = STRBUF_INIT }

/*
 * Look up revision `hex` of `kind` (changeset, manifest, file) for the
 * `data` command of PROTOCOL.md. Dies on a bad request.
 */
void hg_data_lookup(const char *kind, const char *hex, struct hg_data *d);

/*
 * How many stored revisions of the kind `kind` (changeset, manifest, file;
 * any kind when NULL) have an hg id starting with the 1 to 40 hex digits
 * `hex` (all 40: that id, when stored): 0, 1 (copied to `found`) or 2 for
 * more than one; -1 when `hex` is not such digits or `kind` no kind.
 */
int hg_prefix_lookup(const char *hex, const char *kind,
		     struct hg_oid *found);

#endif
