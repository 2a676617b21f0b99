"""Which names git accepts as ref names (`git check-ref-format` rules).

A full ref name (e.g. `refs/heads/branches/default/tip`) is valid when:
it has at least two `/`-separated components, none empty (so no leading,
trailing or doubled `/`); no component starts with `.` or ends with
`.lock`; it contains no `..`, no `@{`, no ASCII control character, space,
`~`, `^`, `:`, `?`, `*`, `[` or `\\`; it does not end with `.`; and it is
not `@`.

We also refuse a name starting with `-`, which git's own commands would
read as an option where it is an argument (git accepts `-x/y` as a ref,
but refuses such branch names); a ref name from elsewhere given to a git
command goes after `--` as well.

And a name git accepts may still be one its files backend cannot store:
each component is a file or directory name, and git writes the file as
`<component>.lock` first. So a component longer than MAX_COMPONENT bytes
(NAME_MAX, 255, less `.lock`), or a whole name longer than MAX_NAME bytes
(the path of its lock under the git directory must stay below PATH_MAX,
4096, with room for the directory's own path and a remote's prefix), is
refused too: git's fast-import would otherwise die on it ("File name too
long") and take the whole import with it.
"""

MAX_COMPONENT = 250
MAX_NAME = 2048
# Names longer than this are shortened in messages.
SHOWN_LENGTH = 80

_FORBIDDEN = set(' ~^:?*[\\\x7f') | {chr(c) for c in range(0x20)}


def _component_problem(component):
    if not component:
        return 'has an empty component'
    if component.startswith('.'):
        return 'has a component starting with "."'
    if component.endswith('.lock'):
        return 'has a component ending with ".lock"'
    if _size(component) > MAX_COMPONENT:
        return 'has a component longer than %d bytes' % MAX_COMPONENT
    return None


def _size(text):
    """The length in bytes of `text` as git gets it."""
    return len(text.encode('utf-8', 'surrogateescape'))


def shown(name):
    """`name` for a message: its start and its size when it is long."""
    if len(name) <= SHOWN_LENGTH:
        return name
    return '%s... (%d bytes)' % (name[:SHOWN_LENGTH - 20], _size(name))


def option_like(name):
    """Whether a git command would read `name` as an option."""
    return name.startswith('-')


def refname_problem(name):
    """Why `name` is not a valid full ref name, or None when it is."""
    if option_like(name):
        return 'starts with "-"'
    if name == '@':
        return 'is "@"'
    bad = sorted(set(name) & _FORBIDDEN)
    if bad:
        return 'contains %r' % bad[0]
    for sequence in ('..', '@{'):
        if sequence in name:
            return 'contains "%s"' % sequence
    if name.endswith('.'):
        return 'ends with "."'
    if _size(name) > MAX_NAME:
        return 'is longer than %d bytes' % MAX_NAME
    components = name.split('/')
    if len(components) < 2:
        return 'has only one component'
    for component in components:
        problem = _component_problem(component)
        if problem:
            return problem
    return None


def is_valid_refname(name):
    return refname_problem(name) is None
