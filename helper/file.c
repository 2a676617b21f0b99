/* Mercurial file revisions and their git storage: see file.h. */
#include "libgit.h"
#include "changegroup.h"
#include "hg-delta.h"
#include "metadata.h"
#include "store.h"
#include "file.h"
#include "check-setting.h"
#include "id-verify.h"
#include "input-stream.h"
#include "delta-stream.h"
#include "parse.h"
#include "piece-hasher.h"
#include "blob-ids.h"

/*
 * The last revision imported or loaded: full text and content blob; of a
 * large one (last_streamed), only the metadata part of the text, its
 * length in last_len.
 */
static struct hg_oid last_node;
static struct strbuf last_text = STRBUF_INIT;
static size_t last_meta_len;	/* bytes of "\1\n...\1\n" in last_text */
static struct object_id last_blob;
static int last_streamed;
static uint64_t last_len;

/*
 * Large file revisions. A text of big_text_min bytes or more (or one
 * whose delta base is such a text) is never held in memory: it is read
 * as a stream made of its delta base's (the base's metadata, then its
 * blob read back from the pack) and the delta's hunks (delta-stream.h),
 * and each piece of it read is hashed for its hg id and the blob's id
 * and deflated into the pack (store_blob_stream). The chunk itself is
 * held unless it is one hunk over big_text_min (a whole text: what a
 * server sends for a new large file), whose data is read from the
 * changegroup as it is stored. Only its metadata, when it has some, is
 * held, and what comes before its end. A small delta against a large
 * blob of the pack being written is stored as the git delta it
 * translates to, as smaller texts are.
 *
 * The text of the last large revision imported, when it is stored as a
 * delta against another delta, is kept whole in a temporary file
 * (`spool_fd[spool_last]`, while last_spooled) as it is read: the next
 * revision's delta most often applies to it, and read back from the
 * pack it would go through every delta of its chain.
 */
#define BIG_TEXT_MIN (32UL << 20)
static size_t big_text_min;
static int spool_fd[2] = { -1, -1 }, spool_last, last_spooled;

size_t file_big_text_min(void)
{
	if (!big_text_min)
		big_text_min = git_env_ulong("CINNABAR_TEST_BIG_TEXT",
					     BIG_TEXT_MIN);
	return big_text_min;
}

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

/*
 * Small revisions in batches. The blobs of small revisions are stored
 * once QUEUE_MAX of them, or QUEUE_BYTES of their texts, wait: their ids
 * are hashed together (blob-ids.h), then each is stored as it would have
 * been alone, in the same order, so the pack is the same. Until then the
 * last revision may be the newest one queued (last_queued: its text in
 * the queue, its blob not known yet), and whatever reads a stored
 * revision or its blob stores the queue first (file_flush()): load_file,
 * a large revision, file_text, the end of the files.
 */
#define QUEUE_MAX 64
#define QUEUE_BYTES (8 << 20)
/* A queued text's buffer is kept for the next batch up to this size. */
#define QUEUE_KEEP_ALLOC (64 << 10)

struct queued_file {
	struct hg_oid node;
	struct strbuf text;	/* the whole text, metadata first */
	size_t meta_len;
	unsigned generation;	/* its file's (file_reset_cache) */
	int has_base;		/* the revision before it has a blob */
	int has_delta;		/* git_delta: its blob as a delta of that one */
	struct strbuf git_delta;
};
static struct queued_file queue[QUEUE_MAX];
static unsigned queued, generation;
static size_t queued_bytes;
static int last_queued;
/* The revision before queue[0], when it has a blob. */
static struct strbuf base_text = STRBUF_INIT;
static size_t base_meta_len;
static struct object_id base_blob;

