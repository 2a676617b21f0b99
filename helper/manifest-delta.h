/*
 * Mercurial deltas (format in hg-delta.h) between two manifest texts,
 * without a general diff.
 *
 * A manifest text is a list of lines "<path>\0<40 hex digits><flag>\n",
 * sorted by path (bytewise; a path that is a prefix of another comes
 * first), each path once. Two such lists can be compared in one walk, as
 * sorted lists are merged: a line present in both unchanged is common,
 * every run of other lines (removed, added, or with a new node or flag)
 * is one hunk. The result is what a line diff would find, with no line
 * hashing and no search.
 */
#ifndef CINNABAR_MANIFEST_DELTA_H
#define CINNABAR_MANIFEST_DELTA_H

struct strbuf;

/*
 * Append to `delta` a delta turning the manifest text `base` into
 * `text`. Texts that are not sorted manifest lists get a correct but
 * larger delta.
 */
void manifest_delta(const char *base, size_t base_len, const char *text,
		    size_t len, struct strbuf *delta);

#endif
