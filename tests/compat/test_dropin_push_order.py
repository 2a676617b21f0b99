"""Drop-in for git-cinnabar 0.7 users: the order changesets reach the
server, against a real `hg serve`.

As git-cinnabar, the changesets go in the order of `git rev-list
--topo-order --reverse` of the pushed refs, in the order given: a clone
of `a`, then `b` on `default` and `b` on `foo` (same date), pushed whole
into an empty repository with `git push <url> branches/foo/tip
branches/default/tip` gives the server the original's revision numbers
and graph.
"""

from lib.git import clone, hg_url
from lib.push import assert_hg_verify, assert_pushed, hg_commit
from lib.push import make_hg_repo, push

GRAPH = ['log', '-G', '-T', '{rev} {node} {branch} {desc}\n']


def test_push_order_follows_rev_list(hg, hg_serve, tmp_path):
    original = make_hg_repo(hg, tmp_path / 'original', {'a': 'a\n'})
    hg_commit(hg, original, {'b': 'b\n'}, 'b', date='1600000001 0')
    hg('-R', original, 'update', '-q', '0')
    hg_commit(hg, original, {'b': 'b\n'}, 'b', date='1600000001 0',
              branch='foo')
    work = tmp_path / 'work'
    clone(hg_url(original), work, '-q')
    empty = tmp_path / 'empty'
    hg('init', empty)
    url = hg_url(hg_serve(empty).url)
    assert_pushed(push(work, url, 'origin/branches/foo/tip:'
                       'refs/heads/branches/foo/tip',
                       'origin/branches/default/tip:'
                       'refs/heads/branches/default/tip'))
    assert_hg_verify(hg, empty)
    hg('-R', original, 'update', '-q', 'null')
    assert hg('-R', empty, *GRAPH).out == hg('-R', original, *GRAPH).out
