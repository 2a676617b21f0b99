/* Mercurial file revisions and their git storage: see file.h. */
#include "libgit.h"
#include "changegroup.h"
#include "hg-delta.h"
#include "metadata.h"
#include "store.h"
#include "file.h"
#include "check-setting.h"
#include "id-verify.h"

/* The last revision imported or loaded: full text and content blob. */
static struct hg_oid last_node;
static struct strbuf last_text = STRBUF_INIT;
static size_t last_meta_len;	/* bytes of "\1\n...\1\n" in last_text */
static struct object_id last_blob;

/*
 * The last revisions imported, for a delta against one of them
 * (a filelog's branches): read back from the pack, it would be inflated
 * again, and wait for the thread deflating it (store.h). Small texts
 * only, each slot's buffer kept.
 */
#define KEPT_FILES 8
#define KEPT_FILE_MAX (64 << 10)
struct kept_file {
	struct hg_oid node;
	struct strbuf text;
	size_t meta_len;
	struct object_id blob;
};
static struct kept_file kept[KEPT_FILES];
static unsigned kept_next;

void file_reset_cache(void)
{
	int i;

	hg_oidcpy(&last_node, &hg_null_oid);
	strbuf_release(&last_text);
	last_meta_len = 0;
	oidclr(&last_blob, the_hash_algo);
	for (i = 0; i < KEPT_FILES; i++) {
		strbuf_release(&kept[i].text);
		oidclr(&kept[i].blob, the_hash_algo);
	}
	kept_next = 0;
}

/* Keep a copy of the revision just imported. */
static void keep_last(void)
{
	struct kept_file *k = &kept[kept_next++ % KEPT_FILES];

	if (is_null_oid(&last_blob) || last_text.len > KEPT_FILE_MAX)
		return;
	hg_oidcpy(&k->node, &last_node);
	if (!k->text.alloc)	/* zeroed (static) or released */
		strbuf_init(&k->text, last_text.len);
	strbuf_reset(&k->text);
	strbuf_addbuf(&k->text, &last_text);
	k->meta_len = last_meta_len;
	oidcpy(&k->blob, &last_blob);
}

/* Make a kept revision the last one; 0 if `node` is not kept. */
static int load_kept(const struct hg_oid *node, const struct object_id *blob)
{
	int i;

	for (i = 0; i < KEPT_FILES; i++) {
		struct kept_file *k = &kept[i];
		if (is_null_oid(&k->blob) || !hg_oideq(&k->node, node) ||
		    !oideq(&k->blob, blob))
			continue;
		strbuf_addbuf(&last_text, &k->text);
		last_meta_len = k->meta_len;
		oidcpy(&last_blob, blob);
		return 1;
	}
	return 0;
}

static void load_file(const struct hg_oid *node)
{
	struct object_id key;
	const struct object_id *meta, *blob;
	unsigned long size;
	char *buf;

	strbuf_reset(&last_text);
	last_meta_len = 0;
	oidclr(&last_blob, the_hash_algo);
	hg_oidcpy(&last_node, node);
	if (hg_oid_is_null(node) || hg_oideq(node, &hg_empty_file_oid))
		return;
	blob = hg2git(node);
	if (blob && load_kept(node, blob))
		return;
	hg_oid_to_git(&key, node);
	meta = notes_map_get(&metadata.files_meta, &key);
	if (meta) {
		buf = store_read_object_typed(meta, OBJ_BLOB, &size);
		strbuf_addstr(&last_text, "\1\n");
		strbuf_add(&last_text, buf, size);
		strbuf_addstr(&last_text, "\1\n");
		free(buf);
		last_meta_len = last_text.len;
	}
	if (!blob)
		die("unknown delta base file revision %s (corrupt data, or a "
		    "repository missing history it should have)", hg_oid_to_hex(node));
	buf = store_read_object_typed(blob, OBJ_BLOB, &size);
	strbuf_add(&last_text, buf, size);
	free(buf);
	oidcpy(&last_blob, blob);
}

/* Length of the metadata part, as git-cinnabar splits it. */
static size_t metadata_length(const struct strbuf *text)
{
	const char *end;
	if (text->len <= 4 || memcmp(text->buf, "\1\n", 2))
		return 0;
	/* Like strstr: the search stops at the first NUL byte. */
	end = strstr(text->buf + 2, "\1\n");
	return end ? end + 2 - text->buf : 0;
}

/* Reused between revisions, to spare large allocations. */
static struct strbuf text = STRBUF_INIT, git_delta = STRBUF_INIT;

void import_file(struct id_verify *verify, struct rev_chunk *chunk)
{
	struct object_id blob, meta, key;
	size_t meta_len;

	if (hg_oideq(&chunk->node, &hg_empty_file_oid) || hg2git(&chunk->node))
		return;
	if (!hg_oideq(&chunk->delta_base, &last_node))
		load_file(&chunk->delta_base);
	strbuf_reset(&text);
	if (hg_delta_apply(last_text.buf, last_text.len, chunk->delta,
			   chunk->delta_len, &text))
		die("malformed file revision %s in the changegroup (corrupt "
		    "data)", hg_oid_to_hex(&chunk->node));
	if (check_enabled(CHECK_FILES))
		verify_id_async_buf(verify, "file revision", &chunk->node,
				    &chunk->p1, &chunk->p2, text.buf, text.len);

	meta_len = metadata_length(&text);
	hg_oid_to_git(&key, &chunk->node);
	if (meta_len) {
		store_object_buf(OBJ_BLOB, text.buf + 2, meta_len - 4, &meta);
		notes_map_set(&metadata.files_meta, &key, &meta);
	}
	if (!meta_len && !last_meta_len && !is_null_oid(&last_blob)) {
		/* The hg delta applies to the blobs as they are. */
		hg_delta_to_git(chunk->delta, chunk->delta_len, last_text.len,
				text.len, &git_delta);
		if (!store_blob_from_delta(text.buf, text.len, &last_blob,
					   git_delta.buf, git_delta.len, &blob))
			goto stored;
	}
	store_blob_with_base(text.buf + meta_len, text.len - meta_len,
			     is_null_oid(&last_blob) ? NULL : &last_blob,
			     last_text.buf + last_meta_len,
			     last_text.len - last_meta_len, &blob);
stored:
	verify_id_buf_done(verify);
	set_hg2git(&chunk->node, &blob);

	strbuf_swap(&text, &last_text);
	last_meta_len = meta_len;
	oidcpy(&last_blob, &blob);
	hg_oidcpy(&last_node, &chunk->node);
	keep_last();
}

void file_text(const struct hg_oid *node, struct strbuf *out)
{
	if (!hg_oideq(node, &last_node))
		load_file(node);
	strbuf_reset(out);
	strbuf_addbuf(out, &last_text);
}
