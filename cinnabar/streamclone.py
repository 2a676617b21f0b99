"""Stream clones: seeding a clone with the server's revlogs.

A clone (a fetch into empty metadata) that neither cinnabarclone nor a
clone bundle seeded may ask the server for its revlogs as they are on
its disk (`cinnabar.hg.streamreader`) instead of a changegroup: more bytes
on the wire (revlogs are compressed revision by revision), much less
work for the server, which only reads files. The helper imports them as
the changegroup they hold, checking every id; what the server got after
the stream's snapshot (and any tags, bookmarks) is then fetched as
usual, in the same transaction.

Setting `cinnabar.stream` (looked up as `cinnabar.config` does):

- `auto` (the default): when the server says it prefers them
  (`stream-preferred`, Mercurial's `server.preferuncompressed`);
- `always`: whenever the server offers them;
- `never`.

Servers without stream v2 (`stream=v2` among their bundle2 capabilities)
are asked with the legacy `stream_out` command; those that also offer the
experimental v3 (`experimental.stream-v3`) send that.

A server whose repository needs what we do not read (see
`cinnabar.hg.streamreader.SUPPORTED_REQUIREMENTS`) gets a normal clone,
with one line saying why.
"""

from cinnabar import config
from cinnabar.errors import Abort, SettingError
from cinnabar.hg import streamreader
from cinnabar.progress import Meter

MODES = ('auto', 'always', 'never')


def mode(remote):
    """The `cinnabar.stream` setting for `remote`."""
    value = config.lookup('stream', remote)
    if value is None:
        return 'auto'
    value = value.strip().lower()
    if value not in MODES:
        raise SettingError('invalid value %r for cinnabar.stream' % value,
                           hint='use auto, always or never')
    return value


def why_not(peer, setting):
    """None when a clone from `peer` should be a stream clone, else why
    not (a message for people, or '' when there is nothing to say)."""
    if setting == 'never':
        return ''
    if not streamreader.offers_v2(peer) and not streamreader.offers_v1(peer):
        return ('the server does not offer stream clones'
                if setting == 'always' else '')
    if setting == 'auto' and peer.capable('stream-preferred') is None:
        return ''
    requirements = streamreader.server_requirements(peer)
    if requirements is None:
        return ''
    return streamreader.requirements_problem(requirements)


def seed_clone(peer, helper, git_dir, remote, say, progress=False):
    """Import a stream clone from `peer` into `helper` (pending `finish`)
    when the settings and the server say so. Returns (asked, seed):
    whether a stream was asked for (the connection to the server is then
    spent: over stdio no command can follow), and the spool (removed; to
    `discard`) when a stream was taken, else None. `progress`: show a
    meter of the files received (cinnabar.progress)."""
    reason = why_not(peer, mode(remote))
    if reason is not None:
        if reason:
            say('%s; cloning normally' % reason)
        return False, None
    spool = streamreader.Spool(git_dir)
    try:
        v2 = streamreader.offers_v2(peer)
        say('Receiving a stream clone from %s%s'
            % (peer.description, '' if v2 else ' (stream_out)'))
        if progress:
            spool.meter = Meter('Receiving stream', counts_bytes=True)
        try:
            kind = peer.stream_clone(spool) if v2 else peer.stream_out(spool)
            if spool.meter is not None:
                spool.meter.stop()
        except streamreader.Unsupported as error:
            say('%s; cloning normally' % error)
            return True, None
        if spool.finish():
            counts = helper.import_revlogs(spool.path)
            # (The experimental format, when the server chose it, is named.)
            say('stream clone: %d changesets, %d manifests, %d files%s'
                % (counts + (' (%s)' % kind if kind == 'stream3-exp'
                             else '',)))
    finally:
        spool.remove()
    return True, spool


def import_bundle_file(helper, path, git_dir):
    """Import the stream clone bundle at `path` (pending `finish`);
    returns the helper's counts. A bundle we do not read is an Abort,
    as for any clone bundle."""
    spool = streamreader.Spool(git_dir)
    try:
        try:
            streamreader.receive_bundle_file(path, spool)
        except streamreader.Unsupported as error:
            raise Abort(str(error))
        if not spool.finish():
            return (0, 0, 0)
        return helper.import_revlogs(spool.path)
    finally:
        spool.remove()
