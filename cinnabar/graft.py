"""Grafting: mapping Mercurial changesets onto git commits that exist.

`cinnabar.graft` (also `remote.<remote>.cinnabar-graft` and
`GIT_CINNABAR_GRAFT`, see cinnabar.config):

- `true`: as in git-cinnabar, the commits of every ref (but git-cinnabar's
  own refs, refs/notes/cinnabar and refs/original/) not already mapped
  are candidates;
- a git URL or path (our addition): its branches and tags are first
  fetched into `refs/cinnabar/graft/`, whose commits are the candidates;
- `false`, or unset: no grafting.

Fetches, `git cinnabar unbundle` and `git cinnabar reclone` graft. The
rules, and the "replace" commits a graft may make, are the helper's
(helper/graft.h, helper/replace-map.h). A fetch that grafted sets
`cinnabar.grafted` in the repository's config: `git cinnabar fsck`
otherwise requires each changeset's commit to be the one an import makes
of it (but with a replace map, which says the same).
"""

from cinnabar import config, git, metadata
from cinnabar.errors import SettingError
from cinnabar.errors import Abort
from cinnabar.ids import GitId

SETTING = 'graft'
GRAFT_REFS = 'refs/cinnabar/graft/'
GRAFTED_SETTING = 'cinnabar.grafted'
_TRUE = ('true', 'yes', 'on', '1')
_FALSE = ('false', 'no', 'off', '0')


def graft_value(remote):
    """(enabled, url): enabled is True, False or None (unset); url is the
    git URL to fetch candidates from, or None."""
    value = config.lookup(SETTING, remote)
    if value is None:
        return None, None
    text = value.strip()
    if text.lower() in _TRUE:
        return True, None
    if text.lower() in _FALSE:
        return False, None
    if not text:
        raise SettingError('invalid empty value for cinnabar.graft',
                           hint='set it to true, false, or the URL of a '
                                'git mirror of the repository')
    return True, text


def graft_setting(remote):
    """True, False or None (unset)."""
    return graft_value(remote)[0]


def fetch_mirror(url):
    """Fetch the branches and tags of the git repository at `url` into
    refs/cinnabar/graft/ (what was there is replaced)."""
    result = git.run(['fetch', '--no-tags', '--no-write-fetch-head', '-q',
                      '--prune', '--', url,
                      '+refs/heads/*:%sheads/*' % GRAFT_REFS,
                      '+refs/tags/*:%stags/*' % GRAFT_REFS], check=False)
    if result.returncode:
        message = result.stderr.decode('utf-8', 'replace').strip()
        raise Abort('fetching the git mirror %s for cinnabar.graft failed: '
                    '%s' % (url, ' '.join(message.split())),
                    hint='check the URL in cinnabar.graft')


def candidates(every_ref):
    """[GitId] of the commits changesets may be grafted onto: the history
    of refs/cinnabar/graft/* (and, with `every_ref`, of every ref but
    git-cinnabar's own), without the commits the metadata maps."""
    args = ['rev-list', '--full-history', '--glob=%s*' % GRAFT_REFS]
    if every_ref:
        args += ['--exclude=refs/cinnabar/*', '--exclude=refs/notes/cinnabar',
                 '--exclude=refs/original/*', '--all']
    if metadata.read_ref(metadata.METADATA_REF):
        # Its first parent's parents are the changeset heads' commits.
        args += ['--not', metadata.METADATA_REF + '^']
    out = git.run(args).stdout.decode('ascii')
    return [GitId(line) for line in out.split()]


def prepare(helper, remote):
    """Give the helper the candidates when grafting is on; returns
    whether there are any (then `check` after the imports)."""
    enabled, url = graft_value(remote)
    if not enabled:
        return False
    if url is not None:
        fetch_mirror(url)
    commits = candidates(url is None)
    return bool(commits) and helper.graft(commits) > 0


def check(helper, say):
    """After the imports: refuse, as git-cinnabar does, when there were
    candidates but no changeset found one and nothing was ever replaced
    (nothing is then kept); else say what was grafted."""
    stats = helper.graft_stats()
    found = stats.grafted + stats.replaced
    if stats.not_grafted and not found and not stats.replace_map:
        raise Abort('nothing to graft: cinnabar.graft is set, but none of '
                    'the %d changesets fetched matches one of the %d '
                    'candidate commits (same tree and date)'
                    % (stats.not_grafted, stats.candidates),
                    hint='fetch the git mirror first (or set cinnabar.graft '
                         'to its URL), or unset cinnabar.graft')
    if found:
        mark_grafted()
        say('graft: %d changesets recorded onto existing commits, %d '
            'replacing one, %d new commits'
            % (stats.grafted, stats.replaced, stats.not_grafted))


def mark_grafted():
    """Note in the repository's config (`cinnabar.grafted`) that some of
    its changesets have commits that are not what an import makes of
    them: `git cinnabar fsck` then accepts those (helper/fsck.h)."""
    git.run(['config', GRAFTED_SETTING, 'true'])
