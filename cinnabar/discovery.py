"""Finding what to fetch, without walking any history.

1. The changesets git asked for are "wanted". Those the metadata already
   knows (the helper's hg2git is not null) need nothing.
2. If some are missing, the heads to ask the server for are the missing
   wanted ones; when they include every missing topological head of the
   server, the topological heads are asked for instead (Mercurial builds
   bundles much faster for them).
3. Our changeset heads come from the helper's `heads` (only those of the
   branches the server has, when it has any); one `known` round trip
   tells which ones the server has: they are the `common` nodes.

The bundle asked for may then hold changesets we already have (when our
heads are not on the server but some of their ancestors are); the helper
skips those.
"""

from cinnabar.record import record

Plan = record('Plan', 'heads common')
Plan.__doc__ = """What to ask getbundle for: `heads` and `common` HgIds."""


def _unique(items):
    return list(dict.fromkeys(items))


def missing(helper, hg_ids):
    """The HgIds (unique, in order) the metadata does not know."""
    hg_ids = _unique(hg_ids)
    return [h for h, g in zip(hg_ids, helper.hg2git_many(hg_ids))
            if g.is_null]


def heads_to_ask(wanted_missing, topological_missing):
    if topological_missing and set(wanted_missing) >= set(
            topological_missing):
        return topological_missing
    return wanted_missing


def local_heads(helper, branch_names):
    heads = helper.heads()
    if branch_names:
        heads = [h for h in heads if h.branch in branch_names]
    return _unique(h.hg_id for h in heads)


def plan_fetch(peer, helper, state, wanted):
    """A Plan to get the `wanted` HgIds from `peer` (whose RemoteState is
    `state`), or None when the metadata has them all."""
    wanted_missing = missing(helper, wanted)
    if not wanted_missing:
        return None
    heads = heads_to_ask(wanted_missing, missing(helper, state.heads))
    ours = local_heads(helper, {branch for branch, _ in state.branchmap})
    common = [h for h, known in zip(ours, peer.known(ours)) if known]
    return Plan(heads, common)
