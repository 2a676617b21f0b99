"""Temporary files: removed on every way out, and what a killed run left
removed by the next one.

Our own temporary files are removed by `finally` blocks and `with`
statements; SIGTERM and SIGHUP are raised as Ctrl-C's KeyboardInterrupt is
(cinnabar.errors.run_guarded), so those run for them too. SIGKILL leaves
them; so the next run removes what a dead run left, never what a live one
may use, in the way of the cinnabarclone quarantine (cinnabar.quarantine)
and of the helper's checkpoint packs (helper/store.c):

- a file or directory named `<prefix><pid>-<random>` (`own_prefix`,
  `private_dir`): `remove_stale` removes those whose process is gone (and
  those of a version that did not name the process, once STALE_SECONDS
  old). The stream spools of the git dir (cinnabar.hg.streamreader), the
  bundles an `hg::http://host/x.hg` downloads to TMPDIR, and the files
  the helper writes its caches into before renaming them into place
  (`.git/cinnabar/<map>-<pid>-<random>`, helper/notes-map.c, and
  `.git/cinnabar/manifests/text-<pid>-<random>`, helper/manifest-cache.c:
  `remove_stale_caches`) are named so.
- git's lock files of the metadata refs, which a helper killed while it
  updates them leaves: `remove_stale_ref_locks`, once they are older
  than any live transaction holds them.

`git fetch` runs `git fast-import` for our `import` command, which creates
`objects/pack/tmp_pack_<random>` as it starts and writes into it only when
it gets objects (never from us: we only send refs). git removes it when
fast-import ends, but not when a signal kills it, and a terminal's Ctrl-C
goes to the whole process group. So `importer_packs` notes the tmp_pack
files there when the remote helper starts (git starts fast-import only
later, for the first `import`) and, when the session fails (interrupted,
or failing as the helper dies of the same signal), removes the empty ones
that appeared since: a pack nobody wrote a byte into (a fast-import still
alive would have removed its own; git ignores one already gone). Empty
ones older than STALE_SECONDS are removed when a session starts (git's own
`gc` waits two weeks, but also for packs with data).
"""

import os
import time

# shutil and tempfile (which load re) are imported where a spool needs
# them: git-remote-hg loads this module before the helper starts
# (cinnabar.remote_main).

TMP_PACK = 'tmp_pack_'
# What a live process could not have left untouched for so long.
STALE_SECONDS = 3600


def process_gone(pid):
    """Whether process `pid` ended (a zombie nobody reaped yet too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False    # there, but someone else's
    return _zombie(pid)


def _zombie(pid):
    """Linux's /proc says so: `<pid> (<name>) Z ...`; elsewhere, no."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            return f.read().rsplit(b')', 1)[1].split()[:1] == [b'Z']
    except (OSError, IndexError):
        return False


def _older_than(path, seconds):
    try:
        return time.time() - os.lstat(path).st_mtime > seconds
    except OSError:
        return False


def _owner(name, prefix):
    """The process id in a name `<prefix><pid>-<random>`, or None."""
    pid, dash, _ = name[len(prefix):].partition('-')
    return int(pid) if dash and pid.isascii() and pid.isdigit() else None


def own_prefix(prefix):
    """`prefix` followed by this process's id, for a temporary name (see
    remove_stale)."""
    return '%s%d-' % (prefix, os.getpid())


def system_temp_dir():
    """The system's temporary directory, chosen as Python's tempfile does
    (TMPDIR, TEMP, TMP, then /tmp, /var/tmp, /usr/tmp) but without its
    probe: tempfile writes a file of a random name there and removes it,
    and a process killed in between leaves it, under a name nobody could
    tell from another's. Once chosen, tempfile uses it too, unprobed."""
    import tempfile
    if tempfile.tempdir is None:
        candidates = [os.environ.get(name) for name in ('TMPDIR', 'TEMP',
                                                        'TMP')]
        for candidate in candidates + ['/tmp', '/var/tmp', '/usr/tmp']:
            if candidate and os.path.isdir(candidate) and \
                    os.access(candidate, os.W_OK | os.X_OK):
                tempfile.tempdir = os.path.abspath(candidate)
                break
    return tempfile.gettempdir()


