/*
 * Stream clones: the revlogs a Mercurial server sends as they are on its
 * disk, read as the changegroup they hold, so that they are imported,
 * and every id checked, exactly as a changegroup is (import.h).
 *
 * The Python side (cinnabar/hg/streamclone.py) receives the stream and
 * spools its revlogs to a directory, under names of its own:
 *
 *   changelog.i, changelog.d   00changelog.i/.d
 *   manifest.i, manifest.d     00manifest.i/.d
 *   data-<n>.i, data-<n>.d     the filelog of the <n>th path (from 0) of
 *   files                      the paths, each followed by a NUL byte
 *
 * (a `.d` is missing when its index is inline). The changegroup made from
 * them (version 02) has every revision of each revlog, in revlog order
 * (a revision's delta base and parents come before it), each with the
 * delta base the revlog has (a full text becomes a delta against the null
 * id), its linked changeset being the changelog's node of its linkrev.
 * Changesets are sent against the previous one or in full, as the import
 * wants them (Mercurial stores them in full anyway).
 */
#ifndef CINNABAR_STREAM_CLONE_H
#define CINNABAR_STREAM_CLONE_H

#include "stream.h"

/* A stream of the changegroup (version 02) of the revlogs in `dir`. */
void stream_init_revlogs(struct stream *s, const char *dir);

#endif
