/*
 * What a push's stages share (push-state.h): the positions of changesets,
 * manifests and file revisions in the batch, the batch's changesets, its
 * file revisions, the text of a new file revision, and the writing of a
 * revision into the changegroup with its progress.
 *
 * The bottom of the push files: it depends on none of them. Above it,
 * push-manifests.c; then push-convert.c (which reads manifests) and
 * push-files.c; push.c, on top, drives them all.
 */
#include "libgit.h"
#include "meter.h"
#include "string-list.h"
#include "changegroup.h"
#include "hg-diff.h"
#include "import.h"
#include "store.h"
#include "push-state.h"

void push_set_pos(kh_hg_pos_t *map, const struct hg_oid *key, size_t pos)
{
	int ret;
	khiter_t it = kh_put_hg_pos(map, *key, &ret);
	kh_value(map, it) = pos;
}

int push_get_pos(kh_hg_pos_t *map, const struct hg_oid *key, size_t *pos)
{
	khiter_t it = kh_get_hg_pos(map, *key);
	if (it == kh_end(map))
		return 0;
	*pos = kh_value(map, it);
	return 1;
}

struct cs_rev *push_changeset(struct push_state *st, const struct hg_oid *node)
{
	/* The commit being made is not indexed yet: it is the last one. */
	struct cs_rev *cs = st->nr ? &st->cs[st->nr - 1] : NULL;
	size_t i;
	if (cs && hg_oideq(&cs->node, node))
		return cs;
	return push_get_pos(st->by_node, node, &i) ? &st->cs[i] : NULL;
}

void push_changeset_text(struct push_state *st, const struct hg_oid *node,
			 struct strbuf *out)
{
	struct cs_rev *cs = push_changeset(st, node);
	if (cs) {
		strbuf_reset(out);
		strbuf_addbuf(out, &cs->text);
	} else {
		changeset_text(node, out);
	}
}

static const char *intern_path(struct push_state *st, const char *p, size_t len)
{
	char *s = xmemdupz(p, len);
	struct string_list_item *item = string_list_insert(&st->paths, s);
	free(s);
	return item->string;
}

struct file_rev *push_add_file_rev(struct push_state *st, const char *path,
				   size_t len, const struct hg_oid *node,
				   const struct hg_oid *link)
{
	struct file_rev *f;
	ALLOC_GROW(st->files, st->files_nr + 1, st->files_alloc);
	f = &st->files[st->files_nr];
	memset(f, 0, sizeof(*f));
	f->path = intern_path(st, path, len);
	hg_oidcpy(&f->node, node);
	hg_oidcpy(&f->link, link);
	f->order = st->files_nr++;
	return f;
}

static void count_written(struct push_state *st)
{
	meter_update(st->progress, ++st->written);
}

void push_write_delta(struct push_state *st, FILE *f,
		      struct rev_chunk *chunk, const struct strbuf *delta)
{
	chunk->delta = delta->buf;
	chunk->delta_len = delta->len;
	write_rev_chunk(f, st->version, chunk);
	count_written(st);
}

void push_write_rev(struct push_state *st, FILE *f, struct rev_chunk *chunk,
		    const char *base, size_t base_len,
		    const char *text, size_t len)
{
	static struct strbuf delta = STRBUF_INIT;

	strbuf_reset(&delta);
	hg_diff(base, base_len, text, len, &delta);
	push_write_delta(st, f, chunk, &delta);
}

/*
 * The text of a new file revision: the blob's content, framed by "\1\n"
 * with the metadata `meta` before it when there is some, or when the
 * content itself starts with "\1\n" (then with empty metadata). Return
 * whether it is framed.
 */
int push_new_file_text(struct strbuf *out, const struct object_id *blob,
			 const char *meta)
{
	enum object_type type;
	unsigned long size;
	char *content = store_read_object(blob, &type, &size);
	int framed;

	if (!content || type != OBJ_BLOB)
		die("missing blob %s", oid_to_hex(blob));
	framed = meta || (size >= 2 && !memcmp(content, "\1\n", 2));
	strbuf_reset(out);
	if (framed) {
		strbuf_addstr(out, "\1\n");
		strbuf_addstr(out, meta ? meta : "");
		strbuf_addstr(out, "\1\n");
	}
	strbuf_add(out, content, size);
	free(content);
	return framed;
}
