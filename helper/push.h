/* Changegroups for pushing: see push.c and PROTOCOL.md. */
#ifndef CINNABAR_PUSH_H
#define CINNABAR_PUSH_H

#include "hg-id.h"

/*
 * Write the changegroup (version 1 or 2) of `commits` (parents first) to
 * `path`, import it back, and give each commit's changeset in `nodes`
 * (`nr` of them, in the same order).
 */
void create_changegroup(int version, const char *path,
			const struct object_id *commits, size_t nr,
			struct hg_oid *nodes);

/*
 * The branch the changeset made for `commit` gets in the next
 * create_changegroup, instead of its first parent's ("default": no branch
 * extra); for the branch experiment and pushes to topics: `branch` may be
 * "<branch>\t<topic>", and the changeset then gets a "topic" extra.
 */
void push_set_branch(const struct object_id *commit, const char *branch);

#endif
