/*
 * The file groups of a push's changegroup (push-state.h): the revisions
 * of st->files, sorted by path, each group as deltas (see
 * write_file_groups). A stored revision's parents, which the metadata
 * does not keep, are found as it is written (file-parents.c).
 *
 * Of the push files, depends on push-state.c only.
 */
#include "libgit.h"
#include "meter.h"
#include "changegroup.h"
#include "file.h"
#include "file-parents.h"
#include "hg-diff.h"
#include "metadata.h"
#include "notes-map.h"
#include "pack-delta-reuse.h"
#include "push-files.h"

/*
 * The parents of a stored revision of the push, among the revisions of
 * the same path in its changeset's parent manifests (file-parents.h).
 */
static void find_file_parents(struct push_state *st, struct file_rev *r,
			      const struct strbuf *text)
{
	if (file_parents_among(&r->node, text, &r->cand1, &r->cand2,
			       &r->p1, &r->p2))
		die("file revision %s of '%s' does not match its id, or its "
		    "parents cannot be found (nothing was sent); run `git "
		    "cinnabar fsck --full`", hg_oid_to_hex(&r->node), r->path);
	r->need_parents = 0;
	/* Checked: as a later revision's delta base, not again. */
	push_set_pos(st->checked_files, &r->node, 1);
}

/* The ids of a revision chunk for `r`, as a delta against `base`. */
static void rev_ids(struct rev_chunk *chunk, const struct file_rev *r,
		    const struct hg_oid *base)
{
	hg_oidcpy(&chunk->node, &r->node);
	hg_oidcpy(&chunk->p1, &r->p1);
	hg_oidcpy(&chunk->p2, &r->p2);
	hg_oidcpy(&chunk->delta_base, base);
	hg_oidcpy(&chunk->changeset, &r->link);
}

static int file_rev_cmp(const void *a, const void *b)
{
	const struct file_rev *x = a, *y = b;
	int cmp = strcmp(x->path, y->path);
	return cmp ? cmp : x->order < y->order ? -1 : x->order > y->order;
}

static void file_rev_text(const struct file_rev *r, struct strbuf *out)
{
	if (r->is_new)
		push_new_file_text(out, &r->blob, r->meta);
	else
		file_text(&r->node, out);
}

/* The blob of a revision whose text is exactly the blob's content. */
static int plain_blob(const struct file_rev *r, struct object_id *blob)
{
	struct object_id key;
	const struct object_id *b;

	if (r->is_new) {
		if (r->meta)
			return 0;
		oidcpy(blob, &r->blob);
		return 1;
	}
	if (hg_oideq(&r->node, &hg_empty_file_oid))
		return 0;
	hg_oid_to_git(&key, &r->node);
	if (notes_map_get(&metadata.files_meta, &key))
		return 0;
	b = hg2git(&r->node);
	if (!b)
		return 0;
	oidcpy(blob, b);
	return 1;
}

/*
 * The last revisions written of the current group: a revision whose blob
 * the pack stores as a delta against the blob of one of them is sent as
 * that delta, against that revision (version 01 deltas can only be
 * against the previous one).
 */
#define RECENT_REVS 16
struct recent_rev {
	struct hg_oid node;
	struct strbuf text;
	struct packed_git *pack;	/* NULL: not a blob of a pack */
	off_t offset;
};

static struct recent_rev *recent_base(struct recent_rev *recent,
				      size_t last, size_t nr, int version,
				      struct packed_git *pack, off_t offset)
{
	/* Not the oldest: its slot is the one being written. */
	size_t k, max = version == 1 ? 1 : RECENT_REVS - 1;
	for (k = 0; k < nr && k < max; k++) {
		struct recent_rev *c = &recent[(last + RECENT_REVS - k) %
					       RECENT_REVS];
		if (c->pack == pack && c->offset == offset)
			return c;
	}
	return NULL;
}

/*
 * Manifests looked back at most, for each stored revision used as a
 * delta base, to find the revision's parents and so check its text
 * (versions 02 and 03: past it, the revision is sent whole instead). The
 * search reads the commits of the manifests on the way once per push and
 * the trees of a few (file-parents.h).
 */
#define BASE_CHECK_STEPS 100000

/*
 * The bytes a delta against a stored revision must save over the whole
 * text for its base to be checked (versions 02 and 03; version 01 has
 * no choice of base): below, the revision is sent whole, unchecked base
 * and all. Searching the manifests' history for a stored revision's
 * parents reads trees, about 0.2 ms a revision when a push has many
 * (more for one alone), while these bytes take as long on a 20 Mbit/s
 * link; a small file's revisions are not worth it.
 */
#define WHOLE_SAVING 512

/*
 * The text of revision `node` of r's path, as the base of r's delta
 * against r's own text `text`: one of this push's, or a stored one
 * checked against its id (found in the manifest of r's changeset's first
 * or second parent). `delta`, empty on entry, gets r's delta against it
 * when that was made to decide whether the base is worth checking. Return
 * -1 when it is not worth checking, or cannot be checked within
 * BASE_CHECK_STEPS (versions 02 and 03); dies when it does not match its
 * id.
 */
