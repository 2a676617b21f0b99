# bash completion of `git cinnabar`, for git's (git calls
# _git_cinnabar). Made by tools/manpages.py; do not edit.
_git_cinnabar ()
{
	local subcommands="bundle clear data download fetch fsck git2hg hg2git reclone rollback self-update strip tag unbundle upgrade"
	local subcommand="$(__git_find_on_cmdline "$subcommands")"
	if [ -z "$subcommand" ]; then
		case "$cur" in
		-*) __gitcomp "--version --help" ;;
		*) __gitcomp "$subcommands help" ;;
		esac
		return
	fi
	case "$cur" in
	-*) ;;
	*) return ;;
	esac
	case "$subcommand" in
	bundle) __gitcomp "-t --type= --version= --help" ;;
	clear) __gitcomp "-v --verbose --help" ;;
	data) __gitcomp "-c -m --help" ;;
	download) __gitcomp "--url= --platform= --output= --help" ;;
	fetch) __gitcomp "--tags --bundle -v --verbose --help" ;;
	fsck) __gitcomp "--full --force --help" ;;
	git2hg) __gitcomp "--batch --abbrev= --help" ;;
	hg2git) __gitcomp "--batch --abbrev= --help" ;;
	reclone) __gitcomp "--rebase -v --verbose --help" ;;
	rollback) __gitcomp "--candidates --fsck --force -v --verbose --help" ;;
	self-update) __gitcomp "--url= --check --branch= --exact= --help" ;;
	strip) __gitcomp "-v --verbose --help" ;;
	tag) __gitcomp "-f --force -d --delete -l --list --onto= -m --message= --format= --help" ;;
	unbundle) __gitcomp "--clonebundle --help" ;;
	upgrade) __gitcomp " --help" ;;
	esac
}
# `git-cinnabar <TAB>` too, with git's completion loaded.
if declare -f __git_complete >/dev/null; then
	__git_complete git-cinnabar _git_cinnabar
fi
