/* Changesets kept in a temporary file: see changeset-spool.h. */
#include "libgit.h"
#include "changeset-spool.h"

void changeset_spool_init(struct changeset_spool *spool)
{
	spool->f = tmpfile();
	if (!spool->f)
		die_errno("cannot create a temporary file");
	spool->nr = 0;
}

static void write_all(FILE *f, const void *buf, size_t len)
{
	if (len && fwrite(buf, len, 1, f) != 1)
		die_errno("cannot write a temporary file");
}

void changeset_spool_add(struct changeset_spool *spool,
			 const struct spooled_changeset *cs)
{
	unsigned char len[4];
	if (cs->text.len > 0xffffffffu)
		die("changeset %s is too large", hg_oid_to_hex(&cs->node));
	put_be32(len, cs->text.len);
	write_all(spool->f, cs->node.hash, HG_RAWSZ);
	write_all(spool->f, cs->p1.hash, HG_RAWSZ);
	write_all(spool->f, cs->p2.hash, HG_RAWSZ);
	write_all(spool->f, len, 4);
	write_all(spool->f, cs->text.buf, cs->text.len);
	spool->nr++;
}

void changeset_spool_rewind(struct changeset_spool *spool)
{
	if (fflush(spool->f) || fseek(spool->f, 0, SEEK_SET))
		die_errno("cannot read a temporary file");
}

static void read_all(FILE *f, void *buf, size_t len)
{
	if (len && fread(buf, len, 1, f) != 1)
		die_errno("cannot read a temporary file");
}

int changeset_spool_next(struct changeset_spool *spool,
			 struct spooled_changeset *cs)
{
	unsigned char len[4];
	int c = getc(spool->f);
	if (c == EOF)
		return 0;
	cs->node.hash[0] = c;
	read_all(spool->f, cs->node.hash + 1, HG_RAWSZ - 1);
	read_all(spool->f, cs->p1.hash, HG_RAWSZ);
	read_all(spool->f, cs->p2.hash, HG_RAWSZ);
	read_all(spool->f, len, 4);
	strbuf_reset(&cs->text);
	strbuf_grow(&cs->text, get_be32(len));
	read_all(spool->f, cs->text.buf, get_be32(len));
	strbuf_setlen(&cs->text, get_be32(len));
	return 1;
}

void changeset_spool_release(struct changeset_spool *spool)
{
	if (spool->f)
		fclose(spool->f);
	spool->f = NULL;
	spool->nr = 0;
}
