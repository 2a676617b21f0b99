/* Mercurial changesets and their git commits: see changeset.h. */
#include "libgit.h"
#include "authorship.h"
#include "changeset.h"
#include "raw-commit.h"
#include "xdiff-interface.h"

static const char *memstr(const char *buf, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	const char *end = buf + len;
	for (; buf + n <= end; buf++) {
		buf = memchr(buf, needle[0], end - buf);
		if (!buf || buf + n > end)
			return NULL;
		if (!memcmp(buf, needle, n))
			return buf;
	}
	return NULL;
}

static struct slice slice_of(const char *start, const char *end)
{
	struct slice s = { start, end - start };
	return s;
}

int parse_changeset(struct hg_changeset *cs, const char *buf, size_t len)
{
	const char *sep = memstr(buf, len, "\n\n"), *p, *eol, *sp;
	const char *end;

	memset(cs, 0, sizeof(*cs));
	if (!sep)
		return -1;
	end = sep;
	cs->body = slice_of(sep + 2, buf + len);
	if (end - buf < HG_HEXSZ + 1 || buf[HG_HEXSZ] != '\n' ||
	    hg_oid_from_hex(buf, &cs->manifest))
		return -1;
	p = buf + HG_HEXSZ + 1;
	eol = memchr(p, '\n', end - p);
	if (!eol)
		return -1;
	cs->user = slice_of(p, eol);
	p = eol + 1;
	eol = memchr(p, '\n', end - p);
	if (!eol)
		eol = end;
	sp = memchr(p, ' ', eol - p);
	if (!sp)
		return -1;
	cs->timestamp = slice_of(p, sp);
	p = sp + 1;
	sp = memchr(p, ' ', eol - p);
	if (sp) {
		cs->utcoffset = slice_of(p, sp);
		cs->extra = slice_of(sp + 1, eol);
		cs->has_extra = 1;
	} else {
		cs->utcoffset = slice_of(p, eol);
	}
	if (eol < end) {
		cs->files = slice_of(eol + 1, end);
		cs->has_files = 1;
	}
	return 0;
}

/* Changeset extras, as a sorted list of key/value slices. */
struct extra_item {
	struct slice key, value;
};

struct extras {
	struct extra_item *items;
	size_t nr, alloc;
};

static int slice_cmp(struct slice a, struct slice b)
{
	int cmp = memcmp(a.buf, b.buf, a.len < b.len ? a.len : b.len);
	if (cmp)
		return cmp;
	return a.len < b.len ? -1 : a.len > b.len;
}

static int slice_eq_str(struct slice a, const char *s)
{
	return a.len == strlen(s) && !memcmp(a.buf, s, a.len);
}

static void extras_set(struct extras *e, struct slice key, struct slice value)
{
	size_t i;
	for (i = 0; i < e->nr; i++) {
		int cmp = slice_cmp(e->items[i].key, key);
		if (!cmp) {
			e->items[i].value = value;
			return;
		}
		if (cmp > 0)
			break;
	}
	ALLOC_GROW(e->items, e->nr + 1, e->alloc);
	MOVE_ARRAY(e->items + i + 1, e->items + i, e->nr - i);
	e->items[i].key = key;
	e->items[i].value = value;
	e->nr++;
}

static void extras_unset(struct extras *e, const char *key)
{
	size_t i;
	for (i = 0; i < e->nr; i++) {
		if (slice_eq_str(e->items[i].key, key)) {
			MOVE_ARRAY(e->items + i, e->items + i + 1,
				   e->nr - i - 1);
			e->nr--;
			return;
		}
	}
}

static const struct slice *extras_get(struct extras *e, const char *key)
{
	size_t i;
	for (i = 0; i < e->nr; i++)
		if (slice_eq_str(e->items[i].key, key))
			return &e->items[i].value;
	return NULL;
}