def private_dir(parent, prefix):
    """A new directory under `parent` (None: the system's temporary
    directory), named after this process (see remove_stale)."""
    import tempfile
    return tempfile.mkdtemp(prefix=own_prefix(prefix),
                            dir=parent or system_temp_dir())


def remove_stale(parent, prefix):
    """Remove the files and directories `<prefix>...` of `parent` (None:
    the system's temporary directory) whose process is gone."""
    if parent is None:
        parent = system_temp_dir()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix):
            continue
        path = os.path.join(parent, name)
        pid = _owner(name, prefix)
        stale = (process_gone(pid) if pid is not None
                 else _older_than(path, STALE_SECONDS))
        if stale and pid != os.getpid():
            _remove_tree_or_file(path)


# Where the helper writes its caches before renaming them into place:
# (directory under .git/cinnabar, name prefixes), one per id map.
CACHE_SPOOLS = (('', ('hg2git-', 'git2hg-', 'files-meta-', 'ids-')),
                ('manifests', ('text-',)))


def remove_stale_caches(common_dir):
    """Remove what killed helpers left of the caches they were writing
    under `common_dir`/cinnabar (see the module docstring)."""
    for sub, prefixes in CACHE_SPOOLS:
        parent = os.path.join(common_dir, 'cinnabar', sub)
        for prefix in prefixes:
            remove_stale(parent, prefix)


# git's lock files of the refs the helper updates (helper/metadata.c),
# beside them: a helper killed in the middle of that update leaves them,
# and every later update fails on them. git holds such a lock for the
# milliseconds of one transaction, so one this old once we hold the
# repository lock (cinnabar.repolock, which removes them as it takes it:
# no other git-cinnabar process updates these refs) is stale.
METADATA_REF_LOCKS = ('refs/cinnabar/metadata.lock',
                      'refs/notes/cinnabar.lock')
REF_LOCK_SECONDS = 2.0


def remove_stale_ref_locks(common_dir):
    """Remove the lock files of the metadata refs that a killed helper
    left under `common_dir`, once REF_LOCK_SECONDS old (waiting for those
    younger, which a git command may still hold)."""
    for name in METADATA_REF_LOCKS:
        path = os.path.join(common_dir, name)
        while True:
            try:
                age = time.time() - os.lstat(path).st_mtime
            except OSError:
                break
            if age >= REF_LOCK_SECONDS:
                remove_files([path])
                break
            time.sleep(min(0.1, REF_LOCK_SECONDS - age))


def _remove_tree_or_file(path):
    if os.path.isdir(path) and not os.path.islink(path):
        import shutil
        shutil.rmtree(path, ignore_errors=True)
    else:
        remove_files([path])


def _pack_dir(git_dir):
    objects = os.environ.get('GIT_OBJECT_DIRECTORY') or os.path.join(
        git_dir, 'objects')
    return os.path.join(objects, 'pack')


def _empty_tmp_packs(directory):
    """{name: mtime} of the empty tmp_pack files of `directory`."""
    found = {}
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return found
    for entry in entries:
        if entry.name.startswith(TMP_PACK):
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_size == 0:
                found[entry.name] = info.st_mtime
    return found


def remove_files(paths):
    """Remove the files that are there of `paths`."""
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def _unlink_all(directory, names):
    remove_files(os.path.join(directory, name) for name in names)


def importer_packs(git_dir):
    """For a remote helper session in `git_dir` (None: nothing to do):
    remove stale empty tmp_pack files, and on an interruption the empty
    ones made since it started (see the module docstring)."""
    return _ImporterPacks(git_dir)


class _ImporterPacks:
    """What `importer_packs` returns (a class: git-remote-hg does not load
    contextlib, see cinnabar.repolock's _Lock)."""

    def __init__(self, git_dir):
        self._directory = None if git_dir is None else _pack_dir(git_dir)
        self._before = {}

    def __enter__(self):
        if self._directory is None:
            return self
        self._before = _empty_tmp_packs(self._directory)
        now = time.time()
        _unlink_all(self._directory, [
            name for name, mtime in self._before.items()
            if now - mtime > STALE_SECONDS])
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None and self._directory is not None:
            _unlink_all(self._directory, set(
                _empty_tmp_packs(self._directory)) - set(self._before))
