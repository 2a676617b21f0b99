#!/usr/bin/env bash
# demo/run.sh: the main job end to end, run by `make demo` once the helper and
# build/venv are built.  Makes a Mercurial repository from demo/example.hg, serves
# it with `hg serve` on a free port of 127.0.0.1, clones it with
# `git clone hg::http://127.0.0.1:PORT/`, and shows the result.  The server is
# stopped by its pid however the script ends.  KEEP=1 keeps the work directory.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
hg=${HG:-$top/build/venv/bin/hg}
python=$top/build/venv/bin/python
work=$(mktemp -d "${TMPDIR:-/tmp}/cinnabar-demo.XXXXXX")
pidfile=$work/hg-serve.pid

# The launchers (git-remote-hg, git-cinnabar) and the helper are at the top.
export PATH=$top:$PATH
export HGRCPATH=/dev/null HGPLAIN=1

stop_server() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || return 0
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
}

cleanup() {
	stop_server
	if [ -n "${KEEP:-}" ]; then
		echo "work directory kept: $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	"$python" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

echo "== Mercurial repository from demo/example.hg ($("$hg" version -q))"
"$hg" init "$work/hg"
"$hg" -R "$work/hg" unbundle -q "$top/demo/example.hg"
"$hg" -R "$work/hg" log -G -T '{node|short} {branch} {desc|firstline} {tags}\n'

port=$(free_port)
url=http://127.0.0.1:$port/
echo "== hg serve at $url"
# -d returns once the server listens; it writes its pid to the pid file.
"$hg" -R "$work/hg" serve -d -a 127.0.0.1 -p "$port" --pid-file "$pidfile" \
	--config web.push_ssl=False --config 'web.allow_push=*' \
	-E "$work/hg-serve.errors"

echo "== git clone hg::$url"
git clone "hg::$url" "$work/git"

# --all without refs/cinnabar/* and refs/notes/cinnabar, where the bridge keeps its
# metadata commits.
echo "== git log --oneline --graph --all (less the bridge's metadata)"
git -C "$work/git" log --oneline --graph --exclude='refs/cinnabar/*' \
	--exclude='refs/notes/cinnabar' --all
echo "== git branch -a; git tag"
git -C "$work/git" branch -a
git -C "$work/git" tag

echo "== git push"
echo "made in git" > "$work/git/from-git.txt"
git -C "$work/git" add from-git.txt
git -C "$work/git" -c user.name="Demo User" -c user.email=demo@example.org \
	commit -q -m "A commit made with git"
git -C "$work/git" push origin HEAD:refs/heads/branches/default/tip
"$hg" -R "$work/hg" log -G -l 3 -T '{node|short} {branch} {author} {desc|firstline}\n'
"$hg" -R "$work/hg" verify -q && echo "hg verify: ok"

echo "== done"
