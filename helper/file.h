/*
 * Mercurial file revisions and their git storage.
 *
 * A file revision's text is its content, preceded, when it has metadata
 * (copy source, or content that starts with "\1\n"), by "\1\n", the
 * metadata ("key: value\n" lines) and "\1\n". The content is stored as a
 * git blob (hg2git maps the hg id to it) and the metadata, when present,
 * as another blob (files-meta maps the hg id to it). The empty revision
 * without parents (hg_empty_file_oid) is not stored.
 */
#ifndef CINNABAR_FILE_H
#define CINNABAR_FILE_H

struct id_verify;
struct rev_chunk;
struct hg_oid;
struct strbuf;

/*
 * Import one file revision of a changegroup (verifying its id). The
 * chunk may have been read in part (read_rev_chunk_head() with
 * file_big_text_min()): the rest is read from `cg`.
 */
struct stream;
void import_file(struct id_verify *verify, struct rev_chunk *chunk,
		 struct stream *cg);
/*
 * Store the revisions import_file() has queued (file.c, "Small revisions
 * in batches"): before anything else reads file revisions or blobs.
 */
void file_flush(void);
/* The size from which a file revision's text is not held in memory. */
size_t file_big_text_min(void);
/* The full text of a stored file revision; dies if it is unknown. */
void file_text(const struct hg_oid *node, struct strbuf *out);
/* Forget the revision kept in memory (between files). */
void file_reset_cache(void);

#endif
