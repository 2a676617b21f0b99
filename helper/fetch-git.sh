#!/usr/bin/env bash
# helper/fetch-git.sh: get the pinned git release tarball and check its SHA-256.
#
#   helper/fetch-git.sh VERSION SHA256 OUTPUT DEBIAN_SUITE [DEBIAN_VERSION...]
#
# The Makefile holds the pins and calls this.  Where apt-get is, the tarball is
# Debian's "orig" tarball of the git source package (fetched with
# `apt-get source --download-only`, trying each pinned Debian version, then the
# current one); it is the upstream release tarball unchanged, so one checksum
# covers both.  When apt knows no source package of VERSION, deb-src entries of
# DEBIAN_SUITE (the suite whose git is VERSION: trixie for 2.47.3, also on a
# bookworm machine) are added to /etc/apt in a file of their own.  Elsewhere,
# or when apt-get cannot get it, the release tarball is downloaded from
# kernel.org with curl.  A tarball already at OUTPUT with the
# right checksum is kept, so one can also be put there by hand.
set -euo pipefail

version=$1
sha256=$2
output=$3
suite=$4
shift 4
debian_versions=("$@")

url=https://www.kernel.org/pub/software/scm/git/git-$version.tar.xz
apt_list=/etc/apt/sources.list.d/cinnabar-src-$suite.sources

say() { echo "fetch-git: $*" >&2; }

checksum_ok() {
	[ -f "$1" ] && [ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$sha256" ]
}

add_deb_src() {
	say "adding Debian $suite source entries in $apt_list"
	# Only a stable suite has -updates and -security: unstable (sid) and
	# experimental have neither, and apt-get update fails on a suite that
	# does not exist.
	case $suite in
	sid|unstable|experimental|rc-buggy)
		cat >"$apt_list" <<-EOF
		# Added by git-cinnabar's Makefile to fetch the pinned git source.
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: $suite
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		;;
	*)
		cat >"$apt_list" <<-EOF
		# Added by git-cinnabar's Makefile to fetch the pinned git source.
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: $suite $suite-updates
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

		Types: deb-src
		URIs: http://deb.debian.org/debian-security
		Suites: $suite-security
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		;;
	esac
}

# Whether apt knows a git source package of the pinned upstream version.
apt_has_source() {
	local versions
	versions=$(apt-cache showsrc git 2>/dev/null | grep '^Version:') || true
	grep -q "^Version: 1:$version-" <<<"$versions"
}

prepare_apt() {
	if apt_has_source; then
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		say "apt has no source of git $version and updating it needs root"
		return 1
	fi
	add_deb_src
	say "apt-get update"
	apt-get update -qq >&2 || return 1
	apt_has_source
}

fetch_apt() {
	local dir orig v
	prepare_apt || return 1
	dir=$(dirname "$output")/apt-source
	orig=$dir/git_$version.orig.tar.xz
	rm -rf "$dir"
	mkdir -p "$dir"
	for v in "${debian_versions[@]}" ""; do
		say "apt-get source --download-only git${v:+=$v}"
		if (cd "$dir" && apt-get source --download-only -qq \
			-o APT::Sandbox::User=root "git${v:+=$v}" >&2) &&
			[ -f "$orig" ]; then
			mv "$orig" "$output"
			rm -rf "$dir"
			return 0
		fi
	done
	rm -rf "$dir"
	say "no Debian source package has git_$version.orig.tar.xz"
	return 1
}

fetch_curl() {
	say "downloading $url"
	curl -fsSL --retry 2 -o "$output.part" "$url" && mv "$output.part" "$output"
}

main() {
	mkdir -p "$(dirname "$output")"
	if checksum_ok "$output"; then
		return 0
	fi
	rm -f "$output"
	if ! { command -v apt-get >/dev/null && fetch_apt; } &&
		! { command -v curl >/dev/null && fetch_curl; }; then
		say "could not get git $version; put git-$version.tar.xz" \
			"(SHA-256 $sha256) at $output and run make again"
		return 1
	fi
	if ! checksum_ok "$output"; then
		say "$output: SHA-256 mismatch (expected $sha256); removed it"
		rm -f "$output"
		return 1
	fi
	say "$output: SHA-256 OK"
}

main
