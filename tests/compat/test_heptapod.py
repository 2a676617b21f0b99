"""Pushing to a server with Heptapod's rules (the `heptapod` package's
extension and hooks, lib.heptapod; skipped, saying so, unless `make
heptapod-venv` made their venv), as a developer who may not publish:

- a push to a branch (no topic) is refused by Heptapod ("not authorised
  to publish"), and our message says to push to a topic ref;
- a push to a topic makes drafts; an amend force-pushed replaces them
  (obsolescence markers), the topic keeping one head, which Heptapod
  requires (it refuses a second head in a branch or topic);
- a bookmark is refused (forbidden by default on Heptapod).
"""

import pytest

from lib import heptapod
from lib.git import clone, git
from lib.push import assert_pushed, assert_refused, push, pushed_nodes
from test_topics import TOPIC_REF, commit_files

BRANCH_REF = 'refs/heads/branches/default/tip'


@pytest.fixture(scope='module')
def project(tmp_path_factory, request):
    """A Heptapod project repository with one public changeset, served,
    and a git clone of it."""
    tmp = tmp_path_factory.mktemp('heptapod')
    hg = heptapod.hg()
    server_repo = tmp / 'project'
    hg('init', server_repo)
    (server_repo / '.hg' / 'hgrc').write_text(heptapod.hgrc(server_repo))
    (server_repo / 'a').write_text('a\n')
    hg('-R', server_repo, 'commit', '-q', '-A', '-m', 'initial import',
       '-u', 'Maintainer <m@example.com>', '-d', '1600000000 0',
       cwd=server_repo)
    hg('-R', server_repo, 'phase', '-q', '-p', '.')
    server = heptapod.HeptapodServer(server_repo)
    request.addfinalizer(server.stop)
    repo = tmp / 'git'
    clone(f'hg::{server.url}', repo)
    return hg, server_repo, repo


def log(hg, repo, revset):
    out = hg('-R', repo, 'log', '-r', revset,
             '-T', '{node} {phase} {topic}\n').out
    return [tuple(line.split(' ')) for line in out.splitlines()]


def test_push_without_topic_is_refused(project):
    hg, server_repo, repo = project
    commit_files(repo, {'b': 'b\n'}, 'Add b', '1700000000 +0000')
    assert_refused(push(repo, 'origin', 'HEAD:' + BRANCH_REF),
                   'not authorised to publish', 'push to a topic',
                   'HEAD:refs/heads/topics/default/<topic>')
    assert len(log(hg, server_repo, 'all()')) == 1


def test_push_to_topic_then_amend(project):
    hg, server_repo, repo = project
    assert_pushed(push(repo, 'origin', 'HEAD:' + TOPIC_REF))
    head = git('rev-parse', 'HEAD', cwd=repo).out.strip()
    node = pushed_nodes(repo, [head])[head]
    assert log(hg, server_repo, 'topic(feat)') == [(node, 'draft', 'feat')]
    amended = commit_files(repo, {'b': 'b2\n'}, 'Add b, amended',
                           '1700000100 +0000', amend=True)
    assert_pushed(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF))
    new = pushed_nodes(repo, [amended])[amended]
    assert log(hg, server_repo, 'topic(feat)') == [(new, 'draft', 'feat')]
    assert log(hg, server_repo, 'obsolete()') == []
    obsolete = hg('-R', server_repo, 'log', '--hidden', '-r', 'obsolete()',
                  '-T', '{node}\n').out.split()
    assert obsolete == [node]


def test_bookmark_is_refused(project):
    """Heptapod's refusal fails our `pushkey` (HTTP 500): its message
    ("Creating bookmarks is forbidden by default in Heptapod") reaches
    only the server's log; `hg push -B` sends bookmarks in a bundle2
    `bookmarks` part, which we do not (yet)."""
    hg, server_repo, repo = project
    assert_refused(push(repo, 'origin', 'HEAD:refs/heads/bookmarks/bm'),
                   'failed to set bookmark bm', 'HTTP error 500')
    assert hg('-R', server_repo, 'bookmarks', '-T', '{bookmark}\n').out == ''
