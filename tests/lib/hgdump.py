"""A Mercurial extension (loaded by path, `--config extensions.hgdump=...`)
adding `hg oracledump`: one JSON document of what the repository holds, as
Mercurial reads it, for comparing two repositories in one hg run each
instead of one `hg debugdata`/`hg debugindex` per revision.

- `changesets`: in revision order, each with its node, parent nodes,
  manifest node, user, date (time, offset), extras, files list (the
  changeset's own, as `hg log --debug` shows files/files+/files-) and
  description;
- `manifests`: {manifest node: [[path, file node, flags]...]};
- `filelogs`: {path: [[node, p1, p2, changeset node of its linkrev,
  copy source path or null, copy source node or null]...]} in revision
  order, for every path a manifest or a files list names.

Bytes are decoded as UTF-8 with surrogateescape.  Nothing here is project
code: it only reads through Mercurial's own API.
"""

import json

from mercurial import registrar
from mercurial.node import hex

cmdtable = {}
command = registrar.command(cmdtable)


def _s(data):
    return data.decode('utf-8', 'surrogateescape')


def _changeset(repo, rev):
    ctx = repo[rev]
    parents = repo.changelog.parents(ctx.node())
    when, offset = ctx.date()
    return {
        'node': hex(ctx.node()).decode(),
        'parents': [hex(p).decode() for p in parents],
        'manifest': hex(ctx.manifestnode()).decode(),
        'user': _s(ctx.user()),
        'date': [int(when), offset],
        'extra': {_s(k): _s(v) for k, v in ctx.extra().items()},
        'files': [_s(f) for f in ctx.files()],
        'desc': _s(ctx.description()),
    }


def _filelog(repo, path):
    flog = repo.file(path)
    revs = []
    for rev in flog:
        node = flog.node(rev)
        p1, p2 = flog.parents(node)
        renamed = flog.renamed(node)
        link = repo.changelog.node(flog.linkrev(rev))
        revs.append([hex(node).decode(), hex(p1).decode(), hex(p2).decode(),
                     hex(link).decode(),
                     _s(renamed[0]) if renamed else None,
                     hex(renamed[1]).decode() if renamed else None])
    return revs


@command(b'oracledump', [], b'hg oracledump')
def oracledump(ui, repo):
    """print the repository's changesets, manifests and filelogs as JSON"""
    changesets, manifests, paths = [], {}, set()
    for rev in repo.changelog:
        cs = _changeset(repo, rev)
        changesets.append(cs)
        paths.update(cs['files'])
        if cs['manifest'] not in manifests:
            mf = repo[rev].manifest()
            manifests[cs['manifest']] = [
                [_s(p), hex(mf[p]).decode(), _s(mf.flags(p))] for p in mf]
            paths.update(line[0] for line in manifests[cs['manifest']])
    filelogs = {}
    for path in sorted(paths):
        revs = _filelog(repo, path.encode('utf-8', 'surrogateescape'))
        if revs:
            filelogs[path] = revs
    ui.write(json.dumps({'changesets': changesets, 'manifests': manifests,
                         'filelogs': filelogs}).encode())
