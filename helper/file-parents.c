/* The parents of a stored file revision: see file-parents.h. */
#include "cache.h"
#include "manifest.h"
#include "metadata.h"
#include "raw-commit.h"
#include "store.h"
#include "tree-iter.h"
#include "file-parents.h"

int file_parents_among(const struct hg_oid *node, const struct strbuf *text,
		       const struct hg_oid *a, const struct hg_oid *b,
		       struct hg_oid *p1, struct hg_oid *p2)
{
	/* Both, one side (the other an ancestor), a copy (no parents). */
	const struct hg_oid *tries[][2] = {
		{ a, b }, { a, &hg_null_oid }, { b, &hg_null_oid },
		{ a, a }, { &hg_null_oid, &hg_null_oid },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		struct hg_oid h;
		hg_hash(tries[i][0], tries[i][1], text->buf, text->len, &h);
		if (hg_oideq(&h, node)) {
			hg_oidcpy(p1, tries[i][0]);
			hg_oidcpy(p2, tries[i][1]);
			return 0;
		}
	}
	return -1;
}

/*
 * The revision of `path` in manifest tree `tree` (each component under
 * "_" + its name), or the null id.
 */
static void path_in_tree(const struct object_id *tree, const char *path,
			 struct hg_oid *out)
{
	struct object_id cur;
	const char *end = path + strlen(path);

	hg_oidcpy(out, &hg_null_oid);
	oidcpy(&cur, tree);
	for (;;) {
		const char *slash = memchr(path, '/', end - path);
		size_t len = (slash ? slash : end) - path;
		struct tree_iter it;
		unsigned long size;
		void *buf = store_read_object_typed(&cur, OBJ_TREE, &size);
		int found = 0;

		tree_iter_init(&it, buf, size);
		while (tree_iter_next(&it)) {
			if (it.pathlen != len + 1 || it.path[0] != '_' ||
			    memcmp(it.path + 1, path, len) ||
			    !S_ISDIR(it.mode) != !slash)
				continue;
			oidcpy(&cur, &it.oid);
			found = 1;
			break;
		}
		free(buf);
		if (!found)
			return;
		if (!slash) {
			git_oid_to_hg(out, &cur);
			return;
		}
		path = slash + 1;
	}
}

/* A manifest commit's tree and parents (at most two). */
struct mcommit {
	struct object_id tree, parents[2];
	size_t nr;
};

static int read_mcommit(const struct object_id *oid, struct mcommit *m)
{
	struct raw_commit c;
	size_t i;

	if (raw_commit_read(&c, oid) || c.parents.nr > 2)
		return -1;
	oidcpy(&m->tree, &c.tree);
	m->nr = c.parents.nr;
	for (i = 0; i < m->nr; i++)
		oidcpy(&m->parents[i], &c.parents.oid[i]);
	raw_commit_release(&c);
	return 0;
}

int file_parents_and_manifests(const char *path, const struct hg_oid *node,
			       const struct strbuf *text,
			       const struct hg_oid *start, size_t max_steps,
			       struct hg_oid *p1, struct hg_oid *p2,
			       struct hg_oid where[2])
{
	const struct object_id *commit = hg2git(start);
	struct mcommit m;
	struct hg_oid here;
	size_t steps;

	if (!commit || read_mcommit(commit, &m))
		return -1;
	path_in_tree(&m.tree, path, &here);
	if (!hg_oideq(&here, node))
		return -1;
	for (steps = 1; !max_steps || steps <= max_steps; steps++) {
		struct hg_oid in[2];
		struct mcommit pm[2];
		size_t i, next = 2;

		for (i = 0; i < 2; i++) {
			hg_oidcpy(&in[i], &hg_null_oid);
			if (where)
				hg_oidcpy(&where[i], &hg_null_oid);
			if (i >= m.nr || read_mcommit(&m.parents[i], &pm[i]))
				continue;
			if (where && manifest_commit_node(&m.parents[i], &where[i]))
				return -1;
			path_in_tree(&pm[i].tree, path, &in[i]);
			if (next == 2 && hg_oideq(&in[i], node))
				next = i;
		}
		if (next == 2)
			return file_parents_among(node, text, &in[0], &in[1],
						  p1, p2) ? -2 : 0;
		m = pm[next];
	}
	return -1;
}
