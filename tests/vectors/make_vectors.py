"""Make the vectors of tests/vectors/ with git-cinnabar 0.7.5.

usage: build/venv/bin/python tests/vectors/make_vectors.py <git-cinnabar>
           [<hg>] [--only=<file>]

<git-cinnabar> is git-cinnabar 0.7.5's executable (e.g. from `cargo
install --locked --root /work/tools/gc075 git-cinnabar`:
/work/tools/gc075/bin/git-cinnabar); <hg> defaults to build/venv/bin/hg.
The repositories are the tests' own (same builders, fixed users and
dates, so the same changesets with every hg version); each is cloned with
git-cinnabar 0.7.5 alone (its git-remote-hg first on PATH, a HOME and
git config of its own), and what it made is written:

- odd-changesets.tsv: `<hg changeset>\\t<git commit>` for each crafted
  changeset of test_hostile_repos.ODD_CHANGESETS alone
  (write_single_odd_bundle), `failed` instead of the commit when
  git-cinnabar 0.7.5 fails to clone it;
- colliding.tsv: `<compat>:<name>\\t<id>` for
  test_dropin_metadata.make_colliding_repo, cloned without and with
  `cinnabar.compat=0.6` (`none`, `0.6`): the metadata commit and the
  commits of the heads of branches b1, b2, b3;
- push-copies.tsv: `<run>:<index>\t<hg changeset>` for each commit of
  the random histories of lib.vectors.PUSH_COPIES (lib.randhist
  without merges nor content starting with `\\1\\n`, `<run>`
  is `<seed>-<commits>-<similarity>`), written with git fast-import and
  pushed by git-cinnabar 0.7.5 to an empty hg repository (a local path)
  in the history's steps (lib.push_oracle.step_refspecs), with the
  `similarity=<n>` experiment unless `<similarity>` is `none`: the
  changeset each commit became (which copies it records);
- graft.tsv: `<case>:<hg changeset>\t<git commit>` (hg2git) and
  `<case>:replace:<replaced>\t<replacement>` (the metadata commit's
  tree), and `<case>:metadata\t<metadata commit>` but for the reclone,
  after a fetch with `cinnabar.graft=true` from
  test_graft.make_hg_repo's repository into a clone of each mirror of
  test_graft.MIRRORS (`<case>` is its kind), and, `<case>` `reclone`,
  after `git -c cinnabar.graft=true cinnabar reclone` of a clone of the
  repository with the `rewritten` mirror fetched into refs/remotes/new/.

`--only=<file>` makes that one file only.

The tests never run git-cinnabar 0.7.5: they read these files.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
# The test files whose histories the vectors are made of, with lib/.
sys.path[:0] = [str(TESTS), str(TESTS / 'compat'), str(TESTS / 'hostile')]

from lib.hg import Hg  # noqa: E402
from lib.push_oracle import step_refspecs  # noqa: E402
from lib.randhist import write_git  # noqa: E402
from lib.vectors import (PUSH_COPIES, push_copies_history,  # noqa: E402
                         push_copies_run)
import test_dropin_metadata  # noqa: E402
import test_graft  # noqa: E402
import test_hostile_repos  # noqa: E402


class Reference:
    """git with git-cinnabar 0.7.5 as its only hg:: remote helper."""

    def __init__(self, executable, work):
        self.bin = work / 'bin'
        self.bin.mkdir()
        for name in ('git-cinnabar', 'git-remote-hg'):
            (self.bin / name).symlink_to(executable)
        home = work / 'home'
        home.mkdir()
        self.env = dict(os.environ, HOME=str(home),
                        PATH=f'{self.bin}:{os.environ["PATH"]}',
                        GIT_CONFIG_NOSYSTEM='1', HGPLAIN='1',
                        HGRCPATH='')
        version = self.git('cinnabar', '--version')
        if '0.7.5' not in version:
            sys.exit(f'{executable} is not git-cinnabar 0.7.5: {version}')

    def git(self, *args, cwd=None):
        return subprocess.run(['git', *args], cwd=cwd, env=self.env,
                              check=True, capture_output=True,
                              text=True).stdout.strip()

    def clone(self, url, dest, *config):
        options = [a for c in config for a in ('-c', c)]
        self.git(*options, 'clone', '-q', '--no-checkout', f'hg::{url}',
                 str(dest))
        return dest


def odd_changesets(ref, work):
    lines = []
    for index in range(len(test_hostile_repos.ODD_CHANGESETS)):
        bundle = work / f'odd-{index}.hg'
        node = test_hostile_repos.write_single_odd_bundle(bundle,
                                                          index).node.hex()
        try:
            repo = ref.clone(bundle, work / f'odd-{index}')
            commit = ref.git('cinnabar', 'hg2git', node, cwd=repo)
        except subprocess.CalledProcessError:
            commit = 'failed'
        lines.append(f'{node}\t{commit}')
    return lines


def colliding(ref, hg, work):
    source = test_dropin_metadata.make_colliding_repo(hg, work / 'hg')
    lines = []
    for compat in ('none', '0.6'):
        config = [] if compat == 'none' else ['cinnabar.compat=0.6']
        repo = ref.clone(source, work / f'colliding-{compat}', *config)
        lines.append(f'{compat}:metadata\t'
                     + ref.git('rev-parse', 'refs/cinnabar/metadata',
                               cwd=repo))
        for branch in ('b1', 'b2', 'b3'):
            lines.append(f'{compat}:{branch}\t' + ref.git(
                'rev-parse', f'origin/branches/{branch}/tip', cwd=repo))
    return lines


def pushed_changesets(ref, hg, seed, commits, similarity, work):
    """The hg changesets of a PUSH_COPIES history pushed by `ref`."""
    history = push_copies_history(seed, commits)
    repo = work / f'push-{push_copies_run(seed, commits, similarity)}'
    ref.git('init', '-q', str(repo))
    ids = write_git(history, repo)
    hg('init', repo / 'server')
    config = ['-c', f'cinnabar.experiments=similarity={similarity}'] \
        if similarity else []
    for refspecs in step_refspecs(history, ids):
        ref.git(*config, 'push', '-q', '-f', f'hg::{repo / "server"}',
                *refspecs, cwd=repo)
    return [ref.git('cinnabar', 'git2hg', oid, cwd=repo) for oid in ids]


def push_copies(ref, hg, work):
    lines = []
    for seed, commits, similarity in PUSH_COPIES:
        run = push_copies_run(seed, commits, similarity)
        nodes = pushed_changesets(ref, hg, seed, commits, similarity, work)
        lines += [f'{run}:{i}\t{node}' for i, node in enumerate(nodes)]
    return lines


def graft_state(ref, case, repo, nodes):
    lines = [f'{case}:{node}\t'
             + ref.git('cinnabar', 'hg2git', node, cwd=repo)
             for node in nodes]
    tree = ref.git('ls-tree', 'refs/cinnabar/metadata', cwd=repo)
    for entry in tree.splitlines():
        info, name = entry.split('\t')
        lines.append(f'{case}:replace:{name}\t{info.split()[2]}')
    return lines


def graft(ref, hg, work):
    source = test_graft.make_hg_repo(hg, work / 'graft-hg')
    nodes = hg('-R', source, 'log', '-T', '{node}\n').out.split()
    reference = ref.clone(source, work / 'graft-reference')
    lines = []
    for kind in test_graft.MIRRORS:
        mirror = work / f'graft-{kind}.git'
        test_graft.make_mirror(reference, mirror, kind)
        repo = work / f'graft-{kind}'
        ref.git('clone', '-q', str(mirror), str(repo))
        ref.git('remote', 'add', 'hg', f'hg::{source}', cwd=repo)
        ref.git('-c', 'cinnabar.graft=true', 'fetch', '-q', 'hg', cwd=repo)
        lines += graft_state(ref, kind, repo, nodes)
        lines.append(f'{kind}:metadata\t' + ref.git(
            'rev-parse', 'refs/cinnabar/metadata', cwd=repo))
    repo = ref.clone(source, work / 'graft-reclone')
    ref.git('fetch', '-q', str(work / 'graft-rewritten.git'),
            '+refs/heads/*:refs/remotes/new/*', cwd=repo)
    ref.git('-c', 'cinnabar.graft=true', 'cinnabar', 'reclone', cwd=repo)
    return lines + graft_state(ref, 'reclone', repo, nodes)


def write(name, lines, ref):
    header = (f'# made by tests/vectors/make_vectors.py with '
              f'{ref.git("cinnabar", "--version")}\n')
    (HERE / name).write_text(header + ''.join(line + '\n' for line in lines))


MAKERS = {
    'odd-changesets.tsv': lambda ref, hg, work: odd_changesets(ref, work),
    'colliding.tsv': colliding,
    'push-copies.tsv': push_copies,
    'graft.tsv': graft,
}


def main(args):
    only = [a[len('--only='):] for a in args if a.startswith('--only=')]
    args = [a for a in args if not a.startswith('--only=')]
    if not 1 <= len(args) <= 2 or not set(only) <= set(MAKERS):
        sys.exit(__doc__)
    os.environ.update(HGRCPATH='', HGPLAIN='1')
    default_hg = TESTS.parent / 'build' / 'venv' / 'bin' / 'hg'
    hg = Hg(args[1] if len(args) > 1 else str(default_hg))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ref = Reference(Path(args[0]).resolve(), work)
        for name, make in MAKERS.items():
            if not only or name in only:
                write(name, make(ref, hg, work), ref)


if __name__ == '__main__':
    main(sys.argv[1:])
