/* Stream clones: see stream-clone.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "hg-delta.h"
#include "revlog.h"
#include "stream-clone.h"

enum phase { CHANGELOG, MANIFESTS, FILES, DONE };

struct revlog_cg {
	struct strbuf dir;
	enum phase phase;
	struct revlog changelog;	/* kept: linkrevs name its nodes */
	struct revlog current;		/* the manifest or file being sent */
	int current_open;
	struct strbuf paths;		/* the "files" list */
	size_t next_path;		/* offset in paths */
	unsigned files;			/* filelogs sent */
	struct strbuf out;		/* the changegroup bytes made */
	size_t out_pos;
	struct strbuf text, delta;
};

static void open_revlog(struct revlog_cg *rc, struct revlog *rl,
			const char *name, const char *base)
{
	struct strbuf i = STRBUF_INIT, d = STRBUF_INIT;
	strbuf_addf(&i, "%s/%s.i", rc->dir.buf, base);
	strbuf_addf(&d, "%s/%s.d", rc->dir.buf, base);
	revlog_open(rl, name, i.buf, d.buf);
	strbuf_release(&i);
	strbuf_release(&d);
}

static void add_chunk_len(struct strbuf *out, size_t len)
{
	unsigned char hdr[4];
	if (len > (1U << 31) - 4)
		die("a revision too large for a changegroup");
	put_be32(hdr, len ? len + 4 : 0);
	strbuf_add(out, hdr, 4);
}

static const struct hg_oid *rev_node(const struct revlog *rl, int32_t rev)
{
	static const struct hg_oid null;
	return rev < 0 ? &null : &rl->entries[rev].node;
}

static void add_rev(struct revlog_cg *rc, struct revlog *rl, uint32_t rev)
{
	const struct revlog_entry *e = &rl->entries[rev];
	const struct hg_oid *base = rev_node(rl, -1);
	int is_changelog = rl == &rc->changelog;

	if ((uint32_t)e->link >= rc->changelog.nr)
		die("revision %s of the %s names a changeset the changelog "
		    "lacks (corrupt stream)", hg_oid_to_hex(&e->node),
		    rl->name);
	strbuf_reset(&rc->delta);
	if (revlog_is_full(rl, rev) ||
	    (is_changelog && revlog_delta_parent(rl, rev) != rev - 1)) {
		if (revlog_is_full(rl, rev))
			revlog_chunk(rl, rev, &rc->text);
		else
			revlog_text(rl, rev, &rc->text);
		hg_delta_add_hunk(&rc->delta, 0, 0, rc->text.buf,
				  rc->text.len);
	} else {
		base = rev_node(rl, revlog_delta_parent(rl, rev));
		revlog_chunk(rl, rev, &rc->delta);
	}
	add_chunk_len(&rc->out, 5 * HG_RAWSZ + rc->delta.len);
	strbuf_add(&rc->out, e->node.hash, HG_RAWSZ);
	strbuf_add(&rc->out, rev_node(rl, e->p1)->hash, HG_RAWSZ);
	strbuf_add(&rc->out, rev_node(rl, e->p2)->hash, HG_RAWSZ);
	strbuf_add(&rc->out, base->hash, HG_RAWSZ);
	strbuf_add(&rc->out, rev_node(&rc->changelog, e->link)->hash,
		   HG_RAWSZ);
	strbuf_addbuf(&rc->out, &rc->delta);
}

/* Add the next revision of `rl` to the output; 0 at its end. */
static int add_next_rev(struct revlog_cg *rc, struct revlog *rl)
{
	if (!revlog_next(rl))
		return 0;
	add_rev(rc, rl, rl->nr - 1);
	return 1;
}

static void close_current(struct revlog_cg *rc)
{
	revlog_release(&rc->current);
	rc->current_open = 0;
}

/* Open the next filelog and add its path chunk; 0 when there is none. */
static int start_file(struct revlog_cg *rc)
{
	const char *path = rc->paths.buf + rc->next_path;
	size_t len;
	struct strbuf name = STRBUF_INIT, base = STRBUF_INIT;

	if (rc->next_path >= rc->paths.len)
		return 0;
	len = strnlen(path, rc->paths.len - rc->next_path);
	if (!len || rc->next_path + len == rc->paths.len)
		die("malformed list of stream clone files");
	rc->next_path += len + 1;
	strbuf_addf(&name, "filelog of '%s'", path);
	strbuf_addf(&base, "data-%u", rc->files++);
	open_revlog(rc, &rc->current, name.buf, base.buf);
	rc->current_open = 1;
	add_chunk_len(&rc->out, len);
	strbuf_add(&rc->out, path, len);
	strbuf_release(&name);
	strbuf_release(&base);
	return 1;
}

/* Add the next chunk(s) of the changegroup to rc->out. */
static void refill(struct revlog_cg *rc)
{
	switch (rc->phase) {
	case CHANGELOG:
		if (add_next_rev(rc, &rc->changelog))
			return;
		add_chunk_len(&rc->out, 0);
		open_revlog(rc, &rc->current, "manifest revlog", "manifest");
		rc->current_open = 1;
		rc->phase = MANIFESTS;
		return;
	case MANIFESTS:
	case FILES:
		if (rc->current_open && add_next_rev(rc, &rc->current))
			return;
		if (rc->current_open) {
			close_current(rc);
			add_chunk_len(&rc->out, 0);
			if (rc->phase == MANIFESTS)
				rc->phase = FILES;
			return;
		}
		if (start_file(rc))
			return;
		add_chunk_len(&rc->out, 0);
		rc->phase = DONE;
		return;
	case DONE:
		return;
	}
}

static size_t revlog_cg_read(struct stream *s, void *buf, size_t len)
{
	struct revlog_cg *rc = s->data;

	while (rc->out_pos == rc->out.len) {
		if (rc->phase == DONE)
			return 0;
		strbuf_reset(&rc->out);
		rc->out_pos = 0;
		refill(rc);
	}
	if (len > rc->out.len - rc->out_pos)
		len = rc->out.len - rc->out_pos;
	memcpy(buf, rc->out.buf + rc->out_pos, len);
	rc->out_pos += len;
	return len;
}

static void revlog_cg_release(struct stream *s)
{
	struct revlog_cg *rc = s->data;
	if (rc->current_open)
		close_current(rc);
	revlog_release(&rc->changelog);
	strbuf_release(&rc->dir);
	strbuf_release(&rc->paths);
	strbuf_release(&rc->out);
	strbuf_release(&rc->text);
	strbuf_release(&rc->delta);
	free(rc);
}

void stream_init_revlogs(struct stream *s, const char *dir)
{
	struct revlog_cg *rc = xcalloc(1, sizeof(*rc));
	struct strbuf path = STRBUF_INIT;

	strbuf_init(&rc->dir, 0);
	strbuf_init(&rc->paths, 0);
	strbuf_init(&rc->out, 0);
	strbuf_init(&rc->text, 0);
	strbuf_init(&rc->delta, 0);
	strbuf_addstr(&rc->dir, dir);
	strbuf_addf(&path, "%s/files", dir);
	if (strbuf_read_file(&rc->paths, path.buf, 0) < 0)
		die_errno("cannot read '%s'", path.buf);
	strbuf_release(&path);
	open_revlog(rc, &rc->changelog, "changelog", "changelog");
	memset(s, 0, sizeof(*s));
	s->read = revlog_cg_read;
	s->release = revlog_cg_release;
	s->data = rc;
}
