"""cinnabarclone: seeding a clone with metadata kept in git.

A Mercurial server running our `hg/cinnabarclone.py` extension, with a
`.hg/cinnabar.manifest`, advertises the `cinnabarclone` capability; the
wire command of that name answers the manifest (its format is described
in that extension): one source a line,

    <url>[#<branch>][ graft=<commit>[,<commit>...]]

A clone (a fetch into empty metadata) gets the git-cinnabar metadata
(`refs/cinnabar/metadata` and all it reaches) from the first usable
source into a quarantine (cinnabar.quarantine), checks it as an import
checks what it receives (verify_ids: ids, trees, and each changeset's
commit being the one an import makes), makes the repository's metadata
a metadata commit of our own with its parts but without the metadata
commits it went on from (which were not checked; own_copy), then
fetches from the Mercurial server only the changesets it lacks. When
that fails (the source is unreachable, not a git repository or bundle,
has no such ref, holds no git-cinnabar metadata of our format, or
metadata that does not match its ids), a warning is shown,
nothing of it is kept, and the clone goes on as if there were no
cinnabarclone: clone bundles, then the server; with
`cinnabar.check=cinnabarclone`, as in git-cinnabar, the fetch fails
instead (one `fatal:` line, nothing kept).

The metadata of a grafted repository (changesets recorded onto the
commits of a git mirror, cinnabar.graft) is taken where grafting was
asked for (`cinnabar.graft` set, or a `graft=` line): its commits that
are not what an import makes of their changesets must then be commits
this repository already has, that a fetch could graft onto (graft_targets),
and be as a fetch grafts them (tree, parents, date, changeset id);
anything else is refused, as any commit that is not our conversion. Its
replace map (the metadata commit's tree, helper/replace-map.h), where
the graft replaced a commit of the mirror with a commit of its own, is
taken then too: each entry must replace one of those commits of this
repository (check_replace_map; never a commit the source brought),
with the commit an import makes of its changeset, of the same tree and
author date (the helper's received fsck, verify_ids). The installed
metadata keeps that tree, and `refs/cinnabar/replace/<replaced>` are
made with it (install), as after a fetch that grafted. Without
grafting asked for, metadata with a replace map is refused.

Settings, as git-cinnabar 0.7 reads them (looked up by cinnabar.config,
so also `GIT_CINNABAR_CLONE` and `remote.<remote>.cinnabar-clone`):

- `cinnabar.clone`: a manifest line (or lines) to use instead of what
  the server advertises, even when it advertises nothing; any URL
  scheme, local paths included. An empty value disables cinnabarclone.
  Without it, the server's manifest is used (only its http://, https://
  and git:// URLs, see server_url_usable, which git then fetches with
  no other protocol allowed), unless `cinnabar.clonebundle` names a
  clone bundle.
- `cinnabar.graft` (see cinnabar.graft): true: only `graft=` lines are
  used; false: they are not; unset: a usable `graft=` line is preferred.
  A `graft=` line is usable when its commits are in the repository and
  reachable from its branches, tags or remote-tracking branches.
"""

import re
import urllib.parse

from cinnabar import config, git, graft, metadata
from cinnabar.errors import Abort
from cinnabar.gitsource import SERVER_PROTOCOLS, Source
from cinnabar.helper import Helper, HelperError
from cinnabar.ids import GitId, HgId
from cinnabar.quarantine import Quarantine
from cinnabar.record import record
from cinnabar.refname import option_like

CAPABILITY = 'cinnabarclone'
AUTHOR_MARK = '<cinnabar@git>'
EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

Line = record('Line', 'url branch graft')
Line.__doc__ = """One manifest line: its URL, branch (or None) and graft
commits (a tuple of GitIds, empty for a plain line)."""


def parse_line(text):
    """A Line from a manifest line, None for an empty one; raises
    ValueError for a line to skip (say why)."""
    fields = text.split()
    if not fields:
        return None
    url, _, branch = fields[0].partition('#')
    grafts = ()
    for field in fields[1:]:
        key, equal, value = field.partition('=')
        if not equal or key != 'graft':
            raise ValueError('unknown parameter %r' % field)
        grafts = tuple(GitId(c) for c in value.split(','))
    return Line(url, branch or None, grafts)


