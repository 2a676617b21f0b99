/*
 * Ancestry questions about git commits, answered with git's own
 * reachability code (commit-reach.c) in the helper's process.
 */
#include "libgit.h"
#include "ancestry.h"
#include "commit-reach.h"
#include "shallow.h"

void setup_history_walks(void)
{
	/* What `git --shallow-file ''` does: no shallow commits. */
	set_alternate_shallow_file(the_repository, "", 1);
	/* The helper reads the commits it converts itself (raw-commit.h). */
	save_commit_buffer = 0;
}

int is_ancestor(const struct object_id *ancestor,
		const struct object_id *descendant)
{
	struct commit *a, *d;
	int ret;

	a = lookup_commit_reference_gently(the_repository, ancestor, 1);
	d = lookup_commit_reference_gently(the_repository, descendant, 1);
	if (!a || !d)
		return -1;
	/* A commit is its own ancestor here too, as for git. */
	ret = repo_in_merge_bases(the_repository, a, d);
	return ret < 0 ? -1 : !!ret;
}