static int extras_parse(struct extras *e, struct slice raw)
{
	const char *p = raw.buf, *end = raw.buf + raw.len;
	memset(e, 0, sizeof(*e));
	if (!raw.len)
		return 0;
	for (;;) {
		const char *nul = memchr(p, '\0', end - p);
		const char *item_end = nul ? nul : end;
		const char *colon = memchr(p, ':', item_end - p);
		if (!colon)
			return -1;
		extras_set(e, slice_of(p, colon), slice_of(colon + 1, item_end));
		if (!nul)
			break;
		p = nul + 1;
	}
	return 0;
}

static void extras_dump(struct strbuf *out, struct extras *e)
{
	size_t i;
	for (i = 0; i < e->nr; i++) {
		if (i)
			strbuf_addch(out, '\0');
		strbuf_add(out, e->items[i].key.buf, e->items[i].key.len);
		strbuf_addch(out, ':');
		strbuf_add(out, e->items[i].value.buf, e->items[i].value.len);
	}
}

void changeset_commit(struct strbuf *out, const struct hg_changeset *cs,
		      const struct object_id *tree,
		      const struct object_id *parents, int nr_parents)
{
	struct strbuf author = STRBUF_INIT, committer = STRBUF_INIT;
	struct extras extras = { 0 };
	const struct slice *c = NULL;
	int i;

	git_ident_from_hg(&author, cs->user.buf, cs->user.len,
			  cs->timestamp.buf, cs->timestamp.len,
			  cs->utcoffset.buf, cs->utcoffset.len);
	if (cs->has_extra && !extras_parse(&extras, cs->extra))
		c = extras_get(&extras, "committer");
	/*
	 * A committer extra that is not an identity (crafted) leaves the
	 * author as committer; the note keeps the extra as it is.
	 */
	if (!c || git_ident_from_hg_committer(&committer, c->buf, c->len,
					      cs->timestamp.buf,
					      cs->timestamp.len,
					      cs->utcoffset.buf,
					      cs->utcoffset.len))
		strbuf_addbuf(&committer, &author);
	strbuf_addf(out, "tree %s\n", oid_to_hex(tree));
	for (i = 0; i < nr_parents; i++)
		strbuf_addf(out, "parent %s\n", oid_to_hex(&parents[i]));
	strbuf_addf(out, "author %s\ncommitter %s\n\n", author.buf,
		    committer.buf);
	strbuf_add(out, cs->body.buf, cs->body.len);
	free(extras.items);
	strbuf_release(&author);
	strbuf_release(&committer);
}

/* The parts of a raw git commit this file needs. */
struct commit_parts {
	struct slice author, committer, body;
};

static int parse_commit_parts(struct commit_parts *c, const char *buf,
			      size_t len)
{
	struct raw_commit rc;
	memset(c, 0, sizeof(*c));
	if (raw_commit_parse(&rc, buf, len))
		return -1;
	oid_array_clear(&rc.parents);
	c->author = rc.author;
	c->committer = rc.committer;
	c->body = slice_of(rc.body, rc.body + rc.body_len);
	return c->author.buf && c->committer.buf ? 0 : -1;
}

/* The fields of a git2hg note. */
struct note_fields {
	struct hg_oid changeset, manifest;
	struct slice author, extra, files, patch;
	int has_author, has_extra, has_files, has_patch;
	char files_sep;	/* between the files: '\0' in a note, '\n' in a text */
};

