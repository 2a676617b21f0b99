"""What the fetch refs (refs/cinnabar/refs/*, refs/cinnabar/hg/*,
refs/cinnabar/HEAD) and the remote-tracking refs of hg remotes were before
each fetch, for `git cinnabar rollback`.

A fetch replaces the fetch refs (git reads what it imported there); git
keeps no reflog for them, and the reflog of a remote-tracking ref does not
say whether the ref existed. Before a fetch, the remote helper saves both in
`<git dir>/cinnabar/fetch-refs/<metadata commit>`, one
`<git id> <ref name>` line each, named after the metadata commit they
went with. Rolling back to that metadata commit puts them back. Only the
newest KEEP files are kept.
"""

import os

from cinnabar import git, metadata
from cinnabar.refs import FETCH_REFS

KEEP = 64


def _directory(git_dir):
    # In the common directory: the refs saved are every worktree's.
    return os.path.join(git.common_dir(git_dir), 'cinnabar', 'fetch-refs')


def save(git_dir, current):
    """Save the fetch refs as they go with `current`, the metadata commit
    (None: there is none, nothing is saved). Returns the names of the fetch
    refs (which the fetch then deletes), or None when nothing was saved."""
    if current is None:
        return None
    directory = _directory(git_dir)
    os.makedirs(directory, exist_ok=True)
    fetch_refs, tracking = _listed(FETCH_REFS)
    saved = fetch_refs + tracking
    lines = ''.join('%s %s\n' % (oid, name) for name, oid in saved)
    path = os.path.join(directory, current)
    with open(path + '.tmp', 'w', encoding='utf-8',
              errors='surrogateescape') as f:
        f.write(lines)
    os.replace(path + '.tmp', path)
    _prune(directory)
    return [name for name, _ in fetch_refs]


def hg_remotes():
    """Names of the remotes one of whose URLs starts with `hg::` (or
    `hg://`), in the order of the configuration."""
    names = []
    for key, url in git.config_entries():
        if (key.startswith('remote.') and key.endswith('.url')
                and url.startswith(('hg::', 'hg://'))):
            name = key[len('remote.'):-len('.url')]
            if name not in names:
                names.append(name)
    return names


def remote_tracking_refs():
    """[(ref name, GitId)] of the hg remotes' refs (not symbolic ones)."""
    return _listed(())[1]


def _listed(prefixes):
    """([(ref name, GitId)] of the refs under `prefixes`, those of
    remote_tracking_refs), by one git process."""
    remotes = ['refs/remotes/%s/' % r for r in hg_remotes()]
    if not prefixes and not remotes:
        return [], []
    out = metadata.git_out('for-each-ref',
                           '--format=%(objectname) %(symref) %(refname)',
                           *prefixes, *remotes)
    under, tracking = [], []
    for line in out.decode('utf-8', 'surrogateescape').splitlines():
        oid, symref, name = line.split(' ', 2)
        if name.startswith(prefixes):
            under.append((name, metadata.GitId(oid)))
        elif not symref:
            tracking.append((name, metadata.GitId(oid)))
    return under, tracking


def _prune(directory):
    names = sorted(os.listdir(directory),
                   key=lambda n: os.stat(os.path.join(directory, n)).st_mtime)
    for name in names[:-KEEP]:
        os.unlink(os.path.join(directory, name))


def load(git_dir, metadata_commit):
    """{ref name: GitId} saved for `metadata_commit`, or None."""
    path = os.path.join(_directory(git_dir), metadata_commit)
    try:
        with open(path, encoding='utf-8', errors='surrogateescape') as f:
            text = f.read()
    except FileNotFoundError:
        return None
    refs = {}
    for line in text.splitlines():
        oid, _, name = line.partition(' ')
        refs[name] = metadata.GitId(oid)
    return refs


def forget_all(git_dir):
    """Remove every saved state (for `git cinnabar clear`)."""
    directory = _directory(git_dir)
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            os.unlink(os.path.join(directory, name))
        os.rmdir(directory)
