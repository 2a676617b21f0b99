/* Mercurial bundles: see bundle.h. */
#include "libgit.h"
#include "strbuf.h"
#include "url.h"
#include "string-list.h"
#include "bundle.h"
#include "changegroup.h"

static void wrap_compression(struct stream *s, const char *name, int bundle1)
{
	struct stream inner = *s;
	if (!strcmp(name, "UN"))
		return;
	if (!strcmp(name, "GZ"))
		stream_init_zlib(s, &inner);
	else if (!strcmp(name, "BZ"))
		stream_init_bz2(s, &inner, bundle1);
	else if (!strcmp(name, "ZS") && !bundle1)
		stream_init_zstd(s, &inner);
	else
		die("unsupported bundle compression '%s'", name);
}

static void read_stream_params(struct bundle *b)
{
	unsigned char hdr[4];
	uint32_t len;
	struct strbuf params = STRBUF_INIT;
	struct string_list list = STRING_LIST_INIT_DUP;
	const char *compression = "UN";
	char *compression_dup = NULL;
	size_t i;

	stream_read_exact(&b->input, hdr, 4);
	len = get_be32(hdr);
	if (len > BUNDLE2_MAX_STREAM_PARAMS)
		die("invalid bundle2 stream parameters (corrupt input)");
	strbuf_grow(&params, len);
	stream_read_exact(&b->input, params.buf, len);
	strbuf_setlen(&params, len);
	cinnabar_string_list_split(&list, params.buf, ' ');
	for (i = 0; i < list.nr; i++) {
		char *item = list.items[i].string, *eq, *name, *value = NULL;
		if (!*item)
			continue;
		eq = strchr(item, '=');
		if (eq) {
			*eq = '\0';
			value = url_decode(eq + 1);
		}
		name = url_decode(item);
		if (!strcmp(name, "Compression") && value) {
			free(compression_dup);
			compression = compression_dup = xstrdup(value);
		} else if (isupper(*name)) {
			die("unsupported mandatory bundle parameter '%s'",
			    name);
		}
		free(name);
		free(value);
	}
	wrap_compression(&b->input, compression, 0);
	free(compression_dup);
	string_list_clear(&list, 0);
	strbuf_release(&params);
}

void bundle_open(struct bundle *b, struct stream *raw, int cg_version)
{
	char magic[6];
	char name[3];

	memset(b, 0, sizeof(*b));
	b->input = *raw;
	if (cg_version) {
		b->version = cg_version == 1 ? 1 : -cg_version;
		return;
	}
	if (stream_try_read_exact(&b->input, magic, 4))
		die("not a Mercurial bundle (too short)");
	if (magic[0] == '\0') {
		struct stream inner = b->input;
		stream_init_prefixed(&b->input, &inner, magic, 4);
		b->version = 1;
	} else if (!memcmp(magic, "HG10", 4)) {
		stream_read_exact(&b->input, magic + 4, 2);
		b->version = 1;
		name[0] = magic[4];
		name[1] = magic[5];
		name[2] = '\0';
		wrap_compression(&b->input, name, 1);
	} else if (!memcmp(magic, "HG20", 4)) {
		b->version = 2;
		read_stream_params(b);
	} else {
		die("not a Mercurial bundle (unknown header '%.4s')", magic);
	}
}

/* bundle2 part payloads, read chunk by chunk. */
static size_t part_read(struct stream *s, void *buf, size_t len)
{
	struct bundle *b = s->data;
	size_t n;

	if (b->part_ended)
		return 0;
	while (!b->chunk_left) {
		unsigned char hdr[4];
		stream_read_exact(&b->input, hdr, 4);
		b->chunk_left = (int32_t)get_be32(hdr);
		if (b->chunk_left == 0) {
			b->part_ended = 1;
			return 0;
		}
		if (b->chunk_left < 0)
			die("out-of-band bundle2 parts are not supported");
	}
	if (len > (size_t)b->chunk_left)
		len = b->chunk_left;
	n = stream_read(&b->input, buf, len);
	if (!n)
		die("unexpected end of data in a bundle2 part (truncated input)");
	b->chunk_left -= n;
	return n;
}

static void skip_part(struct bundle *b)
{
	char buf[8192];
	while (stream_read(&b->part, buf, sizeof(buf)))
		;
	b->in_part = 0;
}

struct part_header {
	char type[256];
	struct string_list params;	/* "key" -> util: value */
};

static const char *part_param(struct part_header *h, const char *key)
{
	struct string_list_item *item = string_list_lookup(&h->params, key);
	return item ? item->util : NULL;
}

