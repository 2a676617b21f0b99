"""The few plain git commands the Python side runs.

Everything about git objects and the metadata goes through the C helper;
this module only asks git where the repository is, reads configuration,
resolves committish names, walks history for pushes and removes scratch
refs.
"""

import os

from cinnabar import process
from cinnabar.errors import Abort
from cinnabar.ids import GitId

# subprocess is imported where git runs to completion: a fetch with
# nothing new starts its one git process with cinnabar.process.


def run(args, check=True, input=None, env=None):
    """The CompletedProcess of `git args` (`env`: the environment, default
    ours); with `check`, a failure is an Abort quoting git's message."""
    import subprocess
    result = subprocess.run(['git'] + args, input=input, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and result.returncode:
        message = result.stderr.decode('utf-8', 'replace').strip()
        raise Abort('git %s failed: %s' % (args[0], message))
    return result


def read_objects(names):
    """[(object id, type, content) or None] for each of `names` (object
    names git understands, e.g. `<commit>:<path>`; None for one that names
    nothing), read by one `git cat-file --batch`.  Its output, per name:
    `<id> <type> <size>` then the content and a newline, or `<name>
    missing` (or `ambiguous`) alone."""
    if not names:
        return []
    query = b''.join(n.encode('utf-8', 'surrogateescape') + b'\n'
                     for n in names)
    out = run(['cat-file', '--batch'], input=query).stdout
    found, pos = [], 0
    for _ in names:
        end = out.index(b'\n', pos)
        fields = out[pos:end].split()
        pos = end + 1
        if len(fields) != 3:
            found.append(None)
            continue
        size = int(fields[2])
        found.append((GitId(fields[0].decode('ascii')),
                      fields[1].decode('ascii'), out[pos:pos + size]))
        pos += size + 1
    return found


# Pushes walk the whole history: in a shallow clone (`git clone --depth`),
# git takes the commits at the cut for roots unless told to read no
# shallow file, and a push would send changesets whose parents the server
# lacks. Once the history is complete (e.g. `git cinnabar fetch` of the
# missing changesets), the objects are all there; until then, the walk
# fails on a missing object (see `history`).
WHOLE_HISTORY = ['--shallow-file', '']


def history(args, input=None, check=True):
    """`git args` (a history walk) ignoring .git/shallow; a failure in a
    shallow clone, whose history is then incomplete, is an Abort saying
    what to fetch."""
    result = run(WHOLE_HISTORY + args, input=input, check=False)
    if result.returncode and check:
        message = result.stderr.decode('utf-8', 'replace').strip()
        raise history_failure('git %s failed: %s' % (args[0], message))
    return result


def history_failure(message):
    """The Abort for a history walk that failed: in a shallow clone, one
    saying what to fetch, else `message`."""
    if is_shallow():
        return Abort('this is a shallow clone and the history of what '
                     'is pushed is incomplete here',
                     hint='fetch the missing history first (`git fetch '
                     '--unshallow`, or `git cinnabar fetch <remote> '
                     '<hg id>` of the changesets missing)')
    return Abort(message)


def is_shallow():
    result = run(['rev-parse', '--is-shallow-repository'], check=False)
    return result.stdout.strip() == b'true'


def git_dir():
    """The absolute path of the current repository's git dir, or None.

    git gives the remote helpers it runs the repository in GIT_DIR (as
    given or relative to the current directory): when it names a
    directory with a HEAD, that is the answer (absolute, symlinks
    resolved, as `git rev-parse --absolute-git-dir` says), without a git
    process (doc/performance.md, "A fetch with nothing new")."""
    named = os.environ.get('GIT_DIR')
    if named:
        path = os.path.realpath(named)
        if os.path.isfile(os.path.join(path, 'HEAD')):
            return path
    result = run(['rev-parse', '--absolute-git-dir'], check=False)
    if result.returncode:
        return None
    return result.stdout.decode('utf-8', 'surrogateescape').rstrip('\n')


def common_dir(git_dir):
    """The common git directory of `git_dir`: what every worktree of the
    repository shares (refs, objects, and what git-cinnabar keeps beside
    them). A linked worktree's git directory names it in its file
    `commondir` (relative to itself or absolute, gitrepository-layout(5));
    otherwise it is `git_dir`."""
    try:
        with open(os.path.join(git_dir, 'commondir')) as f:
            named = f.read().strip()
    except OSError:
        named = ''
    if named:
        return os.path.normpath(os.path.join(git_dir, named))
    return git_dir


def _extension(git_dir, name):
    """The value of `extensions.<name>` (lower case) in the repository's
    own configuration file, or None: git reads a repository's extensions
    from that file only (`<common dir>/config`), so reading it needs no
    git process. Enough of git's syntax for a line `<name> = <value>` in
    a section `[extensions]`; a value in quotes loses its quotes."""
    try:
        with open(os.path.join(common_dir(git_dir), 'config'), 'rb') as f:
            text = f.read().decode('utf-8', 'replace')
    except OSError:
        return None
    section, value = None, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith('['):
            section = line[1:].partition(']')[0].strip().lower()
            continue
        key, equals, rest = line.partition('=')
        if section == 'extensions' and equals \
                and key.strip().lower() == name:
            value = rest.split('#')[0].split(';')[0].strip().strip('"')
    return value


def require_sha1(git_dir):
    """Abort, before anything is written, in a repository whose objects
    are named by another hash than SHA-1 (`git init
    --object-format=sha256`): git-cinnabar's metadata maps Mercurial's
    SHA-1 ids to git's SHA-1 ids, and its helper reads and writes SHA-1
    objects only."""
    if git_dir is None:
        return
    object_format = _extension(git_dir, 'objectformat')
    if object_format in (None, '', 'sha1'):
        return
    raise Abort('this repository names its objects with %s '
                '(extensions.objectFormat), and git-cinnabar works only in '
                'SHA-1 repositories' % object_format,
                hint='make a SHA-1 repository for Mercurial remotes: `git '
                'init --object-format=sha1`, or `git clone hg::<url>` '
                'without --object-format and with GIT_DEFAULT_HASH unset',
                status=128)


def config(key):
    """The value of a git configuration key, or None when it is not set
    (the last one when it is set several times, as `git config --get`;
    an empty string for a key set without `=`)."""
    return _config_values()[0].get(_config_key(key))


def config_entries():
    """[(key, value)] of the whole configuration, in git's order, every
    value of a key set several times (keys as `git config --list` spells
    them: see _config_key)."""
    return _config_values()[1]


# The configuration, read once per repository and working directory by
# `git config --list -z`: git-cinnabar never changes it, and a `git config
# --get` per key was a process each (five on a fetch with nothing new).
_config_cache = {}


CONFIG_LIST = ['config', '--list', '-z']


def _config_where():
    return (os.getcwd(), os.environ.get('GIT_DIR'),
            os.environ.get('GIT_CONFIG_PARAMETERS'))


class _ConfigFromHelper:
    """The configuration as a helper started in the same place reads it
    (its `config` command), for `_config_values` to read as it reads `git
    config`'s output: a process fewer for a fetch with nothing new
    (doc/performance.md, "A fetch with nothing new"). `git config` when
    the helper cannot say. While it is read, `being_read` is true: the
    tracer, which needs it to know where its lines go, does not trace the
    helper's answer."""

    being_read = False

    def __init__(self, helper):
        self._helper = helper

    def read_all(self):
        _ConfigFromHelper.being_read = True
        try:
            return self._helper.ready().config_list()
        except Abort:
            return run(CONFIG_LIST, check=False).stdout
        finally:
            _ConfigFromHelper.being_read = False


def config_being_read():
    """Whether the configuration is being read from the helper now."""
    return _ConfigFromHelper.being_read


def read_config_soon(helper=None):
    """Start reading the configuration, which the next `config` waits
    for instead of starting git then: git runs while we do something else
    (a no-op fetch talks to the server meanwhile). With `helper` (a
    cinnabar.helper.Helper started here, maybe not ready yet), from it."""
    where = _config_where()
    if where not in _config_cache:
        _config_cache[where] = _ConfigFromHelper(helper) if helper else \
            process.Process(['git'] + CONFIG_LIST, stdin=None,
                            stderr=process.DEVNULL)


def _config_values():
    where = _config_where()
    read_config_soon()  # started here when nobody started it sooner
    values = _config_cache[where]
    if not isinstance(values, tuple):   # being read: a Process, or helper
        entries = _parse_config(values.read_all())
        values = dict(entries), entries
        _config_cache[where] = values
    return values


def _parse_config(listed):
    """[(key, value)] from the output of `git config --list -z`: entries
    end with NUL, `<key>\\n<value>`, or `<key>` alone for a key set
    without `=`. Keys come canonical: section and name in lower case, the
    subsection as written."""
    entries = []
    for entry in listed.split(b'\0'):
        if not entry:
            continue
        name, newline, value = entry.partition(b'\n')
        entries.append((name.decode('utf-8', 'surrogateescape'),
                        value.decode('utf-8', 'surrogateescape')))
    return entries


def _config_key(key):
    """`key` as `git config --list` spells it: `Remote.Origin.tagOpt` is
    `remote.Origin.tagopt`."""
    section, _, rest = key.partition('.')
    subsection, dot, name = rest.rpartition('.')
    return section.lower() + '.' + subsection + dot + name.lower()


def delete_refs(prefixes, names=None):
    """Delete every ref under the given prefixes (e.g. `refs/foo/`):
    `names`, when the caller listed them already."""
    if names is None:
        names = run(['for-each-ref', '--format=%(refname)']
                    + list(prefixes)).stdout.decode(
                        'utf-8', 'surrogateescape').splitlines()
    commands = ''.join('delete %s\n' % name for name in names)
    if commands:
        run(['update-ref', '--stdin'],
            input=commands.encode('utf-8', 'surrogateescape'))


def rev_list_parents(include, exclude):
    """[(commit, [parents])] for the commits reachable from `include` but
    not from `exclude` (GitIds), parents before children, in the order
    `git rev-list --topo-order --reverse` gives for `include` in its
    order (the order git-cinnabar pushes changesets in)."""
    args = ['rev-list', '--topo-order', '--reverse', '--parents', '--stdin']
    names = ['^%s' % c for c in exclude] + list(include)
    result = history(args, input=''.join(n + '\n' for n in names).encode())
    commits = []
    for line in result.stdout.decode('ascii').splitlines():
        commit, *parents = line.split()
        commits.append((GitId(commit), [GitId(p) for p in parents]))
    return commits


def root_commits(rev):
    """[GitId] of the commits without parents reachable from `rev`, or []
    when `rev` does not resolve to a commit."""
    if run(['rev-parse', '-q', '--verify', rev + '^{commit}'],
           check=False).returncode:
        return []
    out = history(['rev-list', '--max-parents=0', rev, '--']).stdout
    return [GitId(c) for c in out.decode('ascii').split()]


class CommitResolver:
    """Resolves committish names to commit ids with one `git cat-file`.

    Use as a context manager; `resolve(name)` returns a GitId, or None when
    the name does not name a commit.
    """

    def __init__(self):
        self._process = None

    def __enter__(self):
        import subprocess
        self._process = subprocess.Popen(
            ['git', 'cat-file', '--batch-check=%(objectname) %(objecttype)'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return self

    def __exit__(self, *exc_info):
        self._process.stdin.close()
        self._process.wait()

    def resolve(self, name):
        if '\n' in name or not name:
            return None
        self._process.stdin.write(
            (name + '^{commit}\n').encode('utf-8', 'surrogateescape'))
        self._process.stdin.flush()
        answer = self._process.stdout.readline().decode('ascii', 'replace')
        fields = answer.split()
        if len(fields) != 2 or fields[1] != 'commit':
            return None
        return GitId(fields[0])


def rev_list_with_parents(args):
    """[(commit, [parents])] for what `git rev-list <args>` lists (its
    arguments as given: revisions, ranges, options), oldest first."""
    result = run(['rev-list', '--topo-order', '--reverse', '--parents']
                 + list(args) + ['--'])
    commits = []
    for line in result.stdout.decode('ascii').splitlines():
        commit, *parents = line.split()
        commits.append((GitId(commit), [GitId(p) for p in parents]))
    return commits
