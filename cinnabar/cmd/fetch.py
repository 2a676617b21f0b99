"""Fetch Mercurial changesets by id, and the Mercurial tags.

usage: git cinnabar fetch [--tags] <remote-or-url> <hg id>...
       git cinnabar fetch --tags [<remote-or-url>]

With changeset ids (full, abbreviated, or any name the server resolves,
such as a tag or a branch name): asks the server for those changesets,
even when no branch head or bookmark leads to them (an old release, a
changeset left out of a limited clone), imports them with their
ancestors, and prints `<hg id> <git commit id>` for each. No ref is
changed besides the metadata; use the printed commit ids.

`<remote-or-url>` is the name of a git remote whose URL is hg::... or a
Mercurial URL (with or without `hg::`). Ids the server does not know
are an error, and then nothing is imported.

    --tags    then make the Mercurial tags (from the .hgtags files of all
              the heads the metadata knows) git tags, under refs/tags/,
              as `git fetch --tags hg::tags: tag '*'` does. With a
              remote and no ids, first import all of that remote's heads.
"""

import contextlib
import subprocess
import sys

from cinnabar import discovery, git, hg, metadata
from cinnabar.errors import Abort
from cinnabar.helper import Helper
from cinnabar.cmd.options import split_options
from cinnabar.hg.url import strip_prefix

USAGE = ('usage: git cinnabar fetch [--tags] <remote-or-url> <hg id>...\n'
         '       git cinnabar fetch --tags [<remote-or-url>]')
TAGS_REFSPEC = '+refs/tags/*:refs/tags/*'


def parse_args(args):
    """(tags, remote or None, [ids])."""
    given, words = split_options(args, ('--tags',), USAGE)
    tags = '--tags' in given
    if not words and not tags:
        raise Abort('nothing to fetch', hint=USAGE)
    if len(words) == 1 and not tags:
        raise Abort('which changesets? give their ids after %s' % words[0],
                    hint=USAGE)
    return tags, (words[0] if words else None), words[1:]


def remote_url(name):
    """The Mercurial URL (without `hg::`) of a git remote or URL."""
    if name.startswith(('hg::', 'hg://')):
        return strip_prefix(name)
    configured = git.config('remote.%s.url' % name)
    if configured is not None:
        if not configured.startswith('hg::'):
            raise Abort('remote %s is not a Mercurial remote (its URL is %s)'
                        % (name, configured))
        return strip_prefix(configured)
    return name


def _resolve(peer, ids):
    """The HgIds the server gives for `ids` (aborts on the first one it
    does not know)."""
    if peer.capable('lookup') is None:
        raise Abort('%s cannot look up changesets' % peer.description,
                    hint='a bundle file cannot be asked for changesets; '
                         'clone it instead')
    resolved = []
    for text in ids:
        try:
            resolved.append(peer.lookup(text))
        except Abort as error:
            raise Abort('unknown changeset %s at %s' % (text,
                                                        peer.description),
                        hint=error.message)
    return resolved


def fetch_changesets(helper, url, ids):
    """Import `ids` (or all the heads, when None) from the server at
    `url`; returns the HgIds fetched."""
    with contextlib.ExitStack() as resources:
        peer = hg.connect(url, helper)
        resources.callback(peer.close)
        state = peer.state()
        wanted = state.heads if ids is None else _resolve(peer, ids)
        plan = discovery.plan_fetch(peer, helper, state, wanted)
        if plan is not None:
            peer.getbundle(helper, plan.heads, plan.common)
        helper.finish()
    return wanted


def update_tags():
    """`git fetch hg::tags:` with the tags refspec; its status."""
    sys.stdout.flush()
    return subprocess.call(['git', 'fetch', '--no-write-fetch-head',
                            'hg::tags:', TAGS_REFSPEC])


def run(args):
    tags, remote, ids = parse_args(args)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    if remote is not None:
        url = remote_url(remote)
        metadata.check_usable()
        with Helper.start(git_dir) as helper:
            wanted = fetch_changesets(helper, url, ids or None)
            if ids:
                for hg_id, git_id in zip(wanted,
                                         helper.hg2git_many(wanted)):
                    if git_id.is_null:
                        raise Abort('the server did not send changeset %s'
                                    % hg_id)
                    print('%s %s' % (hg_id, git_id))
    if tags:
        return update_tags()
    return 0