static int base_file_text(struct push_state *st, const struct file_rev *r,
			  const struct hg_oid *node, const struct strbuf *text,
			  struct strbuf *out, struct strbuf *delta)
{
	size_t steps = st->version == 1 ? 0 : BASE_CHECK_STEPS, i;
	struct cs_rev *cs = push_changeset(st, &r->link);
	struct hg_oid p1, p2;
	int ret = -1;

	if (push_get_pos(st->new_files, node, &i)) {
		file_rev_text(&st->files[i], out);
		return 0;
	}
	if (steps && text->len < WHOLE_SAVING)
		return -1;
	file_text(node, out);
	if (push_get_pos(st->checked_files, node, &i))
		return 0;
	if (steps) {
		hg_diff(out->buf, out->len, text->buf, text->len, delta);
		if (delta->len + WHOLE_SAVING > text->len)
			return -1;
	}
	if (!cs)
		BUG("file revision %s of no changeset of the push",
		    hg_oid_to_hex(&r->node));
	for (i = 0; i < 2 && ret == -1; i++) {
		const struct hg_oid *start = i ? &cs->mp2 : &cs->mp1;
		if (!hg_oid_is_null(start))
			ret = file_parents_and_manifests(r->path, node, out,
							 start, steps, &p1,
							 &p2, NULL);
	}
	if (!ret)
		push_set_pos(st->checked_files, node, 1);
	if (!ret || (ret == -1 && steps))
		return ret;
	die("file revision %s of '%s' does not match its id, or its parents "
	    "cannot be found (nothing was sent); run `git cinnabar fsck "
	    "--full`", hg_oid_to_hex(node), r->path);
}

/* The recent revision `node`, or NULL. */
static struct recent_rev *recent_node(struct recent_rev *recent,
				      size_t last, size_t nr,
				      const struct hg_oid *node)
{
	size_t k;
	for (k = 0; k < nr && k < RECENT_REVS - 1; k++) {
		struct recent_rev *c = &recent[(last + RECENT_REVS - k) %
					       RECENT_REVS];
		if (hg_oideq(&c->node, node))
			return c;
	}
	return NULL;
}

/*
 * The groups of files [from, to) (whole paths) of the sorted files.
 *
 * In version 02 and 03, a revision is sent as a delta against its first
 * parent, as Mercurial itself sends them from a generaldelta repository
 * (the receiving server then stores the delta it gets rather than
 * computing another, which deltas against the previous revision of the
 * group would make it do); a revision without parent against the previous
 * one of the group, if any. The first parent is known to the server: sent
 * before in the group (the revisions of a path are in the order of their
 * changesets), or stored there. The pack's delta is used when it is
 * against that base.
 */
/* Whether st->files[i] repeats the one before (then not written again). */
static int is_repeated(const struct push_state *st, size_t i, size_t from)
{
	return i != from && !strcmp(st->files[i - 1].path, st->files[i].path) &&
	       hg_oideq(&st->files[i - 1].node, &st->files[i].node);
}

static size_t count_written_revs(const struct push_state *st, size_t from,
				 size_t to)
{
	size_t i, n = 0;

	for (i = from; i < to; i++)
		n += !is_repeated(st, i, from);
	return n;
}

static void write_file_groups(FILE *f, struct push_state *st,
			      size_t from, size_t to)
{
	int version = st->version;
	struct rev_chunk chunk = REV_CHUNK_INIT;
	struct recent_rev recent[RECENT_REVS];
	struct strbuf delta = STRBUF_INIT, git_delta = STRBUF_INIT;
	struct strbuf base_text = STRBUF_INIT;
	size_t i, last = 0, nr = 0;

	for (i = 0; i < RECENT_REVS; i++)
		strbuf_init(&recent[i].text, 0);
	for (i = from; i < to; i++) {
		struct file_rev *r = &st->files[i];
		int first = i == from || strcmp(st->files[i - 1].path, r->path);
		struct recent_rev *slot, *base = NULL;
		const struct hg_oid *base_node;
		struct object_id blob;
		off_t base_offset;
		int have_delta = 0;

		if (is_repeated(st, i, from))
			continue;
		if (first) {
			if (i != from)
				write_cg_end(f);
			write_cg_path(f, r->path);
			nr = 0;
		}
		slot = &recent[(last + 1) % RECENT_REVS];
		slot->pack = NULL;
		if (plain_blob(r, &blob))
			pack_entry_of(&blob, &slot->pack, &slot->offset);
		if (nr && slot->pack &&
		    !pack_delta_at(slot->pack, slot->offset, &git_delta,
				   &base_offset))
			base = recent_base(recent, last, nr, version,
					   slot->pack, base_offset);
		if (base && !git_delta_to_hg(base->text.buf, base->text.len,
					     git_delta.buf, git_delta.len,
					     &slot->text, &delta))
			have_delta = 1;
		else
			file_rev_text(r, &slot->text);
		if (r->need_parents)
			find_file_parents(st, r, &slot->text);

		/* The base: see above. Version 01's is implied: the
		 * previous revision, for the first one its first parent. */
		if (version == 1)
			base_node = nr ? &recent[last].node : &r->p1;
		else if (hg_oid_is_null(&r->p1))
			base_node = nr ? &recent[last].node : &hg_null_oid;
		else
			base_node = &r->p1;
		rev_ids(&chunk, r, base_node);
		if (have_delta && hg_oideq(&base->node, base_node)) {
			push_write_delta(st, f, &chunk, &delta);
		} else {
			const struct strbuf *text = &base_text;
			struct recent_rev *want =
				recent_node(recent, last, nr, base_node);
			strbuf_reset(&base_text);
			strbuf_reset(&delta);
			if (want) {
				text = &want->text;
			} else if (!hg_oid_is_null(base_node) &&
				   base_file_text(st, r, base_node, &slot->text,
						  &base_text, &delta)) {
				/* Not checked: the revision goes whole. */
				strbuf_reset(&base_text);
				strbuf_reset(&delta);
				base_node = &hg_null_oid;
				rev_ids(&chunk, r, base_node);
			}
			if (delta.len)
				push_write_delta(st, f, &chunk, &delta);
			else
				push_write_rev(st, f, &chunk, text->buf,
					       text->len, slot->text.buf,
					       slot->text.len);
		}
		hg_oidcpy(&slot->node, &r->node);
		last = (last + 1) % RECENT_REVS;
		if (nr < RECENT_REVS)
			nr++;
	}
	if (to > from)
		write_cg_end(f);
	for (i = 0; i < RECENT_REVS; i++)
		strbuf_release(&recent[i].text);
	strbuf_release(&delta);
	strbuf_release(&git_delta);
	strbuf_release(&base_text);
	rev_chunk_release(&chunk);
}

