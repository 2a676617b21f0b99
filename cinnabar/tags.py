"""Mercurial tags, as Mercurial computes them, from the `.hgtags` files
of the heads the metadata knows.

A `.hgtags` file is a text file of lines `<40 hex digits> <tag name>`
(one space between them; the name runs to the end of the line and is
stripped of surrounding white space). Empty lines are skipped; a line
without a space or whose node is not 40 hex digits is skipped with a
warning. Within one file, a later line for a name wins over the earlier
ones, which become that tag's history. A tag whose winning node is the
null id is a removed tag.

Across heads (Mercurial reads the topological heads, oldest first; each
distinct `.hgtags` file once), a head read later wins over what was read
before, except when the tag's node there appears in the history of what
was read before and that earlier node is not in the later file's history
(or has the longer history): the earlier value then supersedes it. The
histories are merged either way. Removed tags are dropped at the end.

`git_tags(helper)` gives {tag name: GitId} for the tags whose targets
the metadata knows and whose names are valid git ref names
(`refs/tags/<name>`); what it leaves out is told in warnings.
"""

import collections
import re

from cinnabar import git, topological
from cinnabar.errors import Abort
from cinnabar.ids import GitId, HgId
from cinnabar.record import record
from cinnabar.refname import refname_problem, shown

_NODE = re.compile(r'[0-9a-fA-F]{40}\Z')

Tag = record('Tag', 'node history')
Tag.__doc__ = """A tag as one file or a merge of files sees it: `node`,
the HgId it points to (NULL_HG when removed) and `history`, the HgIds it
pointed to before, oldest first."""

TagSet = record('TagSet', 'tags warnings')


def parse_hgtags(text, where='.hgtags'):
    """{name: Tag} from the text of one `.hgtags` file, and warnings."""
    nodes = collections.OrderedDict()
    warnings = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        node, space, name = line.partition(' ')
        name = name.strip()
        if not space or not name:
            warnings.append('%s, line %d: cannot parse %r'
                            % (where, number, line))
            continue
        if not _NODE.match(node):
            warnings.append('%s, line %d: %r is not a changeset id'
                            % (where, number, node))
            continue
        nodes.setdefault(name, []).append(HgId(node.lower()))
    return ({name: Tag(ids[-1], ids[:-1]) for name, ids in nodes.items()},
            warnings)


def merge_tags(earlier, later):
    """The tags after reading `later` (one head's file) over `earlier`
    (what the heads read before gave); neither is modified."""
    merged = dict(earlier)
    for name, tag in later.items():
        before = earlier.get(name)
        if before is None:
            merged[name] = Tag(tag.node, list(tag.history))
            continue
        node = tag.node
        if (before.node != tag.node and tag.node in before.history
                and (before.node not in tag.history
                     or len(before.history) > len(tag.history))):
            node = before.node
        history = list(tag.history)
        history += [n for n in before.history if n not in history]
        merged[name] = Tag(node, history)
    return merged


def live_tags(tags):
    """{name: HgId} without the removed tags."""
    return {name: tag.node for name, tag in tags.items()
            if not tag.node.is_null}


def hgtags_files(commits):
    """[(commit, blob id)] of the `.hgtags` of each commit that has one,
    each distinct file once (at its first commit), in order, by one `git
    cat-file --batch-check`: the tags of `commits` are those of these
    files' texts alone, in this order."""
    if not commits:
        return []
    query = ''.join('%s:.hgtags\n' % c for c in commits).encode('ascii')
    out = git.run(['cat-file', '--batch-check=%(objectname) %(objecttype)'],
                  input=query).stdout.decode('ascii').splitlines()
    seen = set()
    files = []
    for commit, line in zip(commits, out):
        blob, _, kind = line.partition(' ')
        if kind != 'blob' or blob in seen:
            continue
        seen.add(blob)
        files.append((commit, GitId(blob)))
    return files


def read_hgtags_files(files):
    """[(commit, text)] of the files [(commit, blob id)] of hgtags_files,
    read by one git process."""
    return [(commit, found[2].decode('utf-8', 'surrogateescape'))
            for (commit, _), found in zip(files, git.read_objects(
                [blob for _, blob in files])) if found]


def read_hgtags_blobs(commits):
    """[(commit, text)] of the `.hgtags` of each commit that has one,
    each distinct file once (at its first commit), in order."""
    return read_hgtags_files(hgtags_files(commits))