def parse_manifest(text):
    """[(Line or None, skip reason or None)] for the non-empty lines."""
    parsed = []
    for raw in text.splitlines():
        try:
            line = parse_line(raw)
        except ValueError as error:
            parsed.append((None, '%s: %s' % (raw.strip(), error)))
            continue
        if line is not None:
            parsed.append((line, None))
    return parsed


def branches_for_url(hg_url):
    """The ref names tried when a line names none: the ends of the
    Mercurial URL's path, longest last, then the host name (not an IP
    address) before it all, then `metadata`."""
    parts = urllib.parse.urlsplit(hg_url)
    names = []
    segments = [s for s in parts.path.split('/') if s]
    host = parts.hostname or ''
    if host and not host.replace('.', '').isdigit() and ':' not in host:
        segments.insert(0, host)
    for segment in reversed(segments):
        names.append(segment + ('/' + names[-1] if names else ''))
    return names + ['metadata']


def pick_ref(refs, line, hg_url):
    """The (ref name, GitId) holding the metadata among `refs`."""
    names = [line.branch] if line.branch else branches_for_url(hg_url)
    for name in names:
        for ref in (name, 'refs/cinnabar/' + name, 'refs/heads/' + name):
            if ref in refs:
                return _checked_ref(ref, line), refs[ref]
    raise Abort('could not find cinnabar metadata in %s (tried %s)'
                % (line.url, ', '.join(names)))


def _checked_ref(ref, line):
    """`ref`, unless git would read it as an option."""
    if option_like(ref):
        raise Abort('the metadata ref %r of %s starts with "-"; refusing it'
                    % (ref, line.url))
    return ref


def grafts_usable(commits):
    """Whether the commits are here and reachable from branches, tags or
    remote-tracking branches."""
    for commit in commits:
        if metadata.read_commit(commit) is None:
            return False
        result = git.run(['for-each-ref', '--count=1', '--contains',
                          commit, 'refs/heads/', 'refs/tags/',
                          'refs/remotes/'], check=False)
        if result.returncode or not result.stdout.strip():
            return False
    return True


def server_url_usable(url):
    """Whether a URL the server gives may be handed to git: it must be
    `<scheme>://...` with an http, https or git scheme (git reads
    `git:/path`, `http:/x` or `https:x` as an scp-like `host:path` and
    would open an SSH connection to a host named after the scheme), and
    hold no `::` (`<transport>::<address>` picks a remote helper)."""
    scheme, sep, _ = url.partition('://')
    return bool(sep) and scheme in SERVER_PROTOCOLS and '::' not in url


def choose(lines, graft_enabled, limit_schemes, say):
    """The Line to use, or None. `graft_enabled`: True, False or None
    (unset), see the module docstring."""
    candidates = []
    for line, reason in lines:
        if line is None:
            say('cinnabarclone: skipping %s' % reason)
            continue
        if limit_schemes and not server_url_usable(line.url):
            say('warning: the server advertises cinnabarclone with a URL '
                'that is not an http://, https:// or git:// URL (%s); '
                'skipping it' % line.url)
            continue
        if graft_enabled is True and not line.graft:
            continue
        if graft_enabled is False and line.graft:
            continue
        if line.graft and not grafts_usable(line.graft):
            continue
        candidates.append(line)
    # A usable graft line comes first, wherever it is.
    candidates.sort(key=lambda line: not line.graft)
    return candidates[0] if candidates else None


def configured_manifest(peer, remote):
    """(manifest text, limit schemes), or None when cinnabarclone is not
    to be used."""
    text = config.lookup('clone', remote)
    if text is not None:
        return (text, False) if text.strip() else None
    if peer.capable(CAPABILITY) is None:
        return None
    if (config.lookup('clonebundle', remote) or '').strip():
        return None
    answer = peer.cinnabarclone_manifest()
    return answer.decode('utf-8', 'replace'), True