/*
 * Writing the file revisions (reading every text, finding parents,
 * diffing) is most of a big push's work. From 4096 of them
 * (CINNABAR_TEST_PUSH_SPLIT for tests), a forked copy of the helper
 * writes the groups of the second half of the paths to a temporary file
 * while this one writes the first half, then the copy's part is appended:
 * groups of different paths do not depend on each other. The copy only
 * reads objects and leaves with _exit (no exit handlers, default signal
 * handlers).
 */
static NORETURN void die_writing_files(const char *err, va_list params)
{
	fputs("fatal: ", stderr);
	vfprintf(stderr, err, params);
	fputc('\n', stderr);
	_exit(128);
}

static NORETURN void write_files_child(FILE *out, struct push_state *st,
				       size_t from)
{
	int signals[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(signals); i++)
		signal(signals[i], SIG_DFL);
	set_die_routine(die_writing_files);
	st->progress = NULL;
	write_file_groups(out, st, from, st->files_nr);
	_exit(fflush(out) || ferror(out) ? 1 : 0);
}

/* Where the second half of the paths starts, or files_nr to not split. */
static size_t files_split_point(struct push_state *st)
{
	const char *env = getenv("CINNABAR_TEST_PUSH_SPLIT");
	size_t min = env ? strtoul(env, NULL, 10) : 4096, mid;

	if (st->files_nr < 2 || st->files_nr < min)
		return st->files_nr;
	mid = st->files_nr / 2;
	while (mid < st->files_nr &&
	       !strcmp(st->files[mid - 1].path, st->files[mid].path))
		mid++;
	return mid;
}

static void append_child_part(FILE *f, FILE *part, pid_t child)
{
	char buf[65536];
	size_t n;
	int status;

	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die_errno("cannot wait for the process writing files");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("the process writing file revisions failed");
	rewind(part);
	while ((n = fread(buf, 1, sizeof(buf), part)) > 0)
		if (fwrite(buf, 1, n, f) != n)
			die_errno("cannot write the changegroup");
	if (ferror(part))
		die_errno("cannot read the file revisions written");
	fclose(part);
}

size_t push_sort_files(struct push_state *st)
{
	size_t i;

	QSORT(st->files, st->files_nr, file_rev_cmp);
	/* New revisions by id, now at their sorted positions. */
	for (i = 0; i < st->files_nr; i++)
		if (st->files[i].is_new)
			push_set_pos(st->new_files, &st->files[i].node, i);
	return count_written_revs(st, 0, st->files_nr);
}

void push_write_files(FILE *f, struct push_state *st)
{
	size_t mid;
	pid_t child = 0;
	FILE *part = NULL;

	mid = files_split_point(st);
	if (mid < st->files_nr) {
		fflush(f);
		fflush(stderr);
		part = tmpfile();
		if (part) {
			child = fork();
			if (!child)
				write_files_child(part, st, mid);
			if (child < 0) {
				child = 0;
				fclose(part);
			}
		}
	}
	write_file_groups(f, st, 0, child ? mid : st->files_nr);
	if (child) {
		append_child_part(f, part, child);
		/* The copy's revisions, which it could not count here. */
		st->written += count_written_revs(st, mid, st->files_nr);
		meter_update(st->progress, st->written);
	}
	write_cg_end(f);
	file_reset_cache();
}
