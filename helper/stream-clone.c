/* Stream clones: see stream-clone.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "hg-delta.h"
#include "revlog.h"
#include "stream-clone.h"

enum phase { CHANGELOG, MANIFESTS, FILES, DONE };

struct revlog_cg {
	int fd;				/* the `revlogs` file */
	uint64_t size;			/* its size */
	enum phase phase;
	struct revlog changelog;	/* kept: linkrevs name its nodes */
	struct revlog current;		/* the manifest or file being sent */
	int current_open;
	FILE *table;			/* the "table" file, read a line at a time */
	struct strbuf line;		/* its current line */
	/*
	 * The changegroup bytes made, read out before `payload`: the text
	 * or delta of the revision whose header ends `out`, served from
	 * where it was read rather than copied (a full manifest text of a
	 * wide repository is megabytes).
	 */
	struct strbuf out;
	size_t out_pos;
	const struct strbuf *payload;
	size_t payload_pos;
	struct strbuf text, delta;
};

static NORETURN void bad_table(void)
{
	die("malformed table of a stream clone's revlogs");
}

static uint64_t parse_number(const char **p, const char *end, char after)
{
	uint64_t n = 0;
	const char *q = *p;

	if (q == end || !isdigit(*q))
		bad_table();
	for (; q < end && isdigit(*q); q++) {
		if (n > (UINT64_MAX - 9) / 10)
			bad_table();
		n = n * 10 + (*q - '0');
	}
	if (q == end || *q != after)
		bad_table();
	*p = q + 1;
	return n;
}

static void parse_extent(struct revlog_cg *rc, const char **p,
			 const char *end, struct revlog_extent *x, char after)
{
	x->offset = parse_number(p, end, ' ');
	x->size = parse_number(p, end, after);
	if (x->offset > rc->size || x->size > rc->size - x->offset)
		bad_table();
}

/*
 * Open the revlog of the table's next line; `path` (when not NULL) gets
 * the path of a filelog's line. 0 at the end of the table.
 */