static int parse_note(struct note_fields *n, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	int have_changeset = 0;

	memset(n, 0, sizeof(*n));
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *sp;
		struct slice v;
		if (!eol)
			eol = end;
		sp = memchr(p, ' ', eol - p);
		if (!sp)
			return -1;
		v = slice_of(sp + 1, eol);
		if (sp - p == 9 && !memcmp(p, "changeset", 9)) {
			if (v.len != HG_HEXSZ ||
			    hg_oid_from_hex(v.buf, &n->changeset))
				return -1;
			have_changeset = 1;
		} else if (sp - p == 8 && !memcmp(p, "manifest", 8)) {
			if (v.len != HG_HEXSZ ||
			    hg_oid_from_hex(v.buf, &n->manifest))
				return -1;
		} else if (sp - p == 6 && !memcmp(p, "author", 6)) {
			n->author = v;
			n->has_author = 1;
		} else if (sp - p == 5 && !memcmp(p, "extra", 5)) {
			n->extra = v;
			n->has_extra = 1;
		} else if (sp - p == 5 && !memcmp(p, "files", 5)) {
			n->files = v;
			n->files_sep = '\0';
			n->has_files = 1;
		} else if (sp - p == 5 && !memcmp(p, "patch", 5)) {
			n->patch = v;
			n->has_patch = 1;
		} else {
			return -1;
		}
		p = eol + 1;
	}
	return have_changeset ? 0 : -1;
}

const char *changeset_extra_branch(const struct hg_changeset *cs,
				   size_t *len)
{
	const char *p = cs->extra.buf, *end = p + cs->extra.len;
	while (cs->has_extra && p < end) {
		const char *nul = memchr(p, '\0', end - p);
		const char *item_end = nul ? nul : end;
		if (item_end - p > 7 && !memcmp(p, "branch:", 7)) {
			*len = item_end - p - 7;
			return p + 7;
		}
		p = item_end + 1;
	}
	return NULL;
}

int note_changeset_id(const char *note, size_t len, struct hg_oid *node)
{
	if (len < 10 + HG_HEXSZ || memcmp(note, "changeset ", 10))
		return -1;
	return hg_oid_from_hex(note + 10, node);
}

int note_manifest_id(const char *note, size_t len, struct hg_oid *manifest)
{
	struct note_fields n;
	if (parse_note(&n, note, len))
		return -1;
	hg_oidcpy(manifest, &n.manifest);
	return 0;
}

static int hex_digit(char c)
{
	int v = hexval_table[(unsigned char)c];
	return v;
}

/* Apply a note's patch ("start,end,data\0...") to `text`. */
static int apply_patch(struct strbuf *text, struct slice patch)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = patch.buf, *end = patch.buf + patch.len;
	size_t last = 0;

	while (p < end) {
		const char *part_end = memchr(p, '\0', end - p);
		char *q;
		unsigned long start, stop;
		if (!part_end)
			part_end = end;
		start = strtoul(p, &q, 10);
		if (q >= part_end || *q != ',')
			goto bad;
		stop = strtoul(q + 1, &q, 10);
		if (q >= part_end || *q != ',' || stop < start ||
		    start < last || stop > text->len)
			goto bad;
		strbuf_add(&out, text->buf + last, start - last);
		for (q++; q < part_end; q++) {
			if (*q == '%' && part_end - q >= 3 &&
			    hex_digit(q[1]) >= 0 && hex_digit(q[2]) >= 0) {
				strbuf_addch(&out, hex_digit(q[1]) << 4 |
						   hex_digit(q[2]));
				q += 2;
			} else {
				strbuf_addch(&out, *q);
			}
		}
		last = stop;
		p = part_end + 1;
	}
	strbuf_add(&out, text->buf + last, text->len - last);
	strbuf_swap(&out, text);
	strbuf_release(&out);
	return 0;
bad:
	strbuf_release(&out);
	return -1;
}

static int sort_slices(const void *a, const void *b)
{
	return slice_cmp(*(const struct slice *)a, *(const struct slice *)b);
}

/* Append the file list (split by `sep`) sorted, one per line. */
static void add_files(struct strbuf *out, struct slice files, char sep)
{
	struct slice *list = NULL;
	size_t nr = 0, alloc = 0, i;
	const char *p = files.buf, *end = files.buf + files.len;
	for (;;) {
		const char *nul = memchr(p, sep, end - p);
		ALLOC_GROW(list, nr + 1, alloc);
		list[nr++] = slice_of(p, nul ? nul : end);
		if (!nul)
			break;
		p = nul + 1;
	}
	QSORT(list, nr, sort_slices);
	for (i = 0; i < nr; i++) {
		strbuf_addch(out, '\n');
		strbuf_add(out, list[i].buf, list[i].len);
	}
	free(list);
}

