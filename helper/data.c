/* The raw Mercurial data of stored revisions: see data.h. */
#include "libgit.h"
#include "metadata.h"
#include "manifest.h"
#include "file.h"
#include "import.h"
#include "store.h"
#include "data.h"

/* KIND_ANY: abbreviations matched among the revisions of every kind. */
enum hg_kind { KIND_UNKNOWN, KIND_CHANGESET, KIND_MANIFEST, KIND_FILE,
	      KIND_ANY };

static const char *kind_names[] = {
	[KIND_CHANGESET] = "changeset",
	[KIND_MANIFEST] = "manifest",
	[KIND_FILE] = "file",
};

static enum hg_kind kind_from_name(const char *name)
{
	enum hg_kind k;
	for (k = KIND_CHANGESET; k <= KIND_FILE; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return KIND_UNKNOWN;
}

/* What the git object `git`, mapped from an hg id by hg2git, stores. */
static enum hg_kind kind_of(const struct object_id *git)
{
	enum object_type type;
	unsigned long size;
	void *buf;

	if (notes_map_get(&metadata.git2hg, git))
		return KIND_CHANGESET;
	buf = store_read_object(git, &type, &size);
	free(buf);
	if (type == OBJ_COMMIT)
		return KIND_MANIFEST;
	if (type == OBJ_BLOB)
		return KIND_FILE;
	return KIND_UNKNOWN;
}

/* An abbreviated hg id, and what matched it so far. */
struct hg_prefix {
	unsigned char nibbles[HG_HEXSZ];
	size_t len;
	enum hg_kind kind;
	size_t matches;
	struct hg_oid found;
	enum hg_kind other;	/* a kind it matched, when not `kind` */
	int implicit;		/* whether is_implicit() ids are found */
};

static int parse_prefix(struct hg_prefix *p, const char *hex, size_t min)
{
	memset(p, 0, sizeof(*p));
	for (p->len = 0; hex[p->len]; p->len++) {
		int v = hexval(hex[p->len]);
		if (v < 0 || p->len == HG_HEXSZ)
			return -1;
		p->nibbles[p->len] = v;
	}
	return p->len < min ? -1 : 0;
}

static int prefix_matches(const struct hg_prefix *p, const unsigned char *hash)
{
	size_t i;
	for (i = 0; i < p->len; i++) {
		unsigned v = i % 2 ? hash[i / 2] & 0xf : hash[i / 2] >> 4;
		if (v != p->nibbles[i])
			return 0;
	}
	return 1;
}

/* Whether `git`, an hg2git value, is of the kind `p` looks for. */
static int kind_matches(struct hg_prefix *p, const struct object_id *git)
{
	enum hg_kind kind = p->kind == KIND_ANY ? KIND_ANY : kind_of(git);

	if (kind != p->kind)
		p->other = kind;
	return kind == p->kind;
}

static void match_entry(const struct object_id *key,
			const struct object_id *value, void *data)
{
	struct hg_prefix *p = data;

	if (!prefix_matches(p, key->hash) || !kind_matches(p, value))
		return;
	if (!p->matches++)
		git_oid_to_hg(&p->found, key);
}

/*
 * The empty file revision without parents is not stored, and the null id
 * has empty data in every revlog; a full id naming either needs no lookup.
 */
static int is_implicit(const struct hg_prefix *p, enum hg_kind kind,
		       const struct hg_oid *oid)
{
	return p->len == HG_HEXSZ && (hg_oid_is_null(oid) ||
	       (kind == KIND_FILE && hg_oideq(oid, &hg_empty_file_oid)));
}

static void resolve(struct hg_prefix *p, const char *hex)
{
	struct hg_oid oid;
	const struct object_id *git;

	if (p->len < HG_HEXSZ) {
		notes_map_for_each(&metadata.hg2git, match_entry, p);
		return;
	}
	if (hg_oid_from_hex(hex, &oid))
		BUG("parse_prefix let a bad id through");
	if (p->implicit && is_implicit(p, p->kind, &oid)) {
		p->matches = 1;
		hg_oidcpy(&p->found, &oid);
		return;
	}
	git = hg2git(&oid);
	if (git && kind_matches(p, git)) {
		p->matches = 1;
		hg_oidcpy(&p->found, &oid);
	}
}

void hg_data_lookup(const char *kind_name, const char *hex,
		    struct hg_data *d)
{
	struct hg_prefix p;

	if (!kind_name || !hex || !kind_from_name(kind_name))
		die("data needs a kind (changeset, manifest or file) and an "
		    "hg id");
	if (parse_prefix(&p, hex, MIN_HG_PREFIX))
		die("data needs an hg id of %d to %d hex digits, not '%s'",
		    MIN_HG_PREFIX, HG_HEXSZ, hex);
	p.kind = kind_from_name(kind_name);
	p.implicit = 1;
	resolve(&p, hex);
	strbuf_reset(&d->text);
	d->matches = p.matches;
	if (p.matches > 1) {
		d->result = HG_DATA_AMBIGUOUS;
	} else if (!p.matches && p.other) {
		d->result = HG_DATA_OTHER;
		d->other = kind_names[p.other];
	} else if (!p.matches) {
		d->result = HG_DATA_UNKNOWN;
	} else {
		d->result = HG_DATA_FOUND;
		hg_oidcpy(&d->found, &p.found);
		/* The null id has the empty text. */
		if (hg_oid_is_null(&p.found))
			return;
		if (p.kind == KIND_CHANGESET)
			changeset_text(&p.found, &d->text);
		else if (p.kind == KIND_MANIFEST)
			manifest_text(&p.found, &d->text);
		else
			file_text(&p.found, &d->text);
	}
}

int hg_prefix_lookup(const char *hex, const char *kind_name,
		     struct hg_oid *found)
{
	struct hg_prefix p;

	if (parse_prefix(&p, hex, 1))
		return -1;
	p.kind = kind_name ? kind_from_name(kind_name) : KIND_ANY;
	if (p.kind == KIND_UNKNOWN)
		return -1;
	resolve(&p, hex);
	if (p.matches == 1)
		hg_oidcpy(found, &p.found);
	return p.matches > 2 ? 2 : p.matches;
}