static int open_next(struct revlog_cg *rc, struct revlog *rl,
		     const char *name, struct strbuf *path)
{
	const char *p, *end, *eol;
	struct revlog_extent index, data;
	struct strbuf filelog = STRBUF_INIT;

	if (strbuf_getwholeline(&rc->line, rc->table, '\n') == EOF) {
		if (ferror(rc->table))
			die_errno("cannot read a stream clone's table");
		return 0;
	}
	p = rc->line.buf;
	end = p + rc->line.len;
	eol = end - 1;
	if (*eol != '\n')
		bad_table();
	parse_extent(rc, &p, eol + 1, &index, ' ');
	parse_extent(rc, &p, eol + 1, &data, path ? ' ' : '\n');
	if (path) {
		if (p >= eol || memchr(p, '\0', eol - p))
			bad_table();
		strbuf_reset(path);
		strbuf_add(path, p, eol - p);
		strbuf_addf(&filelog, "filelog of '%s'", path->buf);
		name = filelog.buf;
	} else if (p != eol + 1) {
		bad_table();
	}
	revlog_open(rl, name, rc->fd, &index, &data);
	strbuf_release(&filelog);
	return 1;
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

/*
 * What revision `rev` of `rl` is sent as, into rc->payload: a delta
 * against its delta parent, returned, or its full text (NULL). Every
 * changeset is sent whole, as its text is built anyway (revlog_text).
 */
static const struct hg_oid *set_payload(struct revlog_cg *rc,
					struct revlog *rl, uint32_t rev)
{
	if (rl == &rc->changelog) {
		revlog_text(rl, rev, &rc->text);
	} else if (revlog_is_full(rl, rev)) {
		revlog_chunk(rl, rev, &rc->text);
	} else {
		revlog_chunk(rl, rev, &rc->delta);
		rc->payload = &rc->delta;
		return rev_node(rl, revlog_delta_parent(rl, rev));
	}
	rc->payload = &rc->text;
	return NULL;
}

static void add_rev(struct revlog_cg *rc, struct revlog *rl, uint32_t rev)
{
	const struct revlog_entry *e;
	const struct hg_oid *base = set_payload(rc, rl, rev);
	unsigned char hunk[12];	/* a full text: one hunk replacing nothing */
	size_t hunk_len = 0;

	e = &rl->entries[rev];	/* revlog_text may have read more entries */
	if ((uint32_t)e->link >= rc->changelog.nr)
		die("revision %s of the %s names a changeset the changelog "
		    "lacks (corrupt stream)", hg_oid_to_hex(&e->node),
		    rl->name);
	if (!base) {
		base = rev_node(rl, -1);
		hg_delta_hunk_header(hunk, 0, 0, rc->payload->len);
		hunk_len = sizeof(hunk);
	}
	add_chunk_len(&rc->out, 5 * HG_RAWSZ + hunk_len + rc->payload->len);
	strbuf_add(&rc->out, e->node.hash, HG_RAWSZ);
	strbuf_add(&rc->out, rev_node(rl, e->p1)->hash, HG_RAWSZ);
	strbuf_add(&rc->out, rev_node(rl, e->p2)->hash, HG_RAWSZ);
	strbuf_add(&rc->out, base->hash, HG_RAWSZ);
	strbuf_add(&rc->out, rev_node(&rc->changelog, e->link)->hash,
		   HG_RAWSZ);
	strbuf_add(&rc->out, hunk, hunk_len);
	rc->payload_pos = 0;
}

/* Add the next revision of `rl` to the output; 0 at its end. */
static int add_next_rev(struct revlog_cg *rc, struct revlog *rl)
{
	if (!revlog_next(rl))
		return 0;
	add_rev(rc, rl, rl->next_rev - 1);
	return 1;
}

/* Buffers larger than this are not kept past the revlog they served. */
#define KEPT_BUFFER (1 << 20)

static void release_if_large(struct strbuf *sb)
{
	if (sb->alloc > KEPT_BUFFER)
		strbuf_release(sb);
}

static void close_current(struct revlog_cg *rc)
{
	revlog_release(&rc->current);
	rc->current_open = 0;
	/*
	 * The manifest's full texts (megabytes on a wide manifest) would
	 * otherwise stay allocated while its revisions are imported, and
	 * the files.
	 */
	release_if_large(&rc->text);
	release_if_large(&rc->delta);
}

/* Open the next filelog and add its path chunk; 0 when there is none. */
static int start_file(struct revlog_cg *rc)
{
	struct strbuf path = STRBUF_INIT;

	if (!open_next(rc, &rc->current, NULL, &path)) {
		strbuf_release(&path);
		return 0;
	}
	rc->current_open = 1;
	add_chunk_len(&rc->out, path.len);
	strbuf_addbuf(&rc->out, &path);
	strbuf_release(&path);
	return 1;
}

/*
 * Add the next chunk(s) of the changegroup to rc->out; a revision, if
 * any, comes last, its payload set aside (see struct revlog_cg).
 */
static void refill(struct revlog_cg *rc)
{
	switch (rc->phase) {
	case CHANGELOG:
		if (add_next_rev(rc, &rc->changelog))
			return;
		add_chunk_len(&rc->out, 0);
		if (!open_next(rc, &rc->current, "manifest revlog", NULL))
			bad_table();
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

	while (rc->out_pos == rc->out.len &&
	       (!rc->payload || rc->payload_pos == rc->payload->len)) {
		if (rc->phase == DONE)
			return 0;
		strbuf_reset(&rc->out);
		rc->out_pos = 0;
		rc->payload = NULL;
		refill(rc);
	}
	if (rc->out_pos < rc->out.len) {
		if (len > rc->out.len - rc->out_pos)
			len = rc->out.len - rc->out_pos;
		memcpy(buf, rc->out.buf + rc->out_pos, len);
		rc->out_pos += len;
	} else {
		if (len > rc->payload->len - rc->payload_pos)
			len = rc->payload->len - rc->payload_pos;
		memcpy(buf, rc->payload->buf + rc->payload_pos, len);
		rc->payload_pos += len;
	}
	return len;
}

static void revlog_cg_release(struct stream *s)
{
	struct revlog_cg *rc = s->data;
	if (rc->current_open)
		close_current(rc);
	revlog_release(&rc->changelog);
	close(rc->fd);
	fclose(rc->table);
	strbuf_release(&rc->line);
	strbuf_release(&rc->out);
	strbuf_release(&rc->text);
	strbuf_release(&rc->delta);
	free(rc);
}

void stream_init_revlogs(struct stream *s, const char *dir)
{
	struct revlog_cg *rc = xcalloc(1, sizeof(*rc));
	struct strbuf path = STRBUF_INIT;
	struct stat st;

	strbuf_init(&rc->line, 0);
	strbuf_init(&rc->out, 0);
	strbuf_init(&rc->text, 0);
	strbuf_init(&rc->delta, 0);
	strbuf_addf(&path, "%s/table", dir);
	rc->table = xfopen(path.buf, "r");
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/revlogs", dir);
	rc->fd = xopen(path.buf, O_RDONLY);
	if (fstat(rc->fd, &st))
		die_errno("cannot stat '%s'", path.buf);
	rc->size = st.st_size;
	strbuf_release(&path);
	if (!open_next(rc, &rc->changelog, "changelog", NULL))
		bad_table();
	memset(s, 0, sizeof(*s));
	s->read = revlog_cg_read;
	s->release = revlog_cg_release;
	s->data = rc;
}