static const struct slice committer_key = { "committer", 9 };

/*
 * Rebuild the raw changeset from a commit and its note. With `trim_nuls`,
 * NUL bytes a conflict added to the message (git-cinnabar 0.6's way) are
 * dropped while the hash does not match; without, they stay, and the note
 * being made gets a patch that removes them, as git-cinnabar 0.7 writes it.
 */
static int rebuild(struct strbuf *out, struct commit_parts *commit,
		   struct note_fields *note, const struct hg_oid *p1,
		   const struct hg_oid *p2, int trim_nuls)
{
	struct hg_authorship a = HG_AUTHORSHIP_INIT;
	struct extras extras = { 0 };
	struct strbuf committer = STRBUF_INIT;
	int has_extra = note->has_extra, ret = -1;

	if (hg_authorship_from_git(&a, commit->author.buf, commit->author.len))
		goto out;
	if (has_extra && extras_parse(&extras, note->extra))
		goto out;
	if (!extras_get(&extras, "committer") &&
	    (commit->author.len != commit->committer.len ||
	     memcmp(commit->author.buf, commit->committer.buf,
		    commit->author.len))) {
		if (hg_committer_from_git(&committer, commit->committer.buf,
					  commit->committer.len))
			goto out;
		extras_set(&extras, committer_key,
			   slice_of(committer.buf, committer.buf + committer.len));
		has_extra = 1;
	}
	strbuf_reset(out);
	strbuf_addf(out, "%s\n", hg_oid_to_hex(&note->manifest));
	if (note->has_author)
		strbuf_add(out, note->author.buf, note->author.len);
	else
		strbuf_addbuf(out, &a.user);
	strbuf_addf(out, "\n%s %s", a.timestamp.buf, a.utcoffset.buf);
	if (has_extra) {
		strbuf_addch(out, ' ');
		extras_dump(out, &extras);
	}
	if (note->has_files)
		add_files(out, note->files, note->files_sep);
	strbuf_addstr(out, "\n\n");
	strbuf_add(out, commit->body.buf, commit->body.len);
	if (note->has_patch && apply_patch(out, note->patch))
		goto out;
	if (trim_nuls && !hg_oid_is_null(&note->changeset)) {
		while (out->len && out->buf[out->len - 1] == '\0') {
			struct hg_oid h;
			hg_hash(p1, p2, out->buf, out->len, &h);
			if (hg_oideq(&h, &note->changeset))
				break;
			strbuf_setlen(out, out->len - 1);
		}
	}
	ret = 0;
out:
	free(extras.items);
	strbuf_release(&committer);
	hg_authorship_release(&a);
	return ret;
}

int changeset_from_commit(struct strbuf *out, const char *commit,
			  size_t commit_len, const char *note, size_t note_len,
			  const struct hg_oid *p1, const struct hg_oid *p2)
{
	struct commit_parts c;
	struct note_fields n;
	if (parse_commit_parts(&c, commit, commit_len) ||
	    parse_note(&n, note, note_len))
		return -1;
	return rebuild(out, &c, &n, p1, p2, 1);
}

static void percent_encode(struct strbuf *out, const char *buf, size_t len)
{
	size_t i;
	for (i = 0; i < len; i++) {
		unsigned char c = buf[i];
		if (isalnum(c))
			strbuf_addch(out, c);
		else
			strbuf_addf(out, "%%%02X", c);
	}
}

/*
 * Start offsets of the lines of `buf` (with their terminators), as
 * 1-based line numbers index them: offs[1] is 0, offs[n + 1] the end of
 * line n; offs[0] is 0 too (a hunk inserting before the first line).
 */
