"""Mercurial repositories of any size, from the corpus's generator.

`../shared/corpus/scale/gen-fastimport.py N_FILES N_COMMITS [SEED]`
writes a git fast-import stream: one commit adding N_FILES files, then
N_COMMITS commits changing 1-3 files each (and adding one in about 10% of
them).  The corpus's manifest100k.hg is that stream for 100000 files,
10000 commits, seed 42, converted by Mercurial's convert extension with
`convert.git.saverev=false` (no `convert_revision` extra) and
`convert.git.findcopiesharder=true` (a new file with the content of an
existing one is recorded as a copy of it): converting the stream that way
gives its changeset ids exactly (checked on its first 200 changesets).
Repositories made here are made the same way, so that they are
comparable.

The stream of N commits is the beginning of the stream of M > N commits
(same seed: the random draws come in the same order), so:

- a repository of N commits is a prefix of any made with more commits
  (`hg clone -U -r N`, revision N being commit N after the initial one);
- a repository of M commits is the conversion of the stream of M commits
  continued from one of fewer commits (convert's `.hg/shamap`, git commit
  -> hg changeset, written for the commits that repository already has).

Shapes of method 'fixed' are made as 'bundle' ones from the same stream
with the files it adds after its first commit taken out: each change to
such a file is made to one of the first commit's files instead (see
FixedWidth), so the history keeps its width, N_FILES files, all along.
They tell what grows with history from what grows with width.

Converting is slow, its cost per commit growing with the files at tip:
shapes of method 'bundle' are made instead with our `git cinnabar
bundle` of the fast-imported stream, many times cheaper per commit, and
`hg unbundle`, then checked with `hg verify`.  Those have no copy
information (it gives convert's ids up to the first copy), so they are
kept apart from converted ones.

Each repository is kept under build/bench-data/scale/ by its parameters
(f<files>-c<commits>-s<seed>[-bundle]/hg, with a READY file holding the tip id
once complete), so that runs after the first only read them.  A 'bundle'
shape left unfinished (its git/ holding the whole stream, its hg/ a
prefix) is continued from the prefix hg has, once checked against the
metadata of git/.
"""

import re
import shutil
import subprocess
import time
from pathlib import Path

CACHE = Path(__file__).resolve().parents[1] / 'build' / 'bench-data' / 'scale'
CORPUS_SHAPE = (100000, 10000, 42)  # what manifest100k.hg holds
CONVERT_CONFIG = ['--config', 'extensions.convert=',
                  '--config', 'convert.git.saverev=false',
                  '--config', 'convert.git.findcopiesharder=true']
NICE = ['nice', '-n', '10']
BUNDLE_CHUNK = 2000


class GenerationError(Exception):
    pass


class FixedWidth:
    """gen-fastimport.py's stream with no file added after the first
    commit: a change to a path the first commit does not have is made to
    the first commit's path number <the path's digits> modulo their
    count instead.  Blobs and marks are untouched (a blob only the
    dropped paths used stays unreferenced)."""

    def __init__(self, source, sink):
        self.source, self.sink = source, sink
        self.first = None  # the first commit's paths, in order
        self.known = set()

    def run(self):
        read, write = self.source.readline, self.sink.write
        commits = 0
        while True:
            line = read()
            if not line:
                break
            if line.startswith(b'data '):
                write(line)
                write(self.source.read(int(line[5:])))
                continue
            if line.startswith(b'commit '):
                commits += 1
                if commits == 2:
                    self.first = sorted(self.known)
            elif line.startswith(b'M ') and commits:
                line = self._change(line, commits == 1)
            write(line)

    def _change(self, line, initial):
        mode, mark, path = line[2:].rstrip(b'\n').split(b' ', 2)
        if initial:
            self.known.add(path)
        elif path not in self.known:
            number = int(b"".join(re.findall(rb"\d", path)))
            path = self.first[number % len(self.first)]
        return b'M %s %s %s\n' % (mode, mark, path)


class Shape:
    """A history from the generator: files, commits after the first,
    random seed."""

    def __init__(self, files, commits, seed=42, method='convert'):
        self.files, self.commits, self.seed = files, commits, seed
        self.method = method

    @property
    def bundled(self):
        """Whether made with our `git cinnabar bundle` (not convert)."""
        return self.method in ('bundle', 'fixed')

    @property
    def key(self):
        suffix = '' if self.method == 'convert' else f'-{self.method}'
        return f'f{self.files}-c{self.commits}-s{self.seed}{suffix}'

    @property
    def changesets(self):
        return self.commits + 1

    def __str__(self):
        return (f'{self.files} files, {self.changesets} changesets '
                f'(seed {self.seed}, {self.method})')


