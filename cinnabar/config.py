"""git-cinnabar settings: the one list of them, and where they are looked up.

`SETTINGS` is every `cinnabar.<name>` setting, with what it takes and
what it does; the manual page (git-remote-hg(1)) and the README's table
are made from it (tools/manpages.py), and `lookup` refuses a name it does
not list. Those marked `helper` are also read by the C helper itself
(`helper/*.c`), which looks them up the same way (none of them is per
remote); tests/release/test_help_pages.py checks the marks against the helper's
sources.

A setting `<name>` (e.g. `refs`) is taken, first found wins, from:

1. the environment variable GIT_CINNABAR_<NAME> (upper case, `-` as `_`),
   when `env` says so;
2. the git configuration `remote.<remote>.cinnabar-<name>`, when the
   setting is `per_remote` and the remote has a name;
3. the git configuration `cinnabar.<name>`.

`experiment(name)` reads `experiments`, a comma-separated list of words
`<name>` or `<name>=<value>`, as git-cinnabar 0.7 does (unknown words
are ignored): the one reader of the Python side. The helper reads the
experiments it acts on (`git_commit`, `similarity=<n>`) the same way
(helper/experiments.c).
"""

import os

from cinnabar import git
from cinnabar.record import record

Setting = record('Setting',
                 'name values per_remote env text helper', (False,))
Setting.__doc__ = """A setting: `name` (after `cinnabar.`), `values` (what
it takes, for people), `per_remote` (also `remote.<remote>.cinnabar-<name>`),
`env` (also GIT_CINNABAR_<NAME>), `text`, what it does (one paragraph),
and `helper`, whether the helper reads it too."""

SETTINGS = (
    Setting('check', 'comma-separated checks', False, False,
            'Which received Mercurial ids are checked against their contents, '
            'applied left to right to the default (all): `nodeid` '
            '(changesets), `manifests`, `files`, `all` or `true` turn checks '
            'on; `no-nodeid`, `no-manifests`, `no-files`, `none` or `false` '
            'turn them off. `cinnabarclone` makes a failed cinnabarclone an '
            'error rather than a fallback to a normal clone; '
            'git-cinnabar\'s other values are accepted without effect.',
            helper=True),
    Setting('clone', 'a cinnabarclone manifest line, or empty', True, True,
            'Use this line instead of the server\'s cinnabarclone manifest '
            '(any URL or path); empty disables cinnabarclone.'),
    Setting('clonebundle', 'a bundle URL, or empty', True, True,
            'For a server advertising clone bundles, use this bundle instead '
            'of the advertised ones; empty or `false` uses none.'),
    Setting('clonebundles', 'true or false', True, True,
            'Whether a clone uses the clone bundles a server advertises '
            '(default true).'),
    Setting('compat', '0.6', False, True,
            'Fill conflicting commit messages with NUL bytes, as '
            'git-cinnabar 0.6 did, instead of newlines.',
            helper=True),
    Setting('data', 'phase, always, never or force', True, True,
            'Whether the metadata of pushed changesets is kept: `phase` (the '
            'default) when the server made them public (or they went to a '
            'topic), `always`, `never`; `force` is `always` and also keeps '
            'what `git push --dry-run` made.'),
    Setting('download-url', 'a https, file:// URL or a local path', False,
            True,
            'Where `git cinnabar download` and `self-update` get releases '
            '(default: the URL chosen at build time).'),
    Setting('experiments', 'comma-separated experiments', False, True,
            'Turn on experiments: `merge` (accepted, merges are always '
            'pushed), `similarity=<n>`, `git_commit` (a `git_commit` extra on '
            'pushed changesets), `tag`, `branch` (new commits pushed to '
            '`branches/<name>/tip` go on that named branch), `strip`.',
            helper=True),
    Setting('graft', 'true, false, or a git URL or path', True, True,
            'Record fetched changesets onto existing commits of a git mirror '
            'with the same tree, parents and author date: those of every '
            'ref (`true`), or of the branches and tags of that repository.'),
    Setting('grafted', 'true or unset', False, False,
            'Set by a fetch that grafted changesets onto commits of a git '
            'mirror (`cinnabar.graft`): `git cinnabar fsck` then accepts '
            'commits that are not what a clone makes of their changesets; '
            'not meant to be set by hand.',
            helper=True),
    Setting('lock-timeout', 'seconds', False, True,
            'How long a fetch, push or writing command waits for another '
            'one working on the same repository (default 600).'),
    Setting('log', 'a file and/or channels', False, True,
            'Trace the protocol lines with git, the helper and the '
            'Mercurial server: a file, and channels among `remote-helper`, '
            '`helper`, `wire` and `*`, with an optional `:<level>`.'),
    Setting('pushrefs', 'as refs', True, True,
            'The refs layout used to find what `git push` names; default: '
            'that of `refs`.'),
    Setting('refs', 'comma-separated among heads, tips, bookmarks, topics, '
            'or all', True, True,
            'The refs layout: which of branch heads, branch tips, bookmarks '
            'and topics appear as refs (default all: '
            '`branches/<branch>/tip`, `branches/<branch>/<hg id>`, '
            '`bookmarks/<name>`, `topics/<branch>/<topic>/tip`).'),
    Setting('similarity', 'a percentage', False, False,
            'On push, the similarity at which git\'s copy detection pairs '
            'a new file with a file of the first parent (default 100: exact '
            'copies only), as `git diff-tree -C -C<n>%`.',
            helper=True),
    Setting('stream', 'auto, always or never', True, True,
            'When a clone asks for a stream clone (the server\'s revlogs as '
            'they are): `auto` (the default) when the server prefers it, '
            '`always` whenever offered, `never`.'),
)
_BY_NAME = {s.name: s for s in SETTINGS}


def env_name(name):
    return 'GIT_CINNABAR_' + name.upper().replace('-', '_')


def setting(name):
    """The Setting `name`; a name SETTINGS lacks is a programming error."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError('cinnabar.%s is not in config.SETTINGS' % name)


def lookup(name, remote=None):
    """The value of setting `name` for `remote` (a name or None), or None."""
    entry = setting(name)
    value = os.environ.get(env_name(name)) if entry.env else None
    if value is not None:
        return value
    if remote and entry.per_remote:
        value = git.config('remote.%s.cinnabar-%s' % (remote, name))
        if value is not None:
            return value
    return git.config('cinnabar.%s' % name)


def check(name):
    """Whether the check `name` among git-cinnabar's others (not the id
    checks, which the helper reads: helper/check-setting.h) is on in
    `cinnabar.check`: the words, left to right, turn it on (`name`) or
    off (`no-name`; `all`, `true`, `none` and `false` are the id checks,
    without it, as in git-cinnabar)."""
    on = False
    for word in (lookup('check') or '').split(','):
        word = word.strip()
        if word == name:
            on = True
        elif word in ('no-' + name, 'all', 'true', 'none', 'false'):
            on = False
    return on


def experiment(name):
    """Whether the experiment `name` is on: the word `name` alone (not
    `name=<value>`) is in `cinnabar.experiments`."""
    return name in (lookup('experiments') or '').split(',')
