/*
 * Changesets received, kept in a temporary file until they are imported.
 *
 * Changesets come first in a changegroup but are imported last (their
 * commits need the manifests' and files' trees and blobs): holding their
 * texts in memory would grow with history (hundreds of MB for a
 * mozilla-central-sized clone). Each record is
 *     node, p1, p2 (20 bytes each), text length (4 bytes, big-endian),
 *     text
 * written and read back in order; the file has no name and goes away
 * when closed.
 */
#ifndef CINNABAR_CHANGESET_SPOOL_H
#define CINNABAR_CHANGESET_SPOOL_H

#include "hg-id.h"
#include "strbuf.h"

struct spooled_changeset {
	struct hg_oid node, p1, p2;
	struct strbuf text;
};

#define SPOOLED_CHANGESET_INIT { .text = STRBUF_INIT }

struct changeset_spool {
	FILE *f;
	size_t nr;
};

void changeset_spool_init(struct changeset_spool *spool);
void changeset_spool_add(struct changeset_spool *spool,
			 const struct spooled_changeset *cs);
/* Go back to the first changeset, for reading. */
void changeset_spool_rewind(struct changeset_spool *spool);
/* Read the next changeset; 0 at the end. */
int changeset_spool_next(struct changeset_spool *spool,
			 struct spooled_changeset *cs);
void changeset_spool_release(struct changeset_spool *spool);

#endif
