"""A bundle file seen as a read-only server (`hg::/path/to/file.hg`).

Its heads come from the helper's `bundle-heads`; nothing in it is known
to be on our side, so discovery always asks for all of it, and
"getbundle" imports the whole file (`import file`).

A stream bundle (`hg bundle -t 'none-v2;stream=v2'`, packed1) holds
revlogs, not a changegroup whose heads can be read first: its heads are
known once it is imported (`stream` is set, and the caller imports it,
then gives the heads with `imported()`).
"""

import os

from cinnabar.hg.streamreader import is_stream_bundle
from cinnabar.hg.wire import RemoteState


def branchmap_from_heads(heads):
    """[(branch, [HgId...]), ...] from helper Head tuples, in their order."""
    branches = {}
    for head in heads:
        branches.setdefault(head.branch, []).append(head.hg_id)
    return list(branches.items())


class BundleFilePeer:
    """The Peer interface for a bundle file. When `temporary` is set, the
    file is removed by `close()`."""

    def __init__(self, path, helper, description, temporary=False):
        self.path = path
        self.description = description
        self.capabilities = {}
        self._temporary = temporary
        self.stream = is_stream_bundle(path)
        self._heads = None if self.stream else helper.bundle_heads(path)

    def imported(self, heads):
        """The heads of the stream bundle, once imported."""
        self._heads = heads

    def capable(self, name):
        return None

    def state(self):
        if self._heads is None:
            raise RuntimeError('the heads of a stream bundle are known '
                               'only once it is imported')
        return RemoteState(branchmap_from_heads(self._heads),
                           [h.hg_id for h in self._heads], {})

    def known(self, nodes):
        return [False] * len(nodes)

    def getbundle(self, helper, heads, common):
        return helper.import_file(self.path)

    def close(self):
        if self._temporary:
            os.unlink(self.path)
            self._temporary = False
