#!/usr/bin/env bash
# demo/make-example.sh: regenerate demo/example.hg, the small Mercurial repository
# the demo clones: six changesets by a fixed author at fixed dates, three files, a
# named branch "feature" merged back into "default", and a tag.
#
#   demo/make-example.sh [HG]      (default: build/venv/bin/hg; run `make venv`)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
hg=${1:-$top/build/venv/bin/hg}
work=$(mktemp -d "${TMPDIR:-/tmp}/cinnabar-example.XXXXXX")
trap 'rm -rf "$work"' EXIT

export HGRCPATH=/dev/null HGPLAIN=1 HGENCODING=utf-8
repo=$work/repo
user='Demo Author <demo@example.com>'
n=0
commit() {
	n=$((n + 1))
	"$hg" -R "$repo" commit -q -u "$user" -d "$((1700000000 + n * 3600)) 0" -m "$1"
}

"$hg" init "$repo"
printf 'An example repository for the git-cinnabar demo.\n' >"$repo/README"
printf 'print("hello")\n' >"$repo/hello.py"
"$hg" -R "$repo" add -q "$repo/README" "$repo/hello.py"
commit "Add README and hello.py"

printf 'import sys\n\nprint("hello", *sys.argv[1:])\n' >"$repo/hello.py"
commit "hello.py: greet the arguments"

"$hg" -R "$repo" branch -q feature
printf 'Run it with: python3 hello.py NAME\n' >"$repo/USAGE"
"$hg" -R "$repo" add -q "$repo/USAGE"
commit "Add USAGE"

"$hg" -R "$repo" update -q default
printf 'An example repository for the git-cinnabar demo (MIT licensed).\n' >"$repo/README"
commit "README: mention the license"

"$hg" -R "$repo" merge -q feature
commit "Merge branch feature"

"$hg" -R "$repo" tag -u "$user" -d "$((1700000000 + 6 * 3600)) 0" v1.0

"$hg" -R "$repo" log -G -T '{rev}:{node|short} {branch} {desc|firstline} {tags}\n'
"$hg" -R "$repo" bundle -q --all --type gzip-v2 "$top/demo/example.hg"
echo "wrote $top/demo/example.hg"
