"""Fetch Mercurial changesets by id, and the Mercurial tags.

usage: git cinnabar fetch [-v] [--tags] <remote-or-url> <hg id>...
       git cinnabar fetch --bundle <remote-or-url> <hg id>... > <file>
       git cinnabar fetch --tags [<remote-or-url>]

With changeset ids (full, abbreviated, or any name the server resolves,
such as a tag or a branch name): asks the server for those changesets,
even when no branch head or bookmark leads to them (an old release, a
changeset left out of a limited clone), imports them with their
ancestors. As with git-cinnabar, FETCH_HEAD names them
(`<commit>\t\t'hg/revs/<hg id>' of <url>`, one line each), so `git
checkout FETCH_HEAD` or `git log FETCH_HEAD` work, standard error shows
git's `From <url>` lines, and nothing is printed on standard output; no
other ref is changed besides the metadata.

`<remote-or-url>` is the name of a git remote whose URL is hg::... or a
Mercurial URL (with or without `hg::`). Ids the server does not know
are an error, and then nothing is imported.

    --bundle  import nothing: write to standard output what the server
              sends for those changesets (those the metadata lacks, and
              their ancestors the metadata lacks), as a bundle `hg
              unbundle` and `git cinnabar unbundle` read (uncompressed
              bundle2, or HG10UN from a server without bundle2), as
              git-cinnabar's `fetch --bundle` does; no ref changes
    -v, --verbose
              also print `<hg id> <git commit id>` for each, on standard
              error
    --tags    then make the Mercurial tags (from the .hgtags files of all
              the heads the metadata knows) git tags, under refs/tags/,
              as `git fetch --tags hg::tags: tag '*'` does. With a
              remote and no ids, first import all of that remote's heads.
"""

import os
import subprocess
import sys

from cinnabar import discovery, git, hg, metadata
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import Helper
from cinnabar.cmd.options import VERBOSE, say, split_options, usage_of
from cinnabar.hg.url import strip_prefix
from cinnabar.redact import redact_url
from cinnabar.resources import Resources

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ('--tags', '--bundle') + VERBOSE
TAGS_REFSPEC = '+refs/tags/*:refs/tags/*'


def parse_args(args):
    """(tags, bundle, remote or None, [ids], options given)."""
    given, words = split_options(args, OPTIONS, USAGE)
    tags, bundle = '--tags' in given, '--bundle' in given
    if tags and bundle:
        raise UsageError('--bundle and --tags do not go together', hint=USAGE)
    if not words and not tags:
        raise UsageError('nothing to fetch', hint=USAGE)
    if len(words) == 1 and not tags:
        raise UsageError('which changesets? give their ids after %s'
                         % words[0], hint=USAGE)
    return tags, bundle, (words[0] if words else None), words[1:], given


def remote_url(name):
    """The Mercurial URL (without `hg::`) of a git remote or URL."""
    if name.startswith(('hg::', 'hg://')):
        return strip_prefix(name)
    configured = git.config('remote.%s.url' % name)
    if configured is not None:
        if not configured.startswith(('hg::', 'hg://')):
            raise Abort('remote %s is not a Mercurial remote (its URL is %s)'
                        % (name, configured))
        return strip_prefix(configured)
    if '://' not in name and not os.path.exists(name):
        raise Abort('%s is neither a git remote nor a Mercurial repository'
                    % name, hint='give the name of a remote with an hg:: '
                                 'URL, or a Mercurial URL or path')
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
    with Resources() as resources:
        peer = hg.connect(url, helper)
        resources.callback(peer.close)
        state = peer.state()
        wanted = state.heads if ids is None else _resolve(peer, ids)
        plan = discovery.plan_fetch(peer, helper, state, wanted)
        if plan is not None:
            peer.getbundle(helper, plan.heads, plan.common)
        helper.finish()
    return wanted


def save_bundle(helper, url, ids, out):
    """Write what the server sends for `ids` (those the metadata lacks)
    to the binary file `out`; nothing is imported."""
    with Resources() as resources:
        peer = hg.connect(url, helper)
        resources.callback(peer.close)
        state = peer.state()
        plan = discovery.plan_fetch(peer, helper, state,
                                    _resolve(peer, ids))
        if plan is not None:
            peer.save_bundle(plan.heads, plan.common, out)
    out.flush()


def update_tags():
    """`git fetch hg::tags:` with the tags refspec; its status."""
    sys.stdout.flush()
    return subprocess.call(['git', 'fetch', '--no-write-fetch-head',
                            'hg::tags:', TAGS_REFSPEC])


def write_fetch_head(git_dir, url, pairs):
    """FETCH_HEAD as git-cinnabar writes it, for [(HgId, GitId)], and
    git's `From` lines on stderr; as git, without the URL's user and
    password."""
    url = redact_url(url)
    path = git.run(['rev-parse', '--git-path', 'FETCH_HEAD']).stdout
    path = os.path.join(os.getcwd(), path.decode('utf-8',
                                                 'surrogateescape').strip())
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        for hg_id, git_id in pairs:
            f.write("%s\t\t'hg/revs/%s' of %s\n" % (git_id, hg_id, url))
    width = max(len(git.run(['rev-parse', '--short', g]).stdout.strip())
                for _, g in pairs) * 2 + 3
    sys.stderr.write('From %s\n' % url)
    for hg_id, _ in pairs:
        sys.stderr.write(' * %-*s hg/revs/%s -> FETCH_HEAD\n'
                         % (width, 'branch', hg_id))
    sys.stderr.flush()


def fetch_head_url(remote):
    """The URL FETCH_HEAD names: a remote's configured URL, or the URL
    given."""
    if remote.startswith(('hg::', 'hg://')):
        return remote
    return git.config('remote.%s.url' % remote) or remote


def run(args):
    tags, bundle, remote, ids, given = parse_args(args)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    if bundle:
        if sys.stdout.isatty():
            raise Abort('--bundle writes a bundle to standard output',
                        hint='redirect it to a file: ... > file.hg')
        metadata.check_usable(writing=False)
        with Helper.start(git_dir) as helper:
            save_bundle(helper, remote_url(remote), ids, sys.stdout.buffer)
        return 0
    if remote is not None:
        url = remote_url(remote)
        metadata.check_usable()
        with Helper.start(git_dir) as helper:
            wanted = fetch_changesets(helper, url, ids or None)
            if ids:
                pairs = list(zip(wanted, helper.hg2git_many(wanted)))
                for hg_id, git_id in pairs:
                    if git_id.is_null:
                        raise Abort('the server did not send changeset %s'
                                    % hg_id)
                    say(given, '%s %s' % (hg_id, git_id))
                write_fetch_head(git_dir, fetch_head_url(remote), pairs)
    if tags:
        return update_tags()
    return 0
