"""Import a Mercurial bundle into the metadata.

usage: git cinnabar unbundle <file or http(s) URL>
       git cinnabar unbundle --clonebundle <remote or URL>

Imports the changesets of a bundle (bundle1 or bundle2; none, gzip,
bzip2 or zstd; as `hg bundle` makes them) into the metadata, then prints
the counts of what was imported and, for each head of the bundle, its
Mercurial id, its git commit and its branch. No ref is changed: a later
`git fetch` from a server having these changesets downloads only what
the bundle lacked.

A bundle at an http(s) URL is downloaded through the helper (git's
`http.*` settings and credential helpers apply) to a file under the git
dir, resuming a download that was cut, then imported. With
--clonebundle, the bundle is the clone bundle the Mercurial server at
<remote or URL> advertises (see `cinnabar.clonebundle` in the README),
a remote being a git remote whose URL is `hg::...`.

A stream bundle (`hg bundle --type 'none-v2;stream=v2'`, or `packed1`
from `hg debugcreatestreamclonebundle`) holds a whole repository's
revlogs, as a stream clone does: it is imported as a stream clone bundle
is (every id checked), and only into a git repository without Mercurial
changesets yet, as Mercurial applies one only to an empty repository.
Its heads are then all the branch heads of that repository.

Nothing changes when the bundle is damaged, cut short or cannot be
downloaded.

    --clonebundle   use the clone bundle the server advertises
"""

import os

from cinnabar import clonebundles, git, graft, hg, metadata, streamclone
from cinnabar.cmd.options import split_options, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import Helper, ImportCounts
from cinnabar.hg import streamreader
from cinnabar.hg.url import parse_url, strip_prefix
from cinnabar.redact import say as _say

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ('--clonebundle',)


def parse_args(args):
    """(clonebundle, location) from the command line."""
    given, rest = split_options(args, OPTIONS, USAGE)
    clonebundle = '--clonebundle' in given
    if len(rest) != 1:
        raise UsageError('unbundle needs one bundle' if not rest
                         else 'unbundle takes one bundle', hint=USAGE)
    return clonebundle, rest[0]


def server_of(location):
    """(remote name or None, URL) for a git remote name or a URL."""
    if not location.startswith('hg::') and '/' not in location and (
            ':' not in location):
        url = git.config('remote.%s.url' % location)
        if url is not None:
            return location, strip_prefix(url)
    return None, strip_prefix(location)


def _clone_bundle_url(helper, location):
    remote, url = server_of(location)
    peer = hg.connect(url, helper)
    try:
        if not clonebundles.advertised(peer):
            raise Abort('the Mercurial server at %s does not advertise '
                        'clone bundles' % peer.description)
        bundle = clonebundles.bundle_url(peer, helper, remote, _say,
                                         explicit=True)
    finally:
        peer.close()
    if bundle is None:
        raise Abort('no clone bundle to use from %s (none that can be '
                    'read, or disabled by the setting cinnabar.clonebundle)'
                    % peer.description,
                    hint='`git cinnabar unbundle <URL>` takes a bundle '
                         'URL of your choosing')
    return bundle


def _import(helper, location, git_dir):
    """Import the bundle; returns (path, Download or None)."""
    scheme = parse_url(location).scheme
    if scheme in ('http', 'https'):
        _say('Downloading %s' % location)
        download = clonebundles.bundle_download(location, git_dir, _say)
        return download.fetch(helper), download
    path = parse_url(location).path
    if not os.path.isfile(path):
        raise Abort('no bundle file at %s' % location)
    return path, None


def _import_stream(helper, path, git_dir):
    """(heads, counts) of the stream bundle at `path`, imported into
    metadata without changesets."""
    if helper.heads():
        raise Abort('a stream bundle can only be imported into a repository '
                    'without Mercurial changesets',
                    hint='unbundle it in a new git repository, or make a '
                         'bundle of changesets (`hg bundle`) instead')
    counts = ImportCounts(*streamclone.import_bundle_file(helper, path,
                                                          git_dir))
    return helper.heads(), counts


def _import_bundle(helper, path, git_dir):
    """(heads, counts) of the bundle at `path`, imported (pending
    `finish`)."""
    # (An empty download leaves no file: the helper says so.)
    if os.path.exists(path) and streamreader.is_stream_bundle(path):
        return _import_stream(helper, path, git_dir)
    heads = helper.bundle_heads(path)
    return heads, helper.import_file(path)


def report(helper, counts, heads, git_ids):
    print('imported %d changesets, %d manifests, %d files'
          % (counts.changesets, counts.manifests, counts.files))
    for head, git_id in zip(heads, git_ids):
        print('%s %s %s' % (head.hg_id, git_id, head.branch))


def run(args):
    clonebundle, location = parse_args(args)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    metadata.check_usable()
    with Helper.start(git_dir) as helper:
        if clonebundle:
            location = _clone_bundle_url(helper, location)
            _say('Getting clone bundle from %s' % location)
        path, download = _import(helper, location, git_dir)
        try:
            # cinnabar.graft, as git-cinnabar's unbundle honours it.
            grafting = graft.prepare(helper, None)
            heads, counts = _import_bundle(helper, path, git_dir)
            if grafting:
                graft.check(helper, _say)
        except Abort:
            if download is not None:
                download.discard()
            raise
        helper.finish()
        if download is not None:
            download.discard()
        report(helper, counts, heads,
               helper.hg2git_many([h.hg_id for h in heads]))
    return 0
