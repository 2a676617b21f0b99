"""The packs the helper writes are the same bytes whether objects are
deflated on its second thread (the default with two CPUs or more), some of
them by the importer while it waits for that thread, or in place, as it
does when a pack size limit is set (helper/store.c,
helper/deflate-queue.c): a pack's name is the checksum of its bytes.
Checkpoints every few objects make the import end packs, and read back
objects, while others are still being deflated. Objects too small for
deflate to shrink are stored, unless the user chose a compression level.
Objects too big for one zlib call are stored whole, deflated in steps."""

import os
import re

from lib import env as test_env
from lib.corpus import Corpus
from lib.git import METADATA_REF, git, init, rev_parse

BUNDLE = 'hgweb+obs.hg'  # the corpus's largest small bundle
ENV = {'CINNABAR_TEST_CHECKPOINT': '8', 'GIT_CINNABAR_TRACE': '1'}
STATS = re.compile(r'^cinnabar-helper: store: (\d+) objects written '
                   r'\((\d+) deflated on a second thread, (\d+) of them '
                   r'by the importer while it waited\)', re.M)


def packs(repo):
    return sorted(p.name for p in (repo / '.git' / 'objects' / 'pack')
                  .glob('*.pack'))


def unbundled(bundle, repo, *config, env=None):
    """The packs and metadata of `bundle` imported into `repo`, the count
    of objects deflated on the second thread, and how many of them the
    importer deflated itself."""
    init(repo)
    options = []
    for item in config:
        options += ['-c', item]
    result = git(*options, 'cinnabar', 'unbundle', bundle, cwd=repo,
                 extra_env=dict(ENV, **(env or {})))
    stats = STATS.findall(result.err)
    assert len(stats) == 1, result.err
    written, on_thread, by_importer = map(int, stats[0])
    assert written
    assert by_importer <= on_thread
    return ((packs(repo), rev_parse(repo, METADATA_REF)),
            (on_thread, by_importer))


def test_same_pack_bytes_on_the_second_thread_or_not(tmp_path):
    path = Corpus(test_env.corpus_dir()).bundle(BUNDLE)
    threaded, (on_thread, _) = unbundled(path, tmp_path / 'threaded')
    # Every other object left to the importer, deflating while it waits.
    shared, (shared_thread, by_importer) = unbundled(
        path, tmp_path / 'shared',
        env={'CINNABAR_TEST_DEFLATE_ALTERNATE': '1'})
    in_place, (none, _) = unbundled(path, tmp_path / 'in-place',
                                    'pack.packSizeLimit=1g')
    assert len(threaded[0]) > 1, 'no checkpoint: nothing was tested'
    assert threaded == in_place
    assert shared == in_place
    assert none == 0
    # One CPU: no second thread (helper/deflate-queue.c).
    assert (on_thread > 0) == (os.cpu_count() > 1)
    if os.cpu_count() > 1:
        assert by_importer >= shared_thread // 2 > 0


def small_objects_stored(repo):
    """(objects under 128 bytes whose entry in the pack is their header
    and a zlib stream of one stored block, all objects under 128 bytes):
    the whole objects of `repo`'s packs, from `git verify-pack -v`."""
    stored = small = 0
    for idx in (repo / '.git' / 'objects' / 'pack').glob('*.idx'):
        out = git('verify-pack', '-v', idx, cwd=repo).out
        for line in out.splitlines():
            fields = line.split()
            if len(fields) != 5 or fields[1] not in ('blob', 'tree',
                                                     'commit', 'tag'):
                continue  # deltas, and the summary lines
            size, in_pack = int(fields[2]), int(fields[3])
            if size >= 128:
                continue
            small += 1
            header = 1 if size < 16 else 2  # type and size (gitformat-pack)
            # zlib's 2 bytes, the block's 5, the Adler-32's 4 (RFC 1950-1).
            stored += in_pack == header + size + 2 + 5 + 4
    return stored, small


def test_small_objects_stored_unless_a_level_is_chosen(tmp_path):
    """Deflate makes objects of a few dozen bytes no smaller: they are
    stored, unless the user chose a compression level (helper/store.c);
    git reads both."""
    path = Corpus(test_env.corpus_dir()).bundle(BUNDLE)
    default, _ = unbundled(path, tmp_path / 'default')
    chosen, _ = unbundled(path, tmp_path / 'chosen', 'core.compression=1')
    assert default[1] == chosen[1]  # the same metadata
    for name in ('default', 'chosen'):
        git('fsck', '--full', '--strict', '--no-dangling',
            cwd=tmp_path / name)
    stored, small = small_objects_stored(tmp_path / 'default')
    assert small and stored == small
    stored, small = small_objects_stored(tmp_path / 'chosen')
    assert small and stored < small / 2


def test_objects_past_one_zlib_call_stored_whole(tmp_path):
    """Objects of at least 1 GiB go through git's zlib wrapper, in steps,
    and are stored whole (helper/store.c, "Writing objects");
    CINNABAR_TEST_ONE_CALL_MAX lowers that size so that the corpus has
    such objects: the same metadata, a pack git reads, and no delta of
    that size or more."""
    limit = 200
    path = Corpus(test_env.corpus_dir()).bundle(BUNDLE)
    default, _ = unbundled(path, tmp_path / 'default')
    ENV['CINNABAR_TEST_ONE_CALL_MAX'] = str(limit)
    try:
        stepped, _ = unbundled(path, tmp_path / 'stepped')
    finally:
        del ENV['CINNABAR_TEST_ONE_CALL_MAX']
    assert default[1] == stepped[1]  # the same metadata
    repo = tmp_path / 'stepped'
    git('fsck', '--full', '--strict', '--no-dangling', cwd=repo)
    whole = deltas = 0
    out = git('cat-file', '--batch-all-objects', '--batch-check='
              '%(objectsize) %(deltabase)', cwd=repo).out
    for line in out.splitlines():
        size, base = line.split()
        if int(size) < limit:
            continue
        if base.strip('0'):
            deltas += 1
        else:
            whole += 1
    assert whole and not deltas
