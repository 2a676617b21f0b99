/* The git ids of several blobs at once: see blob-ids.h. */
#include "libgit.h"
#include "blob-ids.h"
#include "hg-id.h"
#include "sha1/sha1-lanes.h"

/*
 * Below this many busy lanes, the one-lane code is cheaper than a run of
 * the 16- or 8-lane code (as in id-verify.c); the 2 lanes of the SHA
 * instructions run with both busy only.
 */
#define MB_MIN_LANES 6

/* What a lane reads of a blob: its header, then its content. */
struct blob_lane {
	struct blob_text *blob;
	char hdr[32];
	size_t hdr_len;
};

static const char *blob_piece(const void *src, size_t i, size_t *len)
{
	const struct blob_lane *bl = src;

	switch (i) {
	case 0:
		*len = bl->hdr_len;
		return bl->hdr;
	case 1:
		*len = bl->blob->len;
		return bl->blob->buf;
	default:
		return NULL;
	}
}

#ifdef SHA1_NEEDS_CLONE_HELPER
/*
 * git's wrapper of OpenSSL 3 (sha1/openssl.h, which hash.h uses when it
 * defines SHA1_NEEDS_CLONE_HELPER) starts each hash with EVP_sha1(), which
 * OpenSSL looks up again by name on every EVP_DigestInit_ex: a lock and a
 * search per object, 3% of the helper's main thread in a long clone; and
 * each hash has a context of its own. The thread's context, with the
 * digest fetched once (openssl_sha1_start), is used here.
 */
static int object_id_evp(const char *hdr, size_t hdr_len, const void *buf,
			 size_t len, struct object_id *oid)
{
	EVP_MD_CTX *ctx = openssl_sha1_start();

	if (!ctx || !EVP_DigestUpdate(ctx, hdr, hdr_len) ||
	    !EVP_DigestUpdate(ctx, buf, len) ||
	    !EVP_DigestFinal_ex(ctx, oid->hash, NULL))
		return -1;
	memset(oid->hash + GIT_SHA1_RAWSZ, 0,
	       GIT_MAX_RAWSZ - GIT_SHA1_RAWSZ);
	oid->algo = GIT_HASH_SHA1;
	return 0;
}
#endif

void object_id_of(enum object_type type, const void *buf, size_t len,
		  struct object_id *oid)
{
#ifdef SHA1_NEEDS_CLONE_HELPER
	if (the_hash_algo->format_id == GIT_SHA1_FORMAT_ID) {
		char hdr[32];
		size_t hdr_len = format_object_header(hdr, sizeof(hdr), type,
						      len);
		if (!object_id_evp(hdr, hdr_len, buf, len, oid))
			return;
	}
#endif
	hash_object_file(the_hash_algo, buf, len, type, oid);
}

static void blob_id_one(struct blob_text *b)
{
	object_id_of(OBJ_BLOB, b->buf, b->len, &b->id);
}

void blob_ids(struct blob_text *blobs, size_t nr)
{
	struct sha1_lanes lanes;
	struct blob_lane slots[SHA1_MB_LANES];
	const struct blob_lane *done;
	unsigned char digest[20];
	size_t next = 0, left = nr;
	int min_mb, i;

	if (nr < 2 || !sha1_mb_lanes() ||
	    the_hash_algo->format_id != GIT_SHA1_FORMAT_ID) {
		for (; next < nr; next++)
			blob_id_one(&blobs[next]);
		return;
	}
	sha1_lanes_init(&lanes);
	min_mb = lanes.nr < MB_MIN_LANES ? lanes.nr : MB_MIN_LANES;
	memset(slots, 0, sizeof(slots));
	while (left) {
		while (next < nr && sha1_lanes_has_room(&lanes)) {
			struct blob_lane *bl = slots;
			while (bl->blob)
				bl++;
			bl->blob = &blobs[next++];
			bl->hdr_len = format_object_header(bl->hdr,
							   sizeof(bl->hdr),
							   OBJ_BLOB,
							   bl->blob->len);
			sha1_lanes_add(&lanes, blob_piece, bl);
		}
		sha1_lanes_step(&lanes, min_mb, SIZE_MAX);
		while ((done = sha1_lanes_take_done(&lanes, digest))) {
			struct blob_lane *bl = (struct blob_lane *)done;
			oidread(&bl->blob->id, digest, the_hash_algo);
			bl->blob = NULL;
			left--;
		}
	}
	for (i = 0; i < SHA1_MB_LANES; i++)
		if (slots[i].blob)
			BUG("a blob left in a lane");
}
