/* Mercurial object ids: see hg-id.h. */
#include "libgit.h"
#include "hg-id.h"
#include <openssl/evp.h>
#include <pthread.h>

const struct hg_oid hg_null_oid;
const struct hg_oid hg_empty_file_oid = { {
	0xb8, 0x0d, 0xe5, 0xd1, 0x38, 0x75, 0x85, 0x41, 0xc5, 0xf0,
	0x52, 0x65, 0xad, 0x14, 0x4a, 0xb9, 0xfa, 0x86, 0xd1, 0xdb,
} };

int hg_oid_is_null(const struct hg_oid *oid)
{
	return hg_oideq(oid, &hg_null_oid);
}

int hg_oideq(const struct hg_oid *a, const struct hg_oid *b)
{
	return !memcmp(a->hash, b->hash, HG_RAWSZ);
}

int hg_oidcmp(const struct hg_oid *a, const struct hg_oid *b)
{
	return memcmp(a->hash, b->hash, HG_RAWSZ);
}

void hg_oidcpy(struct hg_oid *dst, const struct hg_oid *src)
{
	memcpy(dst->hash, src->hash, HG_RAWSZ);
}

int hg_oid_from_hex(const char *hex, struct hg_oid *oid)
{
	int i;
	for (i = 0; i < HG_RAWSZ; i++) {
		int v = hex2chr(hex + 2 * i);
		if (v < 0)
			return -1;
		oid->hash[i] = v;
	}
	return 0;
}

const char *hg_oid_to_hex(const struct hg_oid *oid)
{
	static char ring[4][HG_HEXSZ + 1];
	static int i;
	static const char digits[] = "0123456789abcdef";
	char *buf = ring[i++ & 3];
	int j;
	for (j = 0; j < HG_RAWSZ; j++) {
		buf[2 * j] = digits[oid->hash[j] >> 4];
		buf[2 * j + 1] = digits[oid->hash[j] & 0xf];
	}
	buf[HG_HEXSZ] = '\0';
	return buf;
}

/*
 * Mercurial ids are computed with OpenSSL's SHA-1, several times faster
 * than git's collision-detecting one: every revision's full text goes
 * through it, and Mercurial itself does no collision detection. Each
 * thread has its own context (a pthread key, freed when the thread ends):
 * manifests are verified on worker threads (id-verify.h).
 */
static pthread_key_t hash_ctx_key;
static pthread_once_t hash_ctx_once = PTHREAD_ONCE_INIT;

static void free_hash_ctx(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void make_hash_ctx_key(void)
{
	if (pthread_key_create(&hash_ctx_key, free_hash_ctx))
		die("cannot create a thread key for SHA-1");
}

/*
 * EVP_sha1() makes OpenSSL 3 look the digest up by name, under a lock, at
 * every EVP_DigestInit_ex: fetched once instead (about 260 ns a hash).
 */
static EVP_MD *fetched_sha1;
static pthread_once_t fetched_sha1_once = PTHREAD_ONCE_INIT;

static void fetch_sha1(void)
{
	fetched_sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
}

static const EVP_MD *openssl_sha1(void)
{
	pthread_once(&fetched_sha1_once, fetch_sha1);
	return fetched_sha1 ? fetched_sha1 : EVP_sha1();
}

struct evp_md_ctx_st *openssl_sha1_start(void)
{
	EVP_MD_CTX *ctx;

	pthread_once(&hash_ctx_once, make_hash_ctx_key);
	ctx = pthread_getspecific(hash_ctx_key);
	if (!ctx) {
		ctx = EVP_MD_CTX_new();
		if (!ctx || pthread_setspecific(hash_ctx_key, ctx))
			die("cannot initialize SHA-1");
	}
	return EVP_DigestInit_ex(ctx, openssl_sha1(), NULL) ? ctx : NULL;
}

void hg_hash(const struct hg_oid *p1, const struct hg_oid *p2,
	     const char *data, size_t len, struct hg_oid *result)
{
	EVP_MD_CTX *ctx;

	if (!p1)
		p1 = &hg_null_oid;
	if (!p2)
		p2 = &hg_null_oid;
	if (hg_oidcmp(p1, p2) > 0)
		SWAP(p1, p2);
	ctx = openssl_sha1_start();
	if (!ctx || !EVP_DigestUpdate(ctx, p1->hash, HG_RAWSZ) ||
	    !EVP_DigestUpdate(ctx, p2->hash, HG_RAWSZ) ||
	    !EVP_DigestUpdate(ctx, data, len) ||
	    !EVP_DigestFinal_ex(ctx, result->hash, NULL))
		die("SHA-1 computation failed");
}

void hg_hasher_init(struct hg_hasher *h, const struct hg_oid *p1,
		    const struct hg_oid *p2)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx)
		die("cannot initialize SHA-1");
	if (hg_oidcmp(p1, p2) > 0)
		SWAP(p1, p2);
	if (!EVP_DigestInit_ex(ctx, openssl_sha1(), NULL) ||
	    !EVP_DigestUpdate(ctx, p1->hash, HG_RAWSZ) ||
	    !EVP_DigestUpdate(ctx, p2->hash, HG_RAWSZ))
		die("SHA-1 computation failed");
	h->ctx = ctx;
}

void hg_hasher_update(struct hg_hasher *h, const void *data, size_t len)
{
	if (!EVP_DigestUpdate(h->ctx, data, len))
		die("SHA-1 computation failed");
}

void hg_hasher_final(struct hg_hasher *h, struct hg_oid *result)
{
	if (!EVP_DigestFinal_ex(h->ctx, result->hash, NULL))
		die("SHA-1 computation failed");
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

void hg_oid_to_git(struct object_id *dst, const struct hg_oid *src)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst->hash, src->hash, HG_RAWSZ);
	dst->algo = GIT_HASH_SHA1;
}

void git_oid_to_hg(struct hg_oid *dst, const struct object_id *src)
{
	memcpy(dst->hash, src->hash, HG_RAWSZ);
}