def check_replace_map(tree, env, targets):
    """Raise an Abort unless the metadata tree `tree` (git running in
    `env`) is a replace map (helper/replace-map.h) whose every entry is a
    gitlink named by the id of one of `targets` (graft_targets: commits
    of this repository, never what the source brought) and pointing at
    another commit. Whether each replacement is the commit of its
    changeset, with the tree and date of the commit it replaces, is
    verify_ids's."""
    out = metadata.git_out('ls-tree', '-z', tree, check=False, env=env)
    if out is None:
        raise Abort('the metadata tree %s cannot be read' % tree)
    targets = set(targets)
    for entry in filter(None, out.split(b'\0')):
        info, _, name = entry.partition(b'\t')
        fields = info.decode('ascii', 'replace').split()
        name = name.decode('utf-8', 'replace')
        if len(fields) != 3 or fields[0] != '160000' or \
                not re.fullmatch('[0-9a-f]{40}', name) or name == fields[2]:
            raise Abort("the metadata's replace map has '%s', which is not "
                        'a replaced commit' % name)
        if GitId(name) not in targets:
            raise Abort("the metadata's replace map replaces %s, which is "
                        "not one of this repository's commits a fetch "
                        'could graft onto' % name)


def check_metadata(commit_id, env, targets=()):
    """Raise an Abort unless `commit_id` is git-cinnabar metadata this
    version reads (git running in `env`): its tree, a replace map, only
    when grafting was asked for (`targets`, graft_targets, non-empty) and
    then only replacing some of `targets` (check_replace_map)."""
    out = metadata.git_out('cat-file', 'commit', commit_id, check=False,
                           env=env)
    if out is None:
        raise Abort('%s is not a commit' % commit_id)
    header = out.partition(b'\n\n')[0].decode('utf-8', 'replace')
    authors = [h for h in header.split('\n') if h.startswith('author ')]
    if not authors or AUTHOR_MARK not in authors[0]:
        raise Abort('%s is not git-cinnabar metadata' % commit_id)
    tree = [h[len('tree '):] for h in header.split('\n')
            if h.startswith('tree ')][:1]
    if tree != [EMPTY_TREE]:
        if not targets or not tree:
            raise Abort('the metadata %s holds replaced (grafted) commits, '
                        'which are taken only where grafting is asked for '
                        '(cinnabar.graft, or a graft= line)' % commit_id)
        check_replace_map(tree[0], env, targets)
    problem = metadata.format_problem(commit_id, env)
    if problem is not None:
        raise Abort('unusable metadata: %s' % problem.message)


def named_ids(problems, kind):
    """The hg ids of `kind` ('changeset', 'manifest') the problem lines
    name (file problems name their manifest)."""
    found = set()
    for line in problems:
        for match in re.finditer(r'\b%s ([0-9a-f]{40})\b' % kind, line):
            found.add(HgId(match.group(1)))
    return found


def first_bad_changeset(checker, commit_id, problems, env):
    """The first changeset (parents first) the problems are about, or
    whose manifest they are about; None if none is."""
    changesets = named_ids(problems, 'changeset')
    manifests = named_ids(problems, 'manifest')
    heads = metadata.changeset_heads(commit_id, env)
    if not heads or not checker.alive:
        return None
    out = metadata.git_out('rev-list', '--topo-order', '--reverse',
                           *heads, '--', env=env)
    commits = out.decode('ascii').split()
    for node in checker.git2hg_many(commits):
        if node in changesets:
            return node
        if manifests:
            text = checker.data('changeset', str(node)).text
            if text[:40].decode('ascii', 'replace') in manifests:
                return node
    return None


