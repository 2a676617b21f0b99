"""The remote helper git runs for `hg::` URLs: `git-remote-hg <remote> <url>`.

git talks to us on standard input and output, one command a line
(git's Documentation/gitremote-helpers.adoc):

`capabilities`
    We answer `option`, `import`, `push` and our refspecs: git asks for
    `refs/heads/...`, `hg/...` and `HEAD`, and reads what we import
    under `refs/cinnabar/`.
`option <name> <value>`
    `ok` for `verbosity`, `progress`, `dry-run`, `force` and `cloning`
    (a clone from a relative path stores the remote's URL absolute),
    `unsupported` for the rest.
`list` / `list for-push`
    The refs (see `cinnabar.refs`), one `<git id> <name>` a line (`?`
    when the changeset is not in the metadata yet), `@<ref> HEAD` for
    HEAD, then an empty line.
`import <ref>`
    A batch of such lines ends with an empty line. We fetch what is
    missing, make it visible (helper `finish`), then write a fast-import
    stream for git: `feature done`, `feature force`, `reset
    refs/cinnabar/<ref>` and `from <git id>` for each ref, `done`.
    Nothing is written when the fetch fails, and the fetch refs stay as
    they were: git is stopped before it reads them (see `stop_git`).
    Into empty metadata, the metadata cinnabarclone points to is
    installed first (cinnabar.cinnabarclone; a step of its own: it stays
    if the rest of the fetch fails), or else the clone bundle the server
    advertises, if any, is imported first (`cinnabar.clonebundles`), in
    the same transaction.

`push [+]<src>:<dst>`
    A batch of such lines (options may come among them, unanswered)
    ends with an empty line. We push (see `cinnabar.push`), then answer
    `ok <dst>` or `error <dst> <why>` for each, and an empty line. git
    then updates its refs, `refs/cinnabar/refs/...` among them, for the
    pushed ones; the metadata already maps the pushed commits, so the
    next fetch imports nothing.

An empty line or end of input ends the session. An unknown command is an
error. Every answer is flushed. When anything fails before `finish`, the
helper drops what it imported, so no ref changes.
"""

import os
import sys

from cinnabar import config, git, hg, refs
from cinnabar.errors import Abort
from cinnabar.helper import Helper, needed as helper_needed
from cinnabar.ids import NULL_GIT
from cinnabar.hg.url import parse_url, url_scheme
from cinnabar.redact import redact_text, say
from cinnabar.trace import Tracer

# `capabilities` and `list` are all a fetch with nothing new asks for, and
# people run it all day: the modules only `import` and `push` need are
# imported where they are used, so that such a fetch does not load them
# (bench/fetch_noop.py).

CAPABILITIES = (
    'option',
    'import',
    'push',
    'refspec refs/heads/*:refs/cinnabar/refs/heads/*',
    'refspec hg/*:refs/cinnabar/hg/*',
    'refspec HEAD:refs/cinnabar/HEAD',
)
# Where git reads what we import (refs.FETCH_REFS are under it).
PRIVATE_PREFIX = 'refs/cinnabar/'


# How far up our ancestors to look for the `git fetch` running us: git
# runs `git remote-hg`, which runs git-remote-hg.
FETCH_ANCESTORS = 4


