/*
 * Compressing a file as Mercurial's bundles do: the `compress` command of
 * PROTOCOL.md, used to write bundles (`git cinnabar bundle`).
 *
 * The engines, with the levels Mercurial uses by default:
 *   none    the bytes as they are;
 *   zlib    a zlib stream (RFC 1950), level 6 (bundle type GZ);
 *   bzip2   a bzip2 stream, "BZh" magic included, block size 9 (type BZ;
 *           a bundle1 HG10BZ header is "HG10" followed by this stream);
 *   zstd    one zstd frame, level 3 (type ZS).
 */
#ifndef CINNABAR_COMPRESS_H
#define CINNABAR_COMPRESS_H

/*
 * Append the contents of the file `source`, compressed with `engine`, to
 * the file `dest` (created if missing); return how many bytes were
 * appended. Dies on an unknown engine or an I/O error.
 */
uintmax_t compress_file(const char *engine, const char *source,
			const char *dest);

#endif
