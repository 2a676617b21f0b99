"""git-cinnabar: a git remote helper for Mercurial repositories.

The package is shared by the two launchers at the top of the repository:
`git-remote-hg` (run by git for `hg::` URLs, see `cinnabar.remote`) and
`git-cinnabar` (the `git cinnabar <command>` tool, see `cinnabar.cmd`).
Everything that touches git objects or the metadata goes through the C
helper, whose one client is `cinnabar.helper`.
"""

VERSION = '0.1.0'