static size_t *line_offsets(const char *buf, size_t len, size_t *nr)
{
	size_t *offs, alloc = 16, n = 2, i;

	ALLOC_ARRAY(offs, alloc);
	offs[0] = offs[1] = 0;
	for (i = 0; i < len; i++)
		if (buf[i] == '\n' || i + 1 == len) {
			ALLOC_GROW(offs, n + 1, alloc);
			offs[n++] = i + 1;
		}
	*nr = n;
	return offs;
}

struct patch_hunks {
	struct strbuf *out;
	const char *from, *to;
	size_t *from_offs, *to_offs, from_nr, to_nr;
	int hunks, failed;
};

/*
 * One hunk of the line diff, narrowed to the bytes that differ (its
 * common start and end left out), as "start,end,data", NUL-separated.
 */
static void add_hunk(void *data, long old_begin, long old_nr,
		     long new_begin, long new_nr,
		     const char *func UNUSED, long funclen UNUSED)
{
	struct patch_hunks *h = data;
	size_t start, end, dstart, dend, prefix = 0, suffix = 0;

	if (!old_nr)
		old_begin++;
	if (!new_nr)
		new_begin++;
	if (old_begin < 0 || new_begin < 0 ||
	    (size_t)(old_begin + old_nr) >= h->from_nr ||
	    (size_t)(new_begin + new_nr) >= h->to_nr) {
		h->failed = 1;
		return;
	}
	start = h->from_offs[old_begin];
	end = h->from_offs[old_begin + old_nr];
	dstart = h->to_offs[new_begin];
	dend = h->to_offs[new_begin + new_nr];
	while (start + prefix < end && dstart + prefix < dend &&
	       h->from[start + prefix] == h->to[dstart + prefix])
		prefix++;
	while (start + prefix + suffix < end &&
	       dstart + prefix + suffix < dend &&
	       h->from[end - 1 - suffix] == h->to[dend - 1 - suffix])
		suffix++;
	if (h->hunks++)
		strbuf_addch(h->out, '\0');
	strbuf_addf(h->out, "%"PRIuMAX",%"PRIuMAX",",
		    (uintmax_t)(start + prefix), (uintmax_t)(end - suffix));
	percent_encode(h->out, h->to + dstart + prefix,
		       dend - suffix - dstart - prefix);
}

/*
 * A patch turning `from` into `to`, as git-cinnabar 0.7 makes it: the
 * hunks of git's line diff (xdiff, no context), each narrowed to the
 * bytes that differ. Falls back to one edit between the common ends if
 * the diff fails.
 */
static void make_patch(struct strbuf *out, const char *from, size_t from_len,
		       const char *to, size_t to_len)
{
	struct patch_hunks h = { out, from, to };
	mmfile_t a = { (char *)from, (long)from_len };
	mmfile_t b = { (char *)to, (long)to_len };
	xpparam_t xpp = { 0 };
	xdemitconf_t xecfg = { 0 };
	size_t start = out->len;

	h.from_offs = line_offsets(from, from_len, &h.from_nr);
	h.to_offs = line_offsets(to, to_len, &h.to_nr);
	if (xdi_diff_outf(&a, &b, add_hunk, NULL, &h, &xpp, &xecfg) < 0 ||
	    h.failed) {
		size_t prefix = 0, suffix = 0;
		strbuf_setlen(out, start);
		while (prefix < from_len && prefix < to_len &&
		       from[prefix] == to[prefix])
			prefix++;
		while (suffix < from_len - prefix && suffix < to_len - prefix &&
		       from[from_len - 1 - suffix] == to[to_len - 1 - suffix])
			suffix++;
		strbuf_addf(out, "%"PRIuMAX",%"PRIuMAX",", (uintmax_t)prefix,
			    (uintmax_t)(from_len - suffix));
		percent_encode(out, to + prefix, to_len - prefix - suffix);
	}
	free(h.from_offs);
	free(h.to_offs);
}

