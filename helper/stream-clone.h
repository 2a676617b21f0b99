/*
 * Stream clones: the revlogs a Mercurial server sends as they are on its
 * disk, read as the changegroup they hold, so that they are imported,
 * and every id checked, exactly as a changegroup is (import.h).
 *
 * The Python side (cinnabar/hg/streamreader.py) receives the stream and
 * spools its revlogs, one after the other as they come, to one file,
 * `revlogs`, of a directory, beside a table of where each lies, `table`:
 * one line per revlog, the changelog's first, the manifest's second, then
 * one per filelog:
 *
 *   <index offset> <index size> <data offset> <data size>[ <path>]\n
 *
 * the offsets and sizes being decimal (leading zeros allowed), in bytes, in
 * `revlogs`; a filelog's line ends with a space and the file's path (which
 * holds no NUL, LF or CR); a revlog without data (inline, or empty) has
 * size 0 for it, and an empty revlog index size 0. The table is read a
 * line at a time (its size grows with the number of files), and so is
 * written: a filelog's line as its revlog completes, the changelog's and
 * the manifest's, which come last in a stream, over the first two lines,
 * written first zero-padded to one width. The changegroup made from
 * them (version 02) has every revision of each revlog, in revlog order
 * (a revision's delta base and parents come before it), each with the
 * delta base the revlog has (a full text becomes a delta against the null
 * id), its linked changeset being the changelog's node of its linkrev.
 * Changesets are sent against the previous one or in full, as the import
 * wants them (Mercurial stores them in full anyway).
 */
#ifndef CINNABAR_STREAM_CLONE_H
#define CINNABAR_STREAM_CLONE_H

#include "input-stream.h"

/* A stream of the changegroup (version 02) of the revlogs in `dir`. */
void stream_init_revlogs(struct stream *s, const char *dir);

#endif
