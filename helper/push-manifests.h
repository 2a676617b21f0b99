/*
 * The manifests a push reads and makes (push-state.h): parsed into lines,
 * a few kept at a time, the new ones' texts waiting in a temporary file
 * once their delta is made.
 */
#ifndef CINNABAR_PUSH_MANIFESTS_H
#define CINNABAR_PUSH_MANIFESTS_H

#include "push-state.h"

/*
 * The manifest `id`, stored or made earlier in this push; NULL for the
 * null id. Valid until PUSH_MANIFEST_CACHE - 1 other calls. A stored
 * manifest's text is checked against its id the first time it is read
 * (dies if it does not match: the push must not send what it has not
 * verified).
 */
const struct push_manifest *push_manifest_get(struct push_state *st,
					      const struct hg_oid *id);

/* The manifest `id` if it is among those kept, else NULL: never read. */
const struct push_manifest *push_manifest_kept(struct push_state *st,
					       const struct hg_oid *id);

/* The line of `path` in `m` (which may be NULL), or NULL. */
const struct manifest_line *push_manifest_line(const struct push_manifest *m,
					       const char *path, size_t len);

/* Move the text of cs's new manifest to the temporary file. */
void push_manifest_spill(struct push_state *st, struct cs_rev *cs);

void push_manifests_release(struct push_state *st);

#endif
