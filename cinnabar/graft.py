"""Grafting: mapping Mercurial changesets onto git commits that exist.

`cinnabar.graft` (also `remote.<remote>.cinnabar-graft` and
`GIT_CINNABAR_GRAFT`, see cinnabar.config):

- `true`: as in git-cinnabar, the commits of every ref (but git-cinnabar's
  own refs, refs/notes/cinnabar and refs/original/) not already mapped
  are candidates;
- a git URL or path (our addition): its branches and tags are first
  fetched into `refs/cinnabar/graft/`, whose commits are the candidates;
- `false`, or unset: no grafting.
"""

from cinnabar import config
from cinnabar.clonebundles import SettingError

SETTING = 'graft'
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