void file_reset_cache(void)
{
	int i;

	hg_oidcpy(&last_node, &hg_null_oid);
	strbuf_release(&last_text);
	last_meta_len = 0;
	last_queued = 0;
	generation++;
	last_streamed = 0;
	last_spooled = 0;
	for (i = 0; i < 2; i++)
		if (spool_fd[i] >= 0 && ftruncate(spool_fd[i], 0))
			die_errno("cannot truncate a temporary file");
	oidclr(&last_blob, the_hash_algo);
	for (i = 0; i < KEPT_FILES; i++) {
		strbuf_release(&kept[i].text);
		oidclr(&kept[i].blob, the_hash_algo);
	}
	kept_next = 0;
}

/* Keep a copy of a small revision just stored. */
static void keep(const struct hg_oid *node, const struct strbuf *text,
		 size_t meta_len, const struct object_id *blob)
{
	struct kept_file *k = &kept[kept_next++ % KEPT_FILES];

	if (text->len > KEPT_FILE_MAX)
		return;
	hg_oidcpy(&k->node, node);
	if (!k->text.alloc)	/* zeroed (static) or released */
		strbuf_init(&k->text, text->len);
	strbuf_reset(&k->text);
	strbuf_addbuf(&k->text, text);
	k->meta_len = meta_len;
	oidcpy(&k->blob, blob);
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

/*
 * Make `node` the last revision: its text in memory, or when it is large
 * and `may_stream`, its metadata only.
 */
static void load_file(const struct hg_oid *node, int may_stream)
{
	struct object_id key;
	const struct object_id *meta, *blob;
	unsigned long size;
	uint64_t blob_size;
	char *buf;

	if (!hg_oid_is_null(node) && !hg_oideq(node, &hg_empty_file_oid))
		file_flush();
	strbuf_reset(&last_text);
	last_meta_len = 0;
	last_queued = 0;
	last_streamed = 0;
	last_spooled = 0;
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
	if (may_stream) {
		blob_size = store_blob_size(blob);
		if (blob_size + last_meta_len >= file_big_text_min()) {
			last_streamed = 1;
			last_len = blob_size + last_meta_len;
			oidcpy(&last_blob, blob);
			return;
		}
	}
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

/*
 * The same for a text of `len` bytes of which `head` holds the first:
 * -1 when more of it is needed to tell.
 */
static ssize_t metadata_length_of_head(const struct strbuf *head,
				       uint64_t len)
{
	const char *end, *nul;

	if (len <= 4 || (head->len >= 2 && memcmp(head->buf, "\1\n", 2)))
		return 0;
	if (head->len < 2)
		return -1;
	nul = memchr(head->buf + 2, '\0', head->len - 2);
	end = memmem(head->buf + 2, (nul ? nul : head->buf + head->len) -
				    head->buf - 2, "\1\n", 2);
	if (end)
		return end + 2 - head->buf;
	return nul || head->len == len ? 0 : -1;
}

/* Reused between revisions, to spare large allocations. */
static struct strbuf text = STRBUF_INIT, git_delta = STRBUF_INIT;

/*
 * A stream whose bytes are hashed as they are read (the hg id), and
 * written to `spool` (a file descriptor, or -1).
 */
struct hashed_stream {
	struct stream inner;
	struct piece_hasher *hasher;
	int spool;
	off_t spooled;
};

static void spool_write(struct hashed_stream *h, const char *buf, size_t len)
{
	while (len && h->spool >= 0) {
		ssize_t w = pwrite(h->spool, buf, len, h->spooled);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die_errno("cannot write a temporary file");
		buf += w;
		len -= w;
		h->spooled += w;
	}
}

static size_t hashed_read(struct stream *s, void *buf, size_t len)
{
	struct hashed_stream *h = s->data;
	size_t n = stream_read(&h->inner, buf, len);

	if (h->hasher)
		piece_hasher_add(h->hasher, buf, n);
	spool_write(h, buf, n);
	return n;
}

/* A temporary file for the text of the large revision being imported. */
static int next_spool(void)
{
	int i = last_spooled ? !spool_last : spool_last;

	if (spool_fd[i] < 0) {
		FILE *f = tmpfile();
		if (!f)
			die_errno("cannot create a temporary file");
		spool_fd[i] = fileno(f);
	} else if (ftruncate(spool_fd[i], 0)) {
		die_errno("cannot truncate a temporary file");
	}
	return i;
}

static void hashed_release(struct stream *s)
{
	struct hashed_stream *h = s->data;
	stream_release(&h->inner);
	free(h);
}

/* The text of the last revision, as a stream. */
static void open_last(struct stream *s)
{
	struct stream blob;
	uint64_t size;

	if (!last_streamed || is_null_oid(&last_blob)) {
		stream_init_buf(s, last_text.buf, last_text.len, 0);
		return;
	}
	if (last_spooled) {
		stream_init_pread(s, spool_fd[spool_last]);
		return;
	}
	store_open_blob(&last_blob, &blob, &size);
	if (size + last_text.len != last_len)
		die("blob %s changed size (the repository is damaged)",
		    oid_to_hex(&last_blob));
	stream_init_prefixed(s, &blob, last_text.buf, last_text.len);
}

/*
 * Import `chunk` as a large revision ("Large file revisions" above), of
 * `len` bytes against the last one's `base_len`: its delta in memory, or
 * when `cg` is not NULL, the one hunk whose header chunk->delta holds,
 * the data of which `cg` gives next.
 */
static void import_large(struct id_verify *verify, struct rev_chunk *chunk,
			 uint64_t base_len, uint64_t len, struct stream *cg)
{
	struct stream base, data, text, content;
	struct hashed_stream *hashed = xcalloc(1, sizeof(*hashed));
	struct strbuf what = STRBUF_INIT, head = STRBUF_INIT;
	struct object_id blob, meta, key;
	struct hg_oid id;
	ssize_t meta_len;
	int as_delta, spool = -1;
	unsigned depth = 0;

	file_flush();
	strbuf_addf(&what, "file revision %s", hg_oid_to_hex(&chunk->node));
	open_last(&base);
	hashed->spool = -1;
	if (cg) {
		const unsigned char *h = (const unsigned char *)chunk->delta;
		stream_init_limited(&data, cg, get_be32(h + 8));
		stream_init_hg_hunk(&hashed->inner, &base, base_len,
				    get_be32(h), get_be32(h + 4), &data,
				    get_be32(h + 8), what.buf);
	} else {
		stream_init_hg_patch(&hashed->inner, &base, base_len,
				     chunk->delta, chunk->delta_len, what.buf);
	}
	if (check_enabled(CHECK_FILES))
		hashed->hasher = piece_hasher_start(&chunk->p1, &chunk->p2);
	memset(&text, 0, sizeof(text));
	text.read = hashed_read;
	text.release = hashed_release;
	text.data = hashed;

	while ((meta_len = metadata_length_of_head(&head, len)) < 0) {
		size_t n;
		strbuf_grow(&head, 65536);
		n = stream_read(&text, head.buf + head.len, 65536);
		if (!n)
			BUG("a text ended before its length");
		strbuf_setlen(&head, head.len + n);
	}
	hg_oid_to_git(&key, &chunk->node);
	if (meta_len) {
		store_object_buf(OBJ_BLOB, head.buf + 2, meta_len - 4, &meta);
		notes_map_set(&metadata.files_meta, &key, &meta);
	}
	as_delta = !cg && !meta_len && !last_meta_len &&
		   !is_null_oid(&last_blob) &&
		   store_can_delta_against(&last_blob, &depth);
	stream_init_prefixed(&content, &text, head.buf + meta_len,
			     head.len - meta_len);
	if (as_delta) {
		/* The hg delta applies to the blobs as they are. */
		hg_delta_to_git(chunk->delta, chunk->delta_len, base_len, len,
				&git_delta);
		as_delta = git_delta.len < len / 2;
	}
	if (as_delta) {
		if (depth) {
			/*
			 * Read back from the pack, it would go through two
			 * deltas or more: spooled.
			 */
			spool = next_spool();
			hashed->spool = spool_fd[spool];
			spool_write(hashed, head.buf, head.len);
		}
		store_hash_blob_stream(&content, len, &blob);
		store_blob_delta_with_id(&blob, &last_blob, git_delta.buf,
					 git_delta.len);
	} else {
		store_blob_stream(&content, len - meta_len, &blob);
	}
	if (hashed->hasher) {
		piece_hasher_finish(hashed->hasher, &id);
		hashed->hasher = NULL;
		verify_id_result(verify, "file revision", &chunk->node, &id);
	}
	stream_release(&content);
	if (cg)
		stream_release(&data);
	set_hg2git(&chunk->node, &blob);

	strbuf_reset(&last_text);
	strbuf_add(&last_text, head.buf, meta_len);
	strbuf_release(&head);
	strbuf_release(&what);
	last_meta_len = meta_len;
	last_streamed = 1;
	last_len = len;
	last_spooled = spool >= 0;
	if (last_spooled)
		spool_last = spool;
	oidcpy(&last_blob, &blob);
	hg_oidcpy(&last_node, &chunk->node);
}

/* Whether `node` waits in the queue. */
static int is_queued(const struct hg_oid *node)
{
	unsigned i;

	for (i = 0; i < queued; i++)
		if (hg_oideq(&queue[i].node, node))
			return 1;
	return 0;
}

/* Queue the revision `chunk` whose text is `text`, made from `prev`. */
static void queue_file(const struct rev_chunk *chunk,
		       const struct strbuf *prev)
{
	struct queued_file *q = &queue[queued];
	size_t prev_meta_len = last_queued ? queue[queued - 1].meta_len
					   : last_meta_len;

	if (queued && !last_queued && !is_null_oid(&last_blob))
		BUG("a stored revision after queued ones");
	if (!q->text.buf) {	/* zeroed (static) */
		strbuf_init(&q->text, 0);
		strbuf_init(&q->git_delta, 0);
	}
	hg_oidcpy(&q->node, &chunk->node);
	q->meta_len = metadata_length(&text);
	q->generation = generation;
	q->has_base = last_queued || !is_null_oid(&last_blob);
	q->has_delta = q->has_base && !q->meta_len && !prev_meta_len;
	if (q->has_delta)
		/* The hg delta applies to the blobs as they are. */
		hg_delta_to_git(chunk->delta, chunk->delta_len, prev->len,
				text.len, &q->git_delta);
	if (!queued && q->has_base) {
		strbuf_swap(&base_text, &last_text);
		strbuf_reset(&last_text);
		base_meta_len = last_meta_len;
		oidcpy(&base_blob, &last_blob);
	}
	strbuf_swap(&q->text, &text);
	queued++;
	queued_bytes += q->text.len;
	last_queued = 1;
	last_meta_len = q->meta_len;
	oidclr(&last_blob, the_hash_algo);
	hg_oidcpy(&last_node, &chunk->node);
}

/*
 * Store queued revision `q`, blob `id`, after `prev` (NULL: the one
 * before the queue), blob `prev_blob`.
 */
static void store_queued(const struct queued_file *q,
			 const struct object_id *id,
			 const struct queued_file *prev,
			 const struct object_id *prev_blob)
{
	const struct strbuf *prev_text = prev ? &prev->text : &base_text;
	size_t prev_meta_len = prev ? prev->meta_len : base_meta_len;
	struct object_id key, meta;

	if (q->meta_len) {
		hg_oid_to_git(&key, &q->node);
		store_object_buf(OBJ_BLOB, q->text.buf + 2, q->meta_len - 4,
				 &meta);
		notes_map_set(&metadata.files_meta, &key, &meta);
	}
	if (!q->has_delta ||
	    store_blob_from_delta(q->text.len, id, prev_blob,
				  q->git_delta.buf, q->git_delta.len)) {
		if (q->has_base)
			store_blob_with_base(q->text.buf + q->meta_len,
					     q->text.len - q->meta_len, id,
					     prev_blob,
					     prev_text->buf + prev_meta_len,
					     prev_text->len - prev_meta_len);
		else
			store_blob_with_base(q->text.buf + q->meta_len,
					     q->text.len - q->meta_len, id,
					     NULL, NULL, 0);
	}
	set_hg2git(&q->node, id);
	if (q->generation == generation)
		keep(&q->node, &q->text, q->meta_len, id);
}

static void release_if_large(struct strbuf *sb)
{
	if (sb->alloc > QUEUE_KEEP_ALLOC)
		strbuf_release(sb);
}

void file_flush(void)
{
	struct blob_text blobs[QUEUE_MAX];
	unsigned i;

	if (!queued)
		return;
	for (i = 0; i < queued; i++) {
		blobs[i].buf = queue[i].text.buf + queue[i].meta_len;
		blobs[i].len = queue[i].text.len - queue[i].meta_len;
	}
	blob_ids(blobs, queued);
	for (i = 0; i < queued; i++)
		store_queued(&queue[i], &blobs[i].id, i ? &queue[i - 1] : NULL,
			     i ? &blobs[i - 1].id : &base_blob);
	if (last_queued) {
		struct queued_file *q = &queue[queued - 1];
		strbuf_swap(&last_text, &q->text);
		last_meta_len = q->meta_len;
		oidcpy(&last_blob, &blobs[queued - 1].id);
		last_queued = 0;
	}
	for (i = 0; i < queued; i++) {
		release_if_large(&queue[i].text);
		release_if_large(&queue[i].git_delta);
	}
	release_if_large(&base_text);
	queued = 0;
	queued_bytes = 0;
}

void import_file(struct id_verify *verify, struct rev_chunk *chunk,
		 struct stream *cg)
{
	const struct strbuf *prev;
	uint64_t base_len, len;

	if (hg_oideq(&chunk->node, &hg_empty_file_oid) ||
	    hg2git(&chunk->node) || is_queued(&chunk->node)) {
		stream_skip(cg, chunk->unread);
		chunk->unread = 0;
		return;
	}
	if (!hg_oideq(&chunk->delta_base, &last_node))
		load_file(&chunk->delta_base, 1);
	prev = last_queued ? &queue[queued - 1].text : &last_text;
	base_len = last_streamed ? last_len : prev->len;
	if (chunk->unread) {
		const unsigned char *h = (const unsigned char *)chunk->delta;
		uint32_t start = get_be32(h), end = get_be32(h + 4);

		if (get_be32(h + 8) == chunk->unread && start <= end &&
		    end <= base_len) {
			import_large(verify, chunk, base_len,
				     base_len - (end - start) + chunk->unread,
				     cg);
			chunk->unread = 0;
			return;
		}
		rev_chunk_read_rest(cg, chunk);
	}
	if (hg_delta_result_len(chunk->delta, chunk->delta_len, base_len,
				&len))
		die("malformed file revision %s in the changegroup (corrupt "
		    "data)", hg_oid_to_hex(&chunk->node));
	if (last_streamed || len >= file_big_text_min()) {
		import_large(verify, chunk, base_len, len, NULL);
		return;
	}
	strbuf_reset(&text);
	if (hg_delta_apply(prev->buf, prev->len, chunk->delta,
			   chunk->delta_len, &text))
		die("malformed file revision %s in the changegroup (corrupt "
		    "data)", hg_oid_to_hex(&chunk->node));
	if (check_enabled(CHECK_FILES))
		verify_id_async_buf(verify, "file revision", &chunk->node,
				    &chunk->p1, &chunk->p2, text.buf, text.len);
	queue_file(chunk, prev);
	verify_id_buf_done(verify);
	if (queued == QUEUE_MAX || queued_bytes >= QUEUE_BYTES)
		file_flush();
}

void file_text(const struct hg_oid *node, struct strbuf *out)
{
	file_flush();
	if (!hg_oideq(node, &last_node) || last_streamed)
		load_file(node, 0);
	strbuf_reset(out);
	strbuf_addbuf(out, &last_text);
}