def run(args, **kwargs):
    """Run `args`; raise GenerationError with its stderr on failure."""
    proc = subprocess.run(args, stdin=kwargs.pop('stdin', subprocess.DEVNULL),
                          stdout=kwargs.pop('stdout', subprocess.PIPE),
                          stderr=subprocess.PIPE, **kwargs)
    if proc.returncode:
        err = proc.stderr.decode(errors='replace')[-2000:]
        raise GenerationError(f'{" ".join(map(str, args))}: exit code '
                              f'{proc.returncode}\n{err}')
    return proc.stdout.decode() if proc.stdout else ''


class RepoMaker:
    """Makes (or finds in the cache) the hg repository of a Shape."""

    def __init__(self, hg, corpus, cache=CACHE, log=print):
        self.hg = hg
        self.corpus = corpus
        self.cache = cache
        self.log = log
        self.seconds = {}  # key -> generation wall time, made this run

    def ready(self, shape):
        return (self.cache / shape.key / 'READY').is_file()

    def repo(self, shape):
        """The repository of `shape`, made when not cached."""
        path = self.cache / shape.key / 'hg'
        if self.ready(shape):
            return path
        start = time.monotonic()
        workdir = self.cache / shape.key
        if not self._resumable(shape, path):
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
        self._make(shape, path)
        self._check(shape, path)
        self.seconds[shape.key] = time.monotonic() - start
        self.log(f'{shape.key}: made in {self.seconds[shape.key]:.0f} s')
        return path

    def _make(self, shape, path):
        if self._is_corpus(shape):
            self.log(f'{shape.key}: hg unbundle of the corpus bundle')
            run([self.hg, 'init', path])
            run(NICE + [self.hg, '-R', path, 'unbundle', '-q',
                        self.corpus / 'scale' / 'manifest100k.hg'])
            return
        longer = self._longer(shape)
        if longer:
            self.log(f'{shape.key}: first {shape.changesets} changesets '
                     f'of {longer.key}')
            run([self.hg, 'clone', '-U', '-q', '-r', str(shape.commits),
                 self.repo(longer), path])
            return
        unfinished = self._unfinished_longer(shape)
        if unfinished:
            self.log(f'{shape.key}: first {shape.changesets} changesets '
                     f'of unfinished {unfinished}, then hg verify')
            run([self.hg, 'clone', '-U', '-q', '-r', str(shape.commits),
                 unfinished, path])
            run(NICE + [self.hg, '-R', path, 'verify', '-q'])
            return
        gitdir = path.parent / 'git'
        if not self._stream_complete(shape, gitdir):
            self._fast_import(shape, gitdir)
        if shape.bundled:
            self._bundle(shape, gitdir, path)
        else:
            self._convert(shape, gitdir, path, self._shorter(shape))
        shutil.rmtree(gitdir)

    def _is_corpus(self, shape):
        return (shape.method == 'convert' and
                (shape.files, shape.commits, shape.seed) == CORPUS_SHAPE)

    def _same_stream(self, shape):
        """Shapes of the same stream (files, seed) in the cache or the
        corpus, the corpus's first."""
        found = []
        files, _, seed = CORPUS_SHAPE
        if ((shape.files, shape.seed, shape.method)
                == (files, seed, 'convert')):
            found.append(Shape(*CORPUS_SHAPE))
        prefix = f'f{shape.files}-c'
        for entry in sorted(self.cache.glob(prefix + '*')):
            commits = entry.name[len(prefix):].partition('-')[0]
            if not commits.isdigit():
                continue
            other = Shape(shape.files, int(commits), shape.seed,
                          shape.method)
            if other.key == entry.name and (entry / 'READY').is_file():
                found.append(other)
        return found

    def _longer(self, shape):
        """The shortest known shape of the same stream with more commits."""
        longer = [s for s in self._same_stream(shape)
                  if s.commits > shape.commits]
        return min(longer, key=lambda s: s.commits, default=None)

    def _unfinished_longer(self, shape):
        """The hg repository of an unfinished 'bundle' shape of the same
        stream that already has the changesets of `shape`, checked as
        for resuming it (see _resume_point), or None."""
        if not shape.bundled:
            return None
        prefix = f'f{shape.files}-c'
        for entry in sorted(self.cache.glob(f'{prefix}*-{shape.method}')):
            commits = entry.name[len(prefix):].partition('-')[0]
            other = Shape(shape.files, int(commits), shape.seed,
                          shape.method) if commits.isdigit() else None
            if (not other or other.key != entry.name
                    or other.commits <= shape.commits or self.ready(other)
                    or not self._resumable(other, entry / 'hg')):
                continue
            done = self._resume_point(entry / 'git', entry / 'hg',
                                      self._stream(entry / 'git'))
            if done >= shape.changesets:
                return entry / 'hg'
        return None

    def _shorter(self, shape):
        """The longest known shape of the same stream with fewer commits."""
        shorter = [s for s in self._same_stream(shape)
                   if s.commits < shape.commits]
        return max(shorter, key=lambda s: s.commits, default=None)

    def _stream_complete(self, shape, gitdir):
        """Whether `gitdir` holds the whole stream of `shape` (an
        interrupted fast-import has fewer commits, or none)."""
        proc = subprocess.run(['git', '-C', gitdir, 'log', '-1',
                               '--format=%s', 'master'],
                              capture_output=True)
        if proc.returncode:
            return False
        count = run(['git', '-C', gitdir, 'rev-list', '--count', 'master'])
        return (int(count) == shape.changesets
                and proc.stdout.decode().strip() == tip_subject(shape))

    def _resumable(self, shape, path):
        """Whether an interrupted run of _bundle left `path` and its git
        stream in a state to continue from (see _resume_point)."""
        if not shape.bundled or not (path / '.hg').is_dir():
            return False
        gitdir = path.parent / 'git'
        if not self._stream_complete(shape, gitdir):
            return False
        try:
            self._resume_point(gitdir, path, self._stream(gitdir))
        except GenerationError as e:
            self.log(f'{shape.key}: unfinished, not usable: {e}')
            return False
        return True

    def _stream(self, gitdir):
        return run(['git', '-C', gitdir, 'rev-list', '--reverse',
                    'master']).split()

    def _resume_point(self, gitdir, path, commits):
        """How many commits of the stream `path` already has, checked:
        its tip must be the changeset our metadata in `gitdir` gives for
        that commit (a changeset id covers all its ancestors, so the
        whole prefix is then the stream's).  A transaction `hg unbundle`
        left unfinished is rolled back first."""
        if (path / '.hg' / 'store' / 'journal').exists():
            run([self.hg, '-R', path, 'recover'])
        rev, _, node = run([self.hg, '-R', path, 'log', '-r', 'tip', '-T',
                            '{rev} {node}']).partition(' ')
        done = int(rev) + 1
        if not done:
            return 0
        if done > len(commits):
            raise GenerationError(f'{path} has {done} changesets, the '
                                  f'stream {len(commits)}')
        ours = run(['git', '-C', gitdir, 'cinnabar', 'git2hg',
                    commits[done - 1]]).strip()
        if ours != node:
            raise GenerationError(f'{path}: tip {node} is not commit '
                                  f'{commits[done - 1]} ({ours})')
        return done

    def _fast_import(self, shape, gitdir):
        shutil.rmtree(gitdir, ignore_errors=True)
        self.log(f'{shape.key}: git fast-import of gen-fastimport.py\'s '
                 f'stream')
        run(['git', 'init', '-q', '--bare', gitdir])
        gen = subprocess.Popen(
            NICE + ['python3', self.corpus / 'scale' / 'gen-fastimport.py',
                    str(shape.files), str(shape.commits), str(shape.seed)],
            stdout=subprocess.PIPE)
        fast_import = NICE + ['git', '-C', gitdir, 'fast-import', '--quiet']
        if shape.method == 'fixed':
            importer = subprocess.Popen(fast_import, stdin=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
            FixedWidth(gen.stdout, importer.stdin).run()
            importer.stdin.close()
            err = importer.stderr.read().decode(errors='replace')
            if importer.wait():
                raise GenerationError(f'git fast-import failed: {err}')
        else:
            run(fast_import, stdin=gen.stdout)
        gen.stdout.close()
        if gen.wait():
            raise GenerationError('gen-fastimport.py failed')

    def _bundle(self, shape, gitdir, path):
        """Bundle BUNDLE_CHUNK commits at a time (`git cinnabar bundle`
        holds about a manifest text per changeset until it ends), each
        chunk unbundled in git too so that the next one's parent is known
        to come from Mercurial (the commits unbundled are the very
        commits of the stream: same content, same ids)."""
        bundle = path.parent / 'bundle.hg'
        commits = self._stream(gitdir)
        if not (path / '.hg').is_dir():
            run([self.hg, 'init', path])
        done = self._resume_point(gitdir, path, commits)
        self.log(f'{shape.key}: git cinnabar bundle, hg unbundle by '
                 f'{BUNDLE_CHUNK} commits from {done}, then hg verify')
        start, first = time.monotonic(), done
        for end in range(done + BUNDLE_CHUNK, len(commits) + BUNDLE_CHUNK,
                         BUNDLE_CHUNK):
            end = min(end, len(commits))
            revs = [commits[end - 1]] + (
                [f'^{commits[done - 1]}'] if done else [])
            git = NICE + ['git', '-C', gitdir, 'cinnabar']
            run(git + ['bundle', '-t', 'none-v2', bundle, *revs])
            run(git + ['unbundle', bundle])
            run(NICE + [self.hg, '-R', path, 'unbundle', '-q', bundle])
            minutes = (time.monotonic() - start) / 60
            self.log(f'{shape.key}: {end} changesets, '
                     f'{(end - first) / minutes:.0f} per minute since the '
                     f'start of this run, load {load_average()}')
            done = end
        bundle.unlink(missing_ok=True)
        run(NICE + [self.hg, '-R', path, 'verify', '-q'])

    def _convert(self, shape, gitdir, path, start):
        if start:
            self.log(f'{shape.key}: continuing from {start.key}')
            run([self.hg, 'clone', '-U', '-q', self.repo(start), path])
            self._write_shamap(gitdir, path, start)
        self.log(f'{shape.key}: hg convert (nice)')
        run(NICE + [self.hg, *CONVERT_CONFIG, 'convert', '-q',
                    gitdir, path])
        run([self.hg, '-R', path, 'bookmark', '-d', 'master'])

    def _write_shamap(self, gitdir, path, start):
        """Tell convert that the first commits of the stream are the
        changesets `path` already has, after checking that they say the
        same (message and date of each)."""
        commits = run(['git', '-C', gitdir, 'log', '--reverse',
                       '--format=%H %at %s', 'master']).splitlines()
        nodes = run([self.hg, '-R', path, 'log', '-r', 'all()', '-T',
                     '{node} {date|hgdate} {desc|firstline}\n']).splitlines()
        if len(nodes) != start.changesets or len(commits) < len(nodes):
            raise GenerationError(f'{path}: {len(nodes)} changesets, '
                                  f'{len(commits)} commits in the stream')
        lines = []
        for commit, node in zip(commits, nodes):
            sha, date, subject = commit.split(' ', 2)
            hg_id, hg_date, _, hg_subject = node.split(' ', 3)
            if (date, subject) != (hg_date, hg_subject):
                raise GenerationError(f'{path}: changeset {hg_id} does not '
                                      f'match commit {sha} of the stream')
            lines.append(f'{sha} {hg_id}\n')
        (path / '.hg' / 'shamap').write_text(''.join(lines))

    def _check(self, shape, path):
        tip = run([self.hg, '-R', path, 'log', '-r', 'tip', '-T',
                   '{rev} {node} {desc}']).split(' ', 2)
        expected = [str(shape.commits), None, tip_subject(shape)]
        if tip[0] != expected[0] or tip[2] != expected[2]:
            raise GenerationError(f'{path}: tip is {" ".join(tip)}, '
                                  f'expected rev {expected[0]} '
                                  f'"{expected[2]}"')
        (path.parent / 'READY').write_text(tip[1] + '\n')


def tip_subject(shape):
    """The message of the last commit of the stream of `shape`."""
    return (f'change {shape.commits - 1}' if shape.commits
            else 'initial import')


def load_average():
    with open('/proc/loadavg') as f:
        return ' '.join(f.read().split()[:3])


def describe_generation():
    return (f'gen-fastimport.py streams through hg convert '
            f'({" ".join(CONVERT_CONFIG[1::2])}) or, methods bundle and '
            f'fixed (no file added), git cinnabar bundle + hg unbundle + '
            f'hg verify; '
            f'under {" ".join(NICE)}')
