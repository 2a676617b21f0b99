/*
 * Mercurial bundles: the containers changegroups travel in.
 *
 * bundle1: "HG10" then a 2-byte compression name, "UN" (none), "GZ" (zlib)
 *   or "BZ" (bzip2 without its "BZ" magic), then one version 01
 *   changegroup. Data starting with a NUL byte is a bare changegroup.
 *
 * bundle2: "HG20", a 4-byte big-endian length and that many bytes of
 *   stream parameters (space-separated, URL-quoted `name=value`; a name
 *   starting with an upper-case letter is mandatory; a length over
 *   BUNDLE2_MAX_STREAM_PARAMS is refused unread). `Compression` (UN,
 *   GZ, BZ, ZS) compresses everything that follows. Then parts, each:
 *     - a 4-byte big-endian header length (0 ends the bundle),
 *     - the header: 1-byte type length, type, 4-byte part id, 1-byte count
 *       of mandatory and 1-byte count of advisory parameters, a pair of
 *       1-byte key and value lengths per parameter, then keys and values;
 *       a type holding an upper-case letter makes the part mandatory;
 *     - the payload: chunks of a 4-byte big-endian signed length and data,
 *       ended by a 0 length (-1 announces an out-of-band part: refused).
 *   A `changegroup` part has a `version` parameter (01 when absent) and
 *   may have `nbchanges`, the count of changesets it holds.
 */
#ifndef CINNABAR_BUNDLE_H
#define CINNABAR_BUNDLE_H

#include "input-stream.h"

/*
 * Stream parameters are a few words (`Compression=ZS` at most in what
 * Mercurial writes): a longer stated length is a damaged bundle. The
 * Python reader (cinnabar/hg/bundle2.py) has the same bound.
 */
#define BUNDLE2_MAX_STREAM_PARAMS 65536

struct bundle {
	/* Owned: raw or decompressed bundle data; first: stream_pass_idle. */
	struct stream input;
	int version;		/* 1 or 2 */
	int done;
	struct stream part;	/* payload of the current bundle2 part */
	int in_part;
	int32_t chunk_left;
	int part_ended;
	/* The current changegroup's nbchanges (0: not given, or bundle1). */
	uint64_t nbchanges;
};

/*
 * Start reading a bundle from `raw` (which the bundle takes over). If
 * `cg_version` is non-zero, the data is a bare changegroup of that version
 * instead of a bundle.
 */
void bundle_open(struct bundle *b, struct stream *raw, int cg_version);

/*
 * Advance to the next changegroup of the bundle: set *cg to a stream of its
 * data and *cg_version, and return 1; return 0 when there is none left.
 * Other parts are skipped; parts carrying an error from the server die
 * with the server's message.
 */
int bundle_next_changegroup(struct bundle *b, struct stream **cg,
			    int *cg_version);

/*
 * After the last changegroup (bundle_next_changegroup returned 0): die
 * unless the data ends there.  Reading on to the end also makes the
 * decompressor check its end of stream and checksum (input-stream.h).
 */
void bundle_check_end(struct bundle *b);

void bundle_release(struct bundle *b);

#endif