def _tags_of_files(files):
    """TagSet of {name: HgId} of the `.hgtags` files of hgtags_files."""
    tags = {}
    warnings = []
    for commit, text in read_hgtags_files(files):
        file_tags, file_warnings = parse_hgtags(
            text, '.hgtags of %s' % commit)
        warnings += file_warnings
        tags = merge_tags(tags, file_tags)
    return TagSet(live_tags(tags), warnings)


def _head_commits(helper):
    return [h.git_id for h in helper.heads() if h.git_id is not None]


def _tags_of(heads):
    """TagSet of {name: HgId} of the tags of the topological `heads`."""
    return _tags_of_files(hgtags_files(heads))


def hg_tags(helper):
    """TagSet of {name: HgId} of the tags of the heads in the metadata
    (removed tags left out)."""
    return _tags_of(topological.compute(_head_commits(helper)))


HeadsAndTags = record('HeadsAndTags', 'heads topological hgtags helper')
HeadsAndTags.__doc__ = """What `before_import` keeps: the metadata's heads
(GitIds), the topological ones among them, their `.hgtags` files (see
hgtags_files; both None when they could not be read), and the helper they
were asked."""


def before_import(helper, git_dir=None):
    """HeadsAndTags of the metadata as it is (before a fetch imports)."""
    heads = _head_commits(helper)
    try:
        tops = topological.of(heads, git_dir)
        return HeadsAndTags(heads, tops, hgtags_files(tops), helper)
    except Abort:
        return HeadsAndTags(heads, None, None, helper)


def topological_heads_after(helper, before, git_dir=None):
    """The topological heads of the metadata of `helper` after an import
    that only added changesets, knowing HeadsAndTags `before` it: from the
    heads that the changesets the helper imported have for parent, when
    `before` was asked the same helper, without walking the history."""
    heads = _head_commits(helper)
    if before.topological is None or before.helper is not helper:
        return topological.of(heads, git_dir)
    tops = topological.after_import(
        before.heads, before.topological, heads,
        [h.git_id for h in helper.heads_with_children()
         if h.git_id is not None])
    if git_dir is not None:
        topological.write_cache(git_dir, heads, tops)
    return tops


def changed_by_import(helper, before, git_dir=None):
    """Whether the tags differ from HeadsAndTags `before` (the hint a
    fetch gives: see UPDATE_HINT); tags that cannot be read are None.
    The same `.hgtags` files in the same order give the same tags: they
    are read only when the files differ (most fetches add no tag, and
    reading those of nginx's 22 heads took 60 ms, twice)."""
    try:
        after = hgtags_files(topological_heads_after(helper, before,
                                                     git_dir))
    except Abort:
        after = None

    def blobs(files):
        return None if files is None else [blob for _, blob in files]

    if after is not None and blobs(after) == blobs(before.hgtags):
        return False

    def tags_of(files):
        try:
            return None if files is None else _tags_of_files(files).tags
        except Abort:
            return None

    return tags_of(after) != tags_of(before.hgtags)


# How Mercurial tags are made, said the same way wherever git tags are
# refused (push, hg::tags:) and in `git cinnabar tag`'s help.
MAKE_TAGS = ('a Mercurial tag is a commit to .hgtags: make it with '
             '`git cinnabar tag <name> [<commit>]` (once `git config '
             'cinnabar.experiments tag` is set) or `hg tag`, then push '
             'that commit')
PUSH_REFUSAL = 'pushing git tags is not supported; ' + MAKE_TAGS

UPDATE_HINT = ('Run the following command to update tags:\n'
               '  git cinnabar fetch --tags')


def known_tags(helper):
    """TagSet of {tag name: (HgId, GitId)}: the tags whose changesets the
    metadata knows and whose names git accepts."""
    found = hg_tags(helper)
    warnings = list(found.warnings)
    names = sorted(found.tags)
    git_ids = helper.hg2git_many([found.tags[n] for n in names])
    result = {}
    for name, git_id in zip(names, git_ids):
        problem = refname_problem('refs/tags/' + name)
        if problem:
            warnings.append('ignoring tag %s: the name %s'
                            % (shown(name), problem))
        elif git_id.is_null:
            warnings.append('ignoring tag %s: changeset %s is not known '
                            '(fetch it first)' % (name, found.tags[name]))
        else:
            result[name] = (found.tags[name], GitId(git_id))
    return TagSet(result, warnings)


def git_tags(helper):
    """TagSet of {tag name: GitId} (see known_tags)."""
    found = known_tags(helper)
    return TagSet({name: git_id for name, (_, git_id) in found.tags.items()},
                  found.warnings)