static int read_part_header(struct bundle *b, struct part_header *h)
{
	unsigned char hdr[4];
	uint32_t len;
	struct strbuf buf = STRBUF_INIT, key = STRBUF_INIT;
	const unsigned char *p, *end;
	unsigned count, i, type_len;
	unsigned char sizes[2 * 510];

	stream_read_exact(&b->input, hdr, 4);
	len = get_be32(hdr);
	if (!len)
		return 0;
	if (len > (1 << 20))
		die("invalid bundle2 part header (corrupt input)");
	strbuf_grow(&buf, len);
	stream_read_exact(&b->input, buf.buf, len);
	strbuf_setlen(&buf, len);
	p = (unsigned char *)buf.buf;
	end = p + len;
	if (end - p < 1 || end - p < 1 + p[0] + 6)
		goto corrupt;
	type_len = p[0];
	memcpy(h->type, p + 1, type_len);
	h->type[type_len] = '\0';
	p += 1 + type_len + 4;
	count = p[0] + p[1];
	p += 2;
	if (end - p < 2 * count)
		goto corrupt;
	memcpy(sizes, p, 2 * count);
	p += 2 * count;
	for (i = 0; i < count; i++) {
		struct string_list_item *item;
		if (end - p < sizes[2 * i] + sizes[2 * i + 1])
			goto corrupt;
		/* The list is a DUP one: it copies the key. */
		strbuf_reset(&key);
		strbuf_add(&key, p, sizes[2 * i]);
		item = string_list_insert(&h->params, key.buf);
		free(item->util);
		p += sizes[2 * i];
		item->util = xstrndup((const char *)p, sizes[2 * i + 1]);
		p += sizes[2 * i + 1];
	}
	strbuf_release(&key);
	strbuf_release(&buf);
	return 1;
corrupt:
	die("invalid bundle2 part header (corrupt input)");
}

static int is_mandatory(const char *type)
{
	for (; *type; type++)
		if (isupper(*type))
			return 1;
	return 0;
}

/*
 * Mercurial's abort when it has none of the changegroup versions we ask
 * for (01, 02): only version 03 carries tree manifests, and narrow or LFS
 * revision flags. A server allowing stream clones names `treemanifest` in
 * its capabilities, and cinnabar/hg/wire.py refuses it before this.
 */
#define NO_COMMON_CHANGEGROUP "no common changegroup version"

static void handle_error_part(struct part_header *h)
{
	const char *message = part_param(h, "message");
	const char *hint = part_param(h, "hint");
	if (message && !strcmp(message, NO_COMMON_CHANGEGROUP))
		die("the server sends no changegroup version git-cinnabar "
		    "reads (01, 02): its repository has tree manifests, or "
		    "is narrow or uses LFS, which git-cinnabar does not "
		    "support");
	if (!strcasecmp(h->type, "error:abort"))
		die("the server aborted: %s%s%s", message ? message : "",
		    hint ? " (hint: " : "", hint ? hint : "");
	die("the server reported an error (%s)%s%s", h->type,
	    message ? ": " : "", message ? message : "");
}

static void show_output_part(struct bundle *b)
{
	char buf[8192];
	size_t n;
	while ((n = stream_read(&b->part, buf, sizeof(buf))))
		fprintf(stderr, "remote: %.*s", (int)n, buf);
	b->in_part = 0;
}

static const char *const skippable_parts[] = {
	"phase-heads", "bookmarks", "listkeys", "obsmarkers", "pushkey",
	"hgtagsfnodes", "replycaps", NULL
};

static int is_skippable(const char *type)
{
	int i;
	if (!strncasecmp(type, "check:", 6) || !strncasecmp(type, "reply:", 6) ||
	    !strncasecmp(type, "cache:", 6))
		return 1;
	for (i = 0; skippable_parts[i]; i++)
		if (!strcasecmp(type, skippable_parts[i]))
			return 1;
	return !is_mandatory(type);
}

/* The changegroup part's nbchanges, 0 unless a plain decimal count. */
static uint64_t part_nbchanges(struct part_header *h)
{
	const char *v = part_param(h, "nbchanges");

	if (!v || !*v || strspn(v, "0123456789") != strlen(v) ||
	    strlen(v) > 18)
		return 0;
	return strtoumax(v, NULL, 10);
}

static int next_bundle2_changegroup(struct bundle *b, struct stream **cg,
				    int *cg_version)
{
	for (;;) {
		struct part_header h = { .params = STRING_LIST_INIT_DUP };
		const char *version;
		int ret = 0;

		if (b->in_part)
			skip_part(b);
		if (!read_part_header(b, &h)) {
			b->done = 1;
			return 0;
		}
		memset(&b->part, 0, sizeof(b->part));
		b->part.read = part_read;
		b->part.data = b;
		b->part.set_idle = stream_pass_idle;
		b->in_part = 1;
		b->chunk_left = 0;
		b->part_ended = 0;
		if (!strcasecmp(h.type, "changegroup")) {
			version = part_param(&h, "version");
			*cg_version = changegroup_version(version ? version
							  : "01");
			if (!*cg_version)
				die("unsupported changegroup version '%s'",
				    version);
			*cg = &b->part;
			b->nbchanges = part_nbchanges(&h);
			ret = 1;
		} else if (!strncasecmp(h.type, "error:", 6)) {
			handle_error_part(&h);
		} else if (!strcasecmp(h.type, "output")) {
			show_output_part(b);
		} else if (!is_skippable(h.type)) {
			die("unsupported mandatory bundle2 part '%s'", h.type);
		}
		string_list_clear(&h.params, 1);
		if (ret)
			return 1;
	}
}

int bundle_next_changegroup(struct bundle *b, struct stream **cg,
			    int *cg_version)
{
	if (b->done)
		return 0;
	if (b->version == 2)
		return next_bundle2_changegroup(b, cg, cg_version);
	b->done = 1;
	*cg = &b->input;
	*cg_version = b->version == 1 ? 1 : -b->version;
	return 1;
}

void bundle_check_end(struct bundle *b)
{
	char c;
	if (!b->done)
		BUG("bundle_check_end before the last changegroup");
	if (stream_read(&b->input, &c, 1))
		die("unexpected data after the end of the bundle (corrupt "
		    "input)");
}

void bundle_release(struct bundle *b)
{
	stream_release(&b->input);
}
