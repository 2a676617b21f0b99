"""advertise git-cinnabar metadata kept in a git repository or bundle

A Mercurial server extension, loaded by the server's hg (hgweb, `hg
serve`, `hg serve --stdio` over ssh). It is not part of git-cinnabar's
runtime: git-cinnabar itself never imports Mercurial.

When the served repository has a `.hg/cinnabar.manifest` file, the server
advertises the `cinnabarclone` capability, and the wire command of that
name answers the file's contents. A git-cinnabar client cloning the
repository (its metadata is empty) reads it, gets the git-cinnabar
metadata from the first usable line, then fetches only the changesets
that metadata lacks from this server.

The manifest has one source a line:

    <url>[#<branch>][ graft=<commit>[,<commit>...]]

- `<url>`: a git repository (anything `git fetch` reads) or a git bundle
  (`git bundle create`) on an http, https or file URL. From a server's
  manifest, clients only use http, https and git URLs.
- `<branch>`: the ref holding the metadata in that repository or bundle:
  a full ref name, or a short name tried as itself, `refs/cinnabar/<name>`
  and `refs/heads/<name>`. Without it, clients try names made of the end
  of the Mercurial URL's path (for `https://host/a/b/repo`: `repo`,
  `b/repo`, `a/b/repo`, `host/a/b/repo`), then `metadata`.
- `graft=`: the metadata maps changesets onto these git commits (and
  their history), which the client must already have (a clone of a git
  mirror of the project). Clients with `cinnabar.graft` set to true only
  use such lines, clients with it set to false never do; otherwise they
  prefer such a line when they have its commits.
  A line with another `key=value` is ignored by clients.

Setting it up:

    git clone hg::https://hg.example.org/repo && cd repo
    git bundle create ../repo.bundle refs/cinnabar/metadata
    # publish repo.bundle, e.g. as https://cdn.example.org/repo.bundle
    echo https://cdn.example.org/repo.bundle \
        > /srv/hg/repo/.hg/cinnabar.manifest

and in the server's hgrc:

    [extensions]
    cinnabarclone = /path/to/git-cinnabar/hg/cinnabarclone.py

Tested with Mercurial 6.3 and 7.2 (wire protocol version 1).
"""

testedwith = b'6.3 7.2'

MANIFEST = b'cinnabar.manifest'
CAPABILITY = b'cinnabarclone'


def _manifest(repo):
    """The manifest's contents (bytes), or None without one."""
    if not repo.vfs.exists(MANIFEST):
        return None
    return repo.vfs.tryread(MANIFEST)


def _capabilities(orig, repo, proto):
    caps = orig(repo, proto)
    if _manifest(repo) is not None:
        caps.append(CAPABILITY)
    return caps


def _cinnabarclone(repo, proto):
    return _manifest(repo) or b''


def extsetup(ui):
    from mercurial import extensions, wireprotov1server

    extensions.wrapfunction(wireprotov1server, '_capabilities',
                            _capabilities)
    if CAPABILITY not in wireprotov1server.commands:
        wireprotov1server.wireprotocommand(
            CAPABILITY, b'', permission=b'pull')(_cinnabarclone)
