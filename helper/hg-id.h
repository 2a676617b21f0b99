/*
 * Mercurial object ids.
 *
 * A Mercurial id (changeset, manifest or file revision) is the SHA-1 of the
 * two parent ids, smaller first, followed by the revision's full text. It is
 * never a git object id: `struct hg_oid` keeps the two apart.
 */
#ifndef CINNABAR_HG_ID_H
#define CINNABAR_HG_ID_H

#define HG_RAWSZ 20
#define HG_HEXSZ 40

struct hg_oid {
	unsigned char hash[HG_RAWSZ];
};

extern const struct hg_oid hg_null_oid;
/* Id of the empty file revision without parents. */
extern const struct hg_oid hg_empty_file_oid;

int hg_oid_is_null(const struct hg_oid *oid);
int hg_oideq(const struct hg_oid *a, const struct hg_oid *b);
int hg_oidcmp(const struct hg_oid *a, const struct hg_oid *b);
void hg_oidcpy(struct hg_oid *dst, const struct hg_oid *src);
/* Parse 40 hex digits; return 0 on success. */
int hg_oid_from_hex(const char *hex, struct hg_oid *oid);
/* Format into a static ring of buffers, like git's oid_to_hex. */
const char *hg_oid_to_hex(const struct hg_oid *oid);
/* Compute the id of `len` bytes of `data` with parents p1 and p2. */
void hg_hash(const struct hg_oid *p1, const struct hg_oid *p2,
	     const char *data, size_t len, struct hg_oid *result);

/* The same computation for a text given in pieces. */
struct hg_hasher {
	void *ctx;
};
void hg_hasher_init(struct hg_hasher *h, const struct hg_oid *p1,
		    const struct hg_oid *p2);
void hg_hasher_update(struct hg_hasher *h, const void *data, size_t len);
void hg_hasher_final(struct hg_hasher *h, struct hg_oid *result);

/*
 * This thread's OpenSSL context (an EVP_MD_CTX), started for a SHA-1
 * (NULL when OpenSSL fails to): for a hash made from start to end before
 * the next one on the thread.
 */
struct evp_md_ctx_st;
struct evp_md_ctx_st *openssl_sha1_start(void);

/* The same 20 bytes seen as a git object id (for notes keys and gitlinks). */
struct object_id;
void hg_oid_to_git(struct object_id *dst, const struct hg_oid *src);
void git_oid_to_hg(struct hg_oid *dst, const struct object_id *src);

#endif