def verify_ids(commit_id, url, git_dir, env, say, grafts=()):
    """Check the metadata `commit_id` (git running in `env`) as an import
    checks what it receives: every changeset, manifest and file id that
    cinnabar.check asks for, the tree of each changeset's commit, and
    that the commit is the one an import makes of the changeset, but for
    those of the commits `grafts` it maps, which must be as a fetch
    grafts them: tree, parents, date and changeset id (`git cinnabar fsck
    --full`'s walk, helper/fsck.h). Returns whether it maps any of
    `grafts`; raises an Abort naming the first changeset it gets
    wrong."""
    say('Checking the cinnabar metadata from %s' % url)
    with Helper.start(git_dir, env) as checker:
        try:
            checker.use_metadata(commit_id)
            grafts = list(grafts)
            grafts = [c for c, node in zip(grafts,
                                           checker.git2hg_many(grafts))
                      if not node.is_null]
            problems, _, _ = checker.fsck(received=True, grafts=grafts)
        except HelperError as error:
            problems = [error.message]
        if not problems:
            return bool(grafts)
        node = first_bad_changeset(checker, commit_id, problems, env)
    what = 'changeset %s' % node if node else 'its Mercurial ids'
    raise Abort('the metadata from %s does not match %s (%d problem%s, '
                'the first: %s)' % (url, what, len(problems),
                                    's' if len(problems) > 1 else '',
                                    problems[0]))


def graft_targets(line, remote):
    """[GitId] of the commits the metadata of `line` may have grafted
    changesets onto: when grafting is asked for (`cinnabar.graft`, or a
    `graft=` line, whose commits grafts_usable found here), the commits
    of the repository's refs, as cinnabar.graft=true's candidates (with
    a mirror URL, its refs may not be fetched yet: the line's commits
    are in the branches, tags or remote-tracking branches), never what
    the source brought."""
    if not line.graft and not graft.graft_setting(remote):
        return []
    return graft.candidates(True)


def own_copy(commit_id):
    """A metadata commit of our own with the parts and tree (replace map)
    of the received `commit_id` (checked) and no previous metadata
    commit: what the source's went on from was not checked, and rollback
    must not reach it."""
    commit = metadata.read_commit(commit_id)
    return metadata.write_commit(commit.tree,
                                 commit.parents[:len(metadata.PARTS)])


def install(commit_id):
    """Make `commit_id` the metadata (which must not exist yet), with
    refs/notes/cinnabar on its git2hg notes and the replace refs of its
    replace map (metadata.notes_for), in one transaction."""
    notes = metadata.notes_for(commit_id)
    lines = ['create %s %s\n' % (metadata.METADATA_REF, commit_id)]
    lines += ['update %s %s\n' % (name, oid) for name, oid in notes.items()
              if oid is not None]
    metadata.git_out('update-ref', '-m', 'cinnabarclone', '--stdin',
                     input=''.join(lines).encode('ascii'))


def fetch_metadata(line, hg_url, helper, git_dir, from_server, say,
                   remote=None):
    """Bring the metadata of `line` and install it; returns the Source
    (to discard once the clone is done). `from_server`: the line is the
    server's (see gitsource.Source)."""
    say('Fetching cinnabar metadata from %s' % line.url)
    source = Source(line.url, helper, git_dir, say, from_server)
    try:
        targets = graft_targets(line, remote)
        with Quarantine(git_dir) as incoming:
            source.open()
            ref, commit_id = pick_ref(source.refs, line, hg_url)
            source.fetch(ref, incoming.writer_env())
            check_metadata(commit_id, incoming.reader_env(), targets)
            grafted = verify_ids(commit_id, line.url, git_dir,
                                 incoming.reader_env(), say, targets)
            incoming.accept()
        install(own_copy(commit_id))
        if grafted:
            graft.mark_grafted()
    except Abort:
        source.discard()
        raise
    return source


def seed_clone(peer, helper, git_dir, remote, hg_url, say):
    """Install the metadata cinnabarclone points to, when there is one
    (the metadata must be empty). Returns the Source used, or None when
    cinnabarclone was not used. Raises Abort when it failed (nothing is
    then installed)."""
    enabled = graft.graft_setting(remote)
    found = configured_manifest(peer, remote)
    if found is None:
        return None
    text, limit_schemes = found
    line = choose(parse_manifest(text), enabled, limit_schemes, say)
    if line is None:
        raise Abort('cinnabarclone gives no git repository or bundle URL '
                    'this clone can use')
    return fetch_metadata(line, hg_url, helper, git_dir, limit_schemes,
                          say, remote)