def _proc_fields(pid):
    """(parent pid, [command line words]) of `pid` from Linux's /proc,
    or None."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            parent = int(f.read().rsplit(b')', 1)[1].split()[1])
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return parent, f.read().split(b'\0')
    except (OSError, ValueError, IndexError):
        return None


def _ancestors():
    """(pid, [command line words]) of our parent, its parent, ... up to
    FETCH_ANCESTORS of them (Linux's /proc; elsewhere, none)."""
    pid = os.getppid()
    for _ in range(FETCH_ANCESTORS):
        fields = _proc_fields(pid)
        if fields is None:
            return
        parent, args = fields
        yield pid, args
        pid = parent


def fetch_prunes():
    """Whether the `git fetch` that runs us prunes (`--prune`, `-p`): git
    tells a remote helper nothing of it, but its command line says so
    (Linux's /proc; elsewhere, unknown: False)."""
    for _, args in _ancestors():
        if b'fetch' in args:
            return _prunes(args[args.index(b'fetch') + 1:])
    return False


def _prunes(args):
    """Whether `git fetch <args>` prunes."""
    prune = False
    for arg in args:
        if arg == b'--':
            break
        if arg in (b'--prune', b'-p'):
            prune = True
        elif arg == b'--no-prune':
            prune = False
    return prune


# What `git <command>` runs an import for us.
IMPORTING_COMMANDS = (b'fetch', b'clone')
# git's options that take the next word as their value.
_GIT_VALUE_OPTIONS = (b'-c', b'-C', b'--git-dir', b'--work-tree',
                      b'--namespace', b'--config-env', b'--exec-path')
# Time a git interrupted takes to end (its cleanups: a clone's removal).
STOP_SECONDS = 3


def _git_command(args):
    """The command word of a git command line (`fetch` in `git -c a=b
    fetch x`), or None."""
    name = os.path.basename(args[0]) if args else b''
    if name.startswith(b'git-'):
        return name[len(b'git-'):]
    if name != b'git':
        return None
    words = iter(args[1:])
    for word in words:
        if word in _GIT_VALUE_OPTIONS:
            next(words, None)
        elif not word.startswith(b'-'):
            return word
    return None


def _importing_git():
    """The pid of the `git fetch` or `git clone` we import for (Linux's
    /proc: git runs `git remote-hg`, which runs us), or None."""
    for pid, args in _ancestors():
        if _git_command(args) in IMPORTING_COMMANDS:
            return pid
    return None


def stop_git(remote):
    """After a failed import, once our error is said and our cleanups ran:
    keep git from going on as if it had succeeded, without a word of its
    own.

    git (transport-helper.c, fetch_with_import) waits for its fast-import
    to read our stream to its end, and then reads the fetch refs of what
    it asked for: it then goes on with what it finds there, whatever our
    exit status (it ignores it), and dies saying it "could not read ref
    refs/cinnabar/..." when one is missing. A fast-import whose stream
    ends before `done` (`feature done`) or that fails another way dies
    with a message and a crash report in .git, and git then says "error
    while running fast-import". git reads nothing more from us after an
    import, so it cannot be told by our silence either (as it is before
    the import, cinnabar.remote_main). So the fetch refs stay as they
    were (the repository as before the fetch, as after a SIGKILL), and we
    end that git as Ctrl-C would, by SIGINT, which its handlers take as
    an interruption (its own cleanups, a clone's directory removed, exit
    status 130), in silence, and which shells and git's run_command (git
    pull) do not report either. Where we find no such git among our
    ancestors (another frontend, no /proc), or when it outlives the
    signal (its handlers end it by the signal again, with the disposition
    it inherited: a git started in the background by a shell script
    ignores SIGINT), the fetch refs git asked for are deleted instead: git
    then fails reading them."""
    if not getattr(remote, 'import_failed', False):
        return
    pid = _importing_git()
    if pid is None or not _interrupt(pid):
        git.delete_refs(refs.FETCH_REFS, remote._wanted_private or None)


def _interrupt(pid):
    """SIGINT to `pid`; whether it is gone within STOP_SECONDS (it waits
    for its fast-import, which waits for our stream to end: it cannot
    have read the fetch refs yet)."""
    import signal
    import time
    from cinnabar import tmpfiles
    try:
        os.kill(pid, signal.SIGINT)
    except OSError:
        return False
    deadline = time.monotonic() + STOP_SECONDS
    while time.monotonic() < deadline:
        if tmpfiles.process_gone(pid):
            return True
        time.sleep(0.01)
    return False


class RemoteHelper:
    """One session of the remote-helper protocol with git."""

    def __init__(self, remote, url, stdin, stdout, resources, spawned=None):
        """`spawned`: the helper, if the caller started it already (see
        cinnabar.remote_main), without waiting for it."""
        self.remote = remote
        self.url = url
        self._stdin = stdin
        self._stdout = stdout
        self._resources = resources
        self._git_dir = git.git_dir()
        self._helper = None
        self._spawned = spawned
        # git's configuration (the tracer reads it) and the helper start
        # side by side while we wait for git's first command.
        git.read_config_soon()
        self._spawn_helper()
        self._trace = Tracer('remote-helper')
        self._peer = None
        self._state = None
        self._ref_list = None
        # A stream bundle file imported when listing, to finish.
        self._stream_bundle_pending = False
        # Whether git listed refs to fetch, and asked for no import.
        self._fetch_listed = self._imported = False
        # Whether an import began and did not end well (see stop_git).
        self.import_failed = False
        self._wanted_private = []
        # What git asked for: passed on to the helper when it starts.
        self.verbosity = 1
        self.progress = None
        self.dry_run = False
        self.force = False
        self._commands = {
            'capabilities': self.capabilities,
            'option': self.option,
            'list': self.list,
            'import': self.import_,
            'push': self.push,
        }

    # Talking to git.

    def _read_line(self):
        line = self._stdin.readline()
        self._trace.received(line)
        return line.rstrip(b'\n').decode('utf-8', 'surrogateescape')

    def _write(self, *lines):
        for line in lines:
            self._trace.sent(line)
            self._stdout.write(line.encode('utf-8', 'surrogateescape')
                               + b'\n')
        self._stdout.flush()

    def run(self):
        while True:
            line = self._read_line()
            if not line:
                self._warn_if_damaged()
                return
            name, _, argument = line.partition(' ')
            command = self._commands.get(name)
            if command is None:
                raise Abort('unknown remote-helper command from git: %r'
                            % line)
            command(argument)

    def _warn_if_damaged(self):
        """A fetch with nothing new writes nothing, and so passes on
        metadata `git cinnabar fsck` found damaged (an import or a push
        refuses it): it still says so, with the way out."""
        if not self._fetch_listed or self._imported or not self._git_dir:
            return
        from cinnabar import metadata
        damaged = metadata.damage_seen(self._git_dir)
        if damaged:
            sys.stderr.write('warning: the cinnabar metadata is damaged '
                             '(`git cinnabar fsck` found problems in %s)\n'
                             'hint: %s\n'
                             % (damaged, metadata.recovery_hint(damaged)))
            sys.stderr.flush()

    # Lazily started helper and connection.

    def _spawn_helper(self):
        """Start the helper when this session will need one (see `peer`),
        without waiting for it: it loads while git's configuration is read
        and git asks for our capabilities and the list (its start was a
        fifth of a fetch with nothing new)."""
        needs_helper = helper_needed(self._git_dir, parse_url(self.url).scheme)
        if self._helper is None and self._spawned is None and needs_helper:
            self._spawned = self._resources.enter_context(
                Helper.spawn(self._git_dir))

    def helper(self):
        if self._helper is None:
            spawned, self._spawned = self._spawned, None
            self._helper = spawned.ready() if spawned else \
                self._resources.enter_context(Helper.start(self._git_dir))
            if self.progress is not None or self.verbosity < 1:
                from cinnabar import progress
                self._helper.set_progress(
                    progress.shown(self.progress, self.verbosity))
        return self._helper

    def peer(self):
        if self._peer is None:
            url = parse_url(self.url)
            # The transport is loaded before waiting for the helper,
            # which may still be loading its libraries (a fetch with
            # nothing new).
            connect = hg.connector(url.scheme)
            # Outside a git repository, only HTTP needs the helper.
            helper = self.helper() if helper_needed(
                self._git_dir, url.scheme) else None
            self._peer = connect(url, helper)
            self._resources.callback(self._peer.close)
        return self._peer

    # Commands.

    def capabilities(self, argument):
        self._write(*CAPABILITIES, '')

    def option(self, argument):
        self._write('ok' if self._set_option(argument) else 'unsupported')

    def _set_option(self, argument):
        """Take an option; False when it is not one we support."""
        name, _, value = argument.partition(' ')
        if name == 'verbosity' and value.isdigit():
            self.verbosity = int(value)
        elif name == 'cloning' and value in ('true', 'false'):
            if value == 'true':
                self._store_absolute_url()
        elif name in ('progress', 'dry-run', 'force') and value in (
                'true', 'false'):
            setattr(self, name.replace('-', '_'), value == 'true')
        else:
            return False
        return True

    def _store_absolute_url(self):
        """In a clone from a relative local path (`git clone
        hg::../repo`), store the remote's URL as an absolute path, as `git
        clone ../repo` does: git stores the URL as typed, relative to
        where the clone ran, and later fetches run in the work tree. git
        runs us where `git clone` runs, where the path means what was
        typed."""
        if not self.remote or url_scheme(self.url) is not None or \
                self.url.startswith(('/', '~')):
            return
        key = 'remote.%s.url' % self.remote
        if git.config(key) != 'hg::' + self.url:
            return
        path = parse_url(self.url).path
        git.run(['config', key, 'hg::' + path])

    def list(self, argument):
        if argument not in ('', 'for-push'):
            raise Abort('unknown list argument from git: %r' % argument)
        ref_list = self._list_refs(argument == 'for-push')
        self._fetch_listed = argument != 'for-push'
        for warning in ref_list.warnings:
            sys.stderr.write('warning: %s\n' % warning)
        git_ids = self._git_ids([hg_id for _, hg_id in ref_list.refs])
        lines = ['@%s HEAD' % ref_list.head] if ref_list.head else []
        lines += ['%s %s' % (git_ids[hg_id], name)
                  for name, hg_id in ref_list.refs]
        self._write(*lines, '')

    def _list_refs(self, for_push):
        if self._state is None:
            if getattr(self.peer(), 'stream', False):
                self._import_stream_bundle(self.peer(), for_push)
            self._state = self.peer().state()
        self._ref_list = refs.layout(self._state, self._styles(for_push))
        if not for_push and self._git_dir and self._wants_tags():
            self._ref_list = self._with_tags(self._ref_list)
        return self._ref_list

    def _import_stream_bundle(self, peer, for_push):
        """Import the stream bundle file `peer` now (pending `finish`, at
        the fetch): its heads are known only then. As `hg unbundle` applies
        one only to an empty repository, only into metadata without
        changesets."""
        from cinnabar import streamclone
        if for_push:
            raise Abort('%s is a bundle file: it cannot be pushed to'
                        % peer.description)
        helper = self.helper()
        if helper.heads():
            raise Abort('%s is a stream bundle: it can only be cloned, into '
                        'a repository without Mercurial changesets'
                        % peer.description,
                        hint='fetch from the repository it was made from, '
                             'or from a bundle of changesets (`hg bundle`)')
        self._say('Importing the stream bundle %s' % peer.description)
        counts = streamclone.import_bundle_file(helper, peer.path,
                                                self._git_dir)
        self._say('stream clone: %d changesets, %d manifests, %d files'
                  % counts)
        peer.imported(helper.heads())
        self._stream_bundle_pending = True

    def _wants_tags(self):
        """Whether this remote lists the Mercurial tags: only when the
        user set git's own `remote.<remote>.tagOpt` to `--tags` (fetch
        all tags from it). Otherwise, as with git-cinnabar, tags are not
        listed, and so not followed by `git fetch` (`git cinnabar fetch
        --tags` makes them): git tells a remote helper nothing of
        `git fetch --tags` before asking for the list."""
        return bool(self.remote) and \
            git.config('remote.%s.tagOpt' % self.remote) == '--tags'

    def _with_tags(self, ref_list):
        """The ref list and `refs/tags/<name>` for the Mercurial tags of
        what was fetched so far (see cinnabar.tags)."""
        from cinnabar import tags
        found = tags.known_tags(self.helper())
        listed = dict(ref_list.refs)
        for name, (hg_id, _) in found.tags.items():
            listed['refs/tags/' + name] = hg_id
        return refs.RefList(sorted(listed.items()), ref_list.head,
                            ref_list.warnings + found.warnings)

    def _styles(self, for_push):
        setting = None
        if for_push:
            setting = config.lookup('pushrefs', self.remote)
        if not setting:
            setting = config.lookup('refs', self.remote)
        return refs.parse_style(setting)

    def _git_ids(self, hg_ids):
        """{HgId: git id or '?'} from the metadata (all `?` outside a
        git repository)."""
        hg_ids = list(dict.fromkeys(hg_ids))
        if self._git_dir is None or not hg_ids:
            return {h: '?' for h in hg_ids}
        git_ids = self.helper().hg2git_many(hg_ids)
        return {h: '?' if g.is_null else g for h, g in zip(hg_ids, git_ids)}

    def import_(self, argument):
        from cinnabar import metadata, snapshots
        names = [argument]
        while True:
            line = self._read_line()
            if not line:
                break
            command, _, name = line.partition(' ')
            if command != 'import':
                raise Abort('unexpected %r in a batch of imports' % line)
            names.append(name)
        self._imported = True
        self.import_failed = True
        wanted = self._resolve(names)
        listed = None
        # Damaged or foreign metadata is not written to (fsck, upgrade).
        # The snapshot (for rollback) has the refs as they are, fetch refs
        # included. Those stay as they are until the import succeeded:
        # killed before, the fetch leaves them as it found them.
        if self._git_dir is not None:
            listed = snapshots.save(self._git_dir, metadata.check_usable())
        resets = self._fetch(wanted)
        # The fetch refs git did not ask for go (a branch gone on the
        # server); git reads the others once our stream ends.
        private = {PRIVATE_PREFIX + name for name in wanted}
        self._wanted_private = sorted(private)
        if listed is None:
            listed = git.run(['for-each-ref', '--format=%(refname)']
                             + list(refs.FETCH_REFS)).stdout.decode(
                                 'utf-8', 'surrogateescape').splitlines()
        git.delete_refs(refs.FETCH_REFS,
                        [name for name in listed if name not in private])
        self._write(*resets)
        self.import_failed = False
        self._recommend_prune()

    def _recommend_prune(self):
        """With one ref per head (`heads` in cinnabar.refs), refs of heads
        that went away stay unless git prunes them: say so, in
        git-cinnabar's words, after a fetch from a named remote unless
        fetch.prune (else remote.<remote>.prune) is true; not with -q, nor
        when this fetch prunes."""
        if self.verbosity < 1 or not self.remote or (
                'heads' not in self._styles(False)) or fetch_prunes():
            return
        key = 'remote.%s.prune' % self.remote
        value = git.config('fetch.prune')
        if value is None:
            value = git.config(key)
        if value != 'true':
            sys.stderr.write('It is recommended that you set "%s" or '
                             '"fetch.prune" to "true".\n'
                             '  git config %s true\nor\n'
                             '  git config fetch.prune true\n' % (key, key))
            sys.stderr.flush()

    def _resolve(self, names):
        """{ref name: HgId} for the refs git asked for."""
        if self._ref_list is None:
            self._list_refs(False)
        known = dict(self._ref_list.refs)
        wanted = {}
        for name in names:
            target = self._ref_list.head if name == 'HEAD' else name
            if target not in known:
                raise Abort("couldn't find remote ref %s" % name)
            wanted[name] = known[target]
        return wanted

    def _fetch(self, wanted):
        """Fetch what `wanted` ({ref name: HgId}) needs; the lines of the
        stream for git, made before the metadata is committed (`finish`):
        what fails after it leaves the metadata updated, the refs not."""
        from cinnabar import discovery, graft, tags
        hg_ids = list(wanted.values())
        tags_before = tags.before_import(self.helper(), self._git_dir)
        seed, grafting = self._seed_and_graft()
        helper = self.helper()
        plan = discovery.plan_fetch(self.peer(), helper, self._state, hg_ids)
        if plan is not None:
            self.peer().getbundle(helper, plan.heads, plan.common)
        if grafting:
            graft.check(helper, self._say)
        resets = self._resets(wanted)
        if plan is not None or seed is not None or (
                self._stream_bundle_pending):
            helper.finish()
            if tags.changed_by_import(helper, tags_before,
                                      self._git_dir):
                self._say('\n' + tags.UPDATE_HINT)
        if seed is not None:
            seed.discard()
        return resets

    def _seed_and_graft(self):
        """(seed, grafting): seed an empty metadata (cinnabarclone, else
        a clone bundle; the seed to discard after `finish`, or None), and
        give the helper the graft candidates (cinnabar.graft) before any
        changeset is imported; `grafting` says whether it has any."""
        from cinnabar import graft
        seed = self._cinnabar_clone()
        # After cinnabarclone, which starts a new helper.
        grafting = self._git_dir is not None and graft.prepare(
            self.helper(), self.remote)
        if seed is None:
            helper = self.helper()
            seed = self._clone_bundle()
            if grafting and self.helper() is not helper:
                # The clone bundle failed: a new helper, without them.
                grafting = graft.prepare(self.helper(), self.remote)
        if seed is None:
            seed = self._stream_clone()
        return seed, grafting

    def _stream_clone(self):
        """Seed a clone (empty metadata) from the server's revlogs when
        `cinnabar.stream` says so (see cinnabar.streamclone)."""
        from cinnabar import progress, streamclone
        from cinnabar.hg.wire import Peer
        if self._git_dir is None or self.helper().heads():
            return None
        peer = self.peer()
        if not isinstance(peer, Peer):
            return None  # a bundle file
        asked, seed = streamclone.seed_clone(
            peer, self.helper(), self._git_dir, self.remote, self._say,
            progress.shown(self.progress, self.verbosity))
        if asked:
            # The stream's connection is spent (stdio): a new one.
            self._peer = None
        return seed

    def _clone_bundle(self):
        """Seed a clone (empty metadata) from the server's clone bundle
        (see cinnabar.clonebundles); a failure is a warning, and the
        fetch goes on as if there had been no clone bundle."""
        from cinnabar import clonebundles
        if self._git_dir is None or self.helper().heads():
            return None
        try:
            return clonebundles.seed_clone(self.peer(), self.helper(),
                                           self._git_dir, self.remote,
                                           self._say)
        except clonebundles.SettingError:
            raise
        except Abort as error:
            say('warning: the clone bundle failed: %s\n'
                'warning: falling back to a normal clone' % error.message)
            self._drop_dead_helper()
            return None

    def _cinnabar_clone(self):
        """Install the metadata cinnabarclone points to, then start the
        helper again on it; None when not used or failed (warned)."""
        from cinnabar import cinnabarclone, clonebundles
        if self._git_dir is None or self.helper().heads():
            return None
        try:
            seed = cinnabarclone.seed_clone(
                self.peer(), self.helper(), self._git_dir, self.remote,
                self.url, self._say)
        except clonebundles.SettingError:
            raise
        except Abort as error:
            if config.check('cinnabarclone'):
                # `cinnabar.check=cinnabarclone`, as git-cinnabar: no
                # other way of cloning.
                raise Abort('cinnabarclone failed: %s' % error.message,
                            hint=error.hint)
            say('warning: cinnabarclone failed: %s\n'
                'warning: falling back to a normal clone' % error.message)
            self._drop_dead_helper()
            return None
        if seed is not None:
            self._restart_helper()
        return seed

    def _restart_helper(self):
        """A new helper, which reads the metadata as the refs have it
        now (and the packs git added); an HTTP connection goes through
        the helper, so it is made again too."""
        self._helper.close()
        self._drop_dead_helper()

    def _say(self, text):
        """Progress for people on stderr; only warnings with -q."""
        if self.verbosity >= 1 or text.startswith('warning:'):
            say(text)

    def _drop_dead_helper(self):
        """After the helper exited (an import failed), the next one
        starts afresh; an HTTP connection, which goes through the helper,
        too."""
        if self._helper is None or self._helper.alive:
            return
        self._helper = None
        if parse_url(self.url).scheme in ('http', 'https'):
            self._peer = None

    def push(self, argument):
        from cinnabar import metadata, push
        specs = [push.parse_push(argument)]
        while True:
            line = self._read_line()
            if not line:
                break
            command, _, rest = line.partition(' ')
            if command == 'option':
                # Options inside a batch get no answer.
                self._set_option(rest)
                continue
            if command != 'push':
                raise Abort('unexpected %r in a batch of pushes' % line)
            specs.append(push.parse_push(rest))
        if self._git_dir is None:
            raise Abort('pushing needs a git repository')
        metadata.check_usable()
        if self._state is None:
            self._state = self.peer().state()
        pusher = push.Pusher(self.peer(), self.helper(), self._state,
                             self._styles(True), force=self.force,
                             dry_run=self.dry_run, remote=self.remote,
                             quiet=self.verbosity < 1)
        results = pusher.push(specs)
        # What the server has now is not what we listed.
        self._state = self._ref_list = None
        # git reads one line per ref.
        self._write(*['ok %s' % dst if error is None
                      else 'error %s %s' % (dst, redact_text(
                          ' '.join(error.split())))
                      for dst, error in results], '')

    def _resets(self, wanted):
        """The fast-import stream setting the fetch refs of `wanted`."""
        git_ids = self.helper().hg2git_many(list(wanted.values()))
        lines = []
        for (name, hg_id), git_id in zip(wanted.items(), git_ids):
            if git_id == NULL_GIT:
                raise Abort('the server did not send changeset %s' % hg_id)
            lines += ['reset %s%s' % (PRIVATE_PREFIX, name),
                      'from %s' % git_id, '']
        # Nothing is written before the fetch succeeded (a failure ends
        # the session: see stop_git). `feature force`: a fetch ref moves
        # where the server's branch went, a descendant or not of where it
        # was (fast-import refuses a non-fast-forward otherwise).
        return ['feature done', 'feature force', *lines, 'done']
