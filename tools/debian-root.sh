# tools/debian-root.sh: Debian roots for builds and checks (sourced by
# tools/dist-in-root and tools/deb-check; needs root).
#
#   make_root <root> <suite>    debootstrap a minimal Debian <suite> in <root>
#                               (from $DEBIAN_MIRROR) unless it is there already
#   in_root <root> <command>... run a command chrooted in <root>, with a clean
#                               environment, non-interactive apt

make_root() {
	if [ -x "$1/bin/sh" ]; then
		return
	fi
	command -v debootstrap >/dev/null || {
		echo "no $1 yet and no debootstrap to make it:" \
			"apt-get install debootstrap" >&2
		return 1
	}
	echo "making a Debian $2 root in $1 (debootstrap)"
	debootstrap --variant=minbase "$2" "$1" \
		"${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
}

in_root() {
	local root=$1
	shift
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
}