static void note_add_field(struct strbuf *out, const char *key,
			   const char *buf, size_t len)
{
	strbuf_addf(out, "\n%s ", key);
	strbuf_add(out, buf, len);
}

/* A note's files field: the list, split by `sep`, written NUL-separated. */
static void note_add_files(struct strbuf *out, struct slice files, char sep)
{
	size_t i;

	note_add_field(out, "files", files.buf, files.len);
	if (sep != '\0')
		for (i = out->len - files.len; i < out->len; i++)
			if (out->buf[i] == sep)
				out->buf[i] = '\0';
}

void changeset_note(struct strbuf *out, const struct hg_oid *node,
		    const struct hg_oid *p1, const struct hg_oid *p2,
		    const char *raw, size_t raw_len,
		    const char *commit, size_t commit_len)
{
	struct hg_changeset cs;
	struct commit_parts c;
	struct note_fields n;
	struct hg_authorship a = HG_AUTHORSHIP_INIT;
	struct strbuf extra = STRBUF_INIT;
	struct strbuf committer = STRBUF_INIT, rebuilt = STRBUF_INIT;
	struct strbuf patch = STRBUF_INIT;

	if (parse_changeset(&cs, raw, raw_len) ||
	    parse_commit_parts(&c, commit, commit_len) ||
	    hg_authorship_from_git(&a, c.author.buf, c.author.len))
		die("changeset %s cannot be stored: its text or git commit "
		    "is malformed", hg_oid_to_hex(node));
	memset(&n, 0, sizeof(n));
	hg_oidcpy(&n.changeset, node);
	hg_oidcpy(&n.manifest, &cs.manifest);
	if (a.user.len != cs.user.len ||
	    memcmp(a.user.buf, cs.user.buf, cs.user.len)) {
		n.author = cs.user;
		n.has_author = 1;
	}
	if (cs.has_extra) {
		struct extras e;
		const struct slice *v;
		if (extras_parse(&e, cs.extra))
			die("changeset %s has malformed extra data",
			    hg_oid_to_hex(node));
		v = extras_get(&e, "committer");
		if (v && !hg_committer_from_git(&committer, c.committer.buf,
						c.committer.len) &&
		    v->len == committer.len &&
		    !memcmp(v->buf, committer.buf, v->len))
			extras_unset(&e, "committer");
		if (e.nr) {
			extras_dump(&extra, &e);
			n.extra.buf = extra.buf;
			n.extra.len = extra.len;
			n.has_extra = 1;
		}
		free(e.items);
	}
	if (cs.has_files) {
		/* The text's own list: no copy (12 MB at 300,000 files). */
		n.files = cs.files;
		n.files_sep = '\n';
		n.has_files = 1;
	}
	if (rebuild(&rebuilt, &c, &n, p1, p2, 0) ||
	    rebuilt.len != raw_len || memcmp(rebuilt.buf, raw, raw_len)) {
		make_patch(&patch, rebuilt.buf, rebuilt.len, raw, raw_len);
		n.has_patch = 1;
	}
	/*
	 * The list of files can be the size of the text (every file, in a
	 * first changeset: 12 MB at 300,000 files): the rebuilt text is
	 * let go of before the note is written, not held beside it.
	 */
	strbuf_release(&rebuilt);

	strbuf_addf(out, "changeset %s", hg_oid_to_hex(node));
	if (!hg_oid_is_null(&cs.manifest))
		strbuf_addf(out, "\nmanifest %s", hg_oid_to_hex(&cs.manifest));
	if (n.has_author)
		note_add_field(out, "author", n.author.buf, n.author.len);
	if (n.has_extra)
		note_add_field(out, "extra", n.extra.buf, n.extra.len);
	if (n.has_files)
		note_add_files(out, n.files, n.files_sep);
	if (n.has_patch)
		note_add_field(out, "patch", patch.buf, patch.len);

	hg_authorship_release(&a);
	strbuf_release(&extra);
	strbuf_release(&committer);
	strbuf_release(&patch);
}
