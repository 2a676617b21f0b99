/* Git commits as they are stored: see raw-commit.h. */
#include "libgit.h"
#include "store.h"
#include "raw-commit.h"

static int header(const char *line, const char *eol, const char *name,
		  struct slice *value)
{
	size_t n = strlen(name);
	if ((size_t)(eol - line) <= n || memcmp(line, name, n) ||
	    line[n] != ' ')
		return 0;
	value->buf = line + n + 1;
	value->len = eol - value->buf;
	return 1;
}

/*
 * The header block as git's parse_commit_buffer() reads it: the first
 * line must be `tree`, and the parents are the `parent` lines directly
 * after it, each well formed. A `parent` (or `tree`) line anywhere else
 * is not a parent for git (`git fsck` accepts such a commit and git sees
 * one parent fewer): here it is an other header, as any unknown one.
 */
static int parse_tree_and_parents(struct raw_commit *c, const char **pos,
				  const char *end)
{
	const char *line = *pos, *eol;
	struct slice v;

	eol = memchr(line, '\n', end - line);
	if (!eol || !header(line, eol, "tree", &v) ||
	    v.len != GIT_SHA1_HEXSZ || get_oid_hex(v.buf, &c->tree))
		return -1;
	for (line = eol + 1; line < end; line = eol + 1) {
		struct object_id parent;

		eol = memchr(line, '\n', end - line);
		if (!eol || !header(line, eol, "parent", &v))
			break;
		if (v.len != GIT_SHA1_HEXSZ || get_oid_hex(v.buf, &parent))
			return -1;
		oid_array_append(&c->parents, &parent);
	}
	*pos = line;
	return 0;
}

int raw_commit_parse(struct raw_commit *c, const char *buf, size_t len)
{
	const char *end = buf + len, *line = buf, *eol;
	struct slice v;

	memset(c, 0, sizeof(*c));
	if (parse_tree_and_parents(c, &line, end))
		goto bad;
	while (line < end && *line != '\n') {
		eol = memchr(line, '\n', end - line);
		if (!eol)
			goto bad;
		if (!c->author.buf && header(line, eol, "author", &v))
			c->author = v;
		else if (!c->committer.buf &&
			 header(line, eol, "committer", &v))
			c->committer = v;
		else if (!c->other_header)
			c->other_header = line;
		line = eol + 1;
	}
	/*
	 * As for git, no blank line after the headers is an empty message:
	 * the changeset heads of a metadata without changesets.
	 */
	c->body = line < end ? line + 1 : end;
	c->body_len = end - c->body;
	return 0;
bad:
	oid_array_clear(&c->parents);
	return -1;
}

int raw_commit_read(struct raw_commit *c, const struct object_id *oid)
{
	enum object_type type;
	char *buf;
	unsigned long len;

	memset(c, 0, sizeof(*c));
	/* Also objects of the pack being written, which git cannot see. */
	buf = oid ? store_read_object(oid, &type, &len) : NULL;
	if (!buf)
		return -1;
	if (type != OBJ_COMMIT || raw_commit_parse(c, buf, len)) {
		free(buf);
		return -1;
	}
	c->buf = buf;
	c->len = len;
	return 0;
}

void raw_commit_release(struct raw_commit *c)
{
	free(c->buf);
	c->buf = NULL;
	oid_array_clear(&c->parents);
}

void commit_tree_oid(const struct object_id *commit, struct object_id *tree)
{
	struct raw_commit c;
	if (raw_commit_read(&c, commit))
		die("commit %s is damaged", oid_to_hex(commit));
	oidcpy(tree, &c.tree);
	raw_commit_release(&c);
}
