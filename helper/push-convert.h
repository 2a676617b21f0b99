/*
 * Each git commit of a push as a changeset, with its manifest and file
 * revisions: see push-convert.c.
 */
#ifndef CINNABAR_PUSH_CONVERT_H
#define CINNABAR_PUSH_CONVERT_H

#include "push-state.h"

struct raw_commit;

/*
 * For the current commit of the batch, whose parents' changesets
 * (cs->p1, cs->p2) are set: cs->node, its stored changeset, is set too;
 * the file revisions its manifest introduces join st->files, their
 * parents to be found (file_rev.need_parents).
 */
void push_add_stored(struct push_state *st, struct cs_rev *cs);

/*
 * For the current commit of the batch, `c` (parents set as above), not
 * from Mercurial: its changeset text and id, its manifest's (and text
 * when it is new), and its new file revisions into st->files.
 */
void push_convert_commit(struct push_state *st, struct cs_rev *cs,
			 struct raw_commit *c);

#endif
