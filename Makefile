# git-cinnabar: build, test, demo and install.
#
#   make                  build ./git-cinnabar-helper against the pinned git release
#   make DEVELOPER=1      the same, the helper's sources compiled with git's DEVELOPER=1
#                         warnings as errors (git's own objects keep their flags)
#   make deps             install the Debian packages needed here (as root; a no-op
#                         when they are all there)
#   make venv             build/venv with Mercurial, hg-evolve, pytest and flake8
#                         (requirements-test.txt), and hg-evolve for hg 6.3
#   make heptapod-venv    build/heptapod-venv: the `heptapod` server package (Heptapod's
#                         hg extension and hooks, with the Mercurial and hg-evolve it
#                         pins), for tests/compat/test_heptapod.py (CI makes it)
#   make test             the test suite with the venv's Mercurial
#                         (TEST_PYTHON=python3.9: the launchers run with that Python;
#                         TEST_HELPER=build/dist/git-cinnabar-helper: with that helper)
#   make test-hg63        the same suite with Debian's /usr/bin/hg (Mercurial 6.3)
#   make user-git         build the git releases of USER_GIT_VERSIONS from Debian's
#                         source packages, under USER_GIT_DIR (kept: built once)
#   make test-user-git    the tests marked usergit (corpus clones, push series) with
#                         each of them as the git on PATH (USER_GIT_VERSIONS=2.55.0:
#                         with that one only)
#   make hg-matrix        build/hg-matrix/<version>/hg: the older Mercurial releases
#                         of HG_MATRIX, in pure Python from PyPI's sources (needs
#                         pyenv's Python 2.7 and 3.9 under PYENV_ROOT)
#   make hg-matrix-test   tests/compat/test_server_matrix.py against each of HG_MATRIX and
#                         the venv's Mercurial (hg-matrix-ci, hg-matrix-test-ci:
#                         the same for HG_MATRIX_CI, the part CI tests)
#   make demo             build, then clone a small hg repository served over HTTP
#   make reftable-git     build/reftable-git/git: the pinned release's own git, for
#                         tests/compat/test_reftable.py (reftable needs git 2.45+)
#   make try-git TRY_GIT_VERSION=... TRY_GIT_SHA256=...
#                         the helper built against another git release, and
#                         tested with it (doc/git-source.md)
#   make asan             build/asan/git-cinnabar-helper: the helper's sources built
#                         with AddressSanitizer and UBSan, linked with the normal
#                         build's git libraries (for fuzzing)
#   make fuzz             fuzz the bundle reader of the ASan helper for FUZZ_SECONDS
#                         (default 3600); `make fuzz-short`: 120 s with a fixed seed,
#                         as CI runs it.  See tests/fuzz/README.md
#   make fuzz-push        push random histories and compare them with hg commit's
#                         (SEEDS=1-20 COMMITS=300 STEPS=4 KEEP=1; TEST_HG=/usr/bin/hg)
#   make mutate           hand-written mutants of the helper's and the Python side's
#                         checks (tests/mutants/*.txt), each applied alone to a scratch
#                         copy and run against the tests named for it (tools/mutate;
#                         MUTANTS=<list> MUTANT=<name>; niced, not run by CI; see
#                         doc/testing.md, "Mutation testing")
#   make mutate-auto      mutmut's mutants of a few Python modules (MUTMUT_MODULES)
#                         against their unit tests, mutmut in build/mutmut-venv
#   make install          install under $(prefix) (default /usr/local); DESTDIR works
#   make deb              the Debian package, build/deb/git-cinnabar_<version>_<arch>.deb
#                         (debian/; `make deb-check` as root: installed, used and
#                         purged in a clean bookworm root)
#   make dist, dist-all, dist-root
#                         release trees (see below and doc/releasing.md); dist-all
#                         adds the linux-aarch64 helper, cross-built
#   make uninstall        remove what install put there
#   make clean            remove the helper and its objects
#   make distclean        remove build/ entirely (git source, venv)
#
# The helper is compiled against a pristine git $(GIT_VERSION) tree in build/, whose
# tarball is checked against the SHA-256 pinned below.  See helper/helper.mk for how
# the helper is compiled and helper/fetch-git.sh for how the tarball is obtained.

GIT_VERSION = 2.47.3
# SHA-256 of git-2.47.3.tar.xz, Debian trixie's git_2.47.3.orig.tar.xz (as listed in
# git_2.47.3-0+deb13u1.dsc); Debian's orig tarballs of git are upstream's release
# tarballs unchanged (see doc/git-source.md).  helper/fetch-git.sh gets it from
# Debian first where apt-get is, then from kernel.org.
GIT_SHA256 = 9c2eb1250781b3e5bfef098572d07fdf132d67e6c065e4307332ade9819a1501
# Debian source packages whose orig tarball is that release, tried in order, and
# the Debian suite that serves them (fetch-git.sh adds its deb-src entries when apt
# has no source of that release, e.g. on a bookworm machine).
GIT_DEBIAN_VERSIONS = 1:2.47.3-0+deb13u1
GIT_DEBIAN_SUITE = trixie

BUILD = build
GIT_TARBALL = $(BUILD)/git-$(GIT_VERSION).tar.xz
GIT_TREE = $(BUILD)/git-$(GIT_VERSION)
HELPER = git-cinnabar-helper
JOBS = 2
# 1: compile the helper's sources with git's developer warnings, as errors (see
# helper/helper.mk).  It is passed down as HELPER_DEVELOPER, and DEVELOPER emptied,
# so that the shared git tree's objects and libgit.a are not rebuilt.
DEVELOPER =

# How git's libraries, and so the helper, are built.  prefix=/usr makes libgit read
# the system configuration from /etc/gitconfig, as a distribution's git does.
# OPENSSL_SHA1: git object ids are computed with OpenSSL's SHA-1 rather than the
# collision-detecting one, several times slower, while the helper computes the
# id of every object it writes (doc/performance.md).
GIT_MAKE_FLAGS = prefix=/usr NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1 \
	NO_EXPAT=1 OPENSSL_SHA1=YesPlease NO_INSTALL_HARDLINKS=1

# The Python that makes the venv: Debian's when there is one (python3-venv and
# python3-dev are its packages), else the first python3 on PATH.
PYTHON = $(firstword $(wildcard /usr/bin/python3) python3)
VENV = $(BUILD)/venv
VENV_STAMP = $(VENV)/.requirements-test.txt
# hg-evolve (topic and evolve extensions) for Debian's hg 6.3: hg-evolve 12 needs
# hg 6.7 or later; 11.1 is the last release for older ones.  Pure Python, outside the
# venv; the tests load it by path (tests/lib/evolve.py).
EVOLVE_HG63 = $(BUILD)/evolve-hg63
EVOLVE_HG63_VERSION = 11.1.10
# hg-evolve 10.5, the last release whose topic extension has no topic namespaces
# (no `branchmaptns`: topics are `<branch>:<topic>` names in `branchmap`), for a
# server of the older kind, also served by Debian's hg 6.3.
EVOLVE_NOTNS = $(BUILD)/evolve-notns
EVOLVE_NOTNS_VERSION = 10.5.3
# The `heptapod` server package, in a venv of its own: it pins its Mercurial and
# hg-evolve (and brings hg-git, boto3 and a JWT library).
HEPTAPOD_VENV = $(BUILD)/heptapod-venv
HEPTAPOD_VERSION = 5.5.3

# The hg the tests drive: the venv's (PyPI's latest), or Debian's for test-hg63.
TEST_HG = $(CURDIR)/$(VENV)/bin/hg
DEBIAN_HG = /usr/bin/hg
# Mercurial's chg (Debian's mercurial package has it): the tests run their own hg
# commands (oracles, setup) through it, in command servers of TEST_HG that it
# starts, instead of starting TEST_HG each time (tests/lib/chg.py).  TEST_CHG=
# (empty): hg itself.
TEST_CHG = $(shell command -v chg 2>/dev/null)
# The Python that runs git-remote-hg and git-cinnabar in the tests (python3 on
# their PATH): the venv's unless given (e.g. TEST_PYTHON=python3.9; CI runs the
# hg 6.3 suite with pyenv's 3.9, the oldest the README promises, and a part of
# the suite with its 3.13).
TEST_PYTHON =
# The helper the commands under test run: the checkout's unless given (CI runs
# the hg 6.3 suite with the one `make dist-helper` builds, build/dist/).
TEST_HELPER =
# What `make test` runs (files or directories under tests/).
TESTS = tests
PYTEST_ARGS =

prefix = /usr/local
bindir = $(prefix)/bin
cinnabardir = $(prefix)/lib/git-cinnabar
mandir = $(prefix)/share/man
bashcompletiondir = $(prefix)/share/bash-completion/completions
zshcompletiondir = $(prefix)/share/zsh/site-functions
# Made by tools/manpages.py (`make manpages`), kept in the tree.
MANPAGES = man/man1/git-cinnabar.1 man/man1/git-remote-hg.1
LAUNCHERS = git-remote-hg git-cinnabar

.PHONY: all bytecode deps helper check-deps git-source venv test test-hg63 lint demo manpages \
	user-git test-user-git print-user-git-versions \
	print-user-git-debian-versions \
	hg-matrix hg-matrix-test hg-matrix-ci hg-matrix-test-ci heptapod-venv \
	install uninstall clean distclean asan fuzz fuzz-short fuzz-push crash-sweep
.DELETE_ON_ERROR:

all: helper bytecode

# The Python package byte-compiled for the python3 the launchers run (they
# exec `python3 -S` from PATH): without it, where Python writes no cache
# (PYTHONDONTWRITEBYTECODE, a read-only checkout), every command compiles
# what it loads, much of a fetch with nothing new (doc/performance.md, "A fetch
# with nothing new").
bytecode:
	python3 -m compileall -q cinnabar

# Pass -j$(JOBS) down unless the caller chose a -j of their own.
helper: check-deps $(GIT_TREE)/.cinnabar-extracted
	+@GIT_CEILING_DIRECTORIES='$(CURDIR)/$(BUILD)' \
	$(MAKE) $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) --no-print-directory \
		-C $(GIT_TREE) -f '$(CURDIR)/helper/helper.mk' \
		CINNABAR_TOP='$(CURDIR)' $(GIT_MAKE_FLAGS) \
		DEVELOPER= HELPER_DEVELOPER='$(DEVELOPER)' helper

# Every missing build dependency is reported at once, with its Debian package
# (DEPS_ARCH=:arm64 and DEPS_CC_PACKAGE name those of a cross build).
DEPS_ARCH =
DEPS_CC_PACKAGE = gcc
check-deps:
	@missing=; packages=; \
	need() { missing="$$missing $$1"; packages="$$packages $$2"; }; \
	has() { command -v "$$1" >/dev/null 2>&1; }; \
	header() { echo "#include <$$1>" | $(CC) -E -x c - >/dev/null 2>&1; }; \
	has tar || need tar tar; \
	has xz || need xz xz-utils; \
	has sha256sum || need sha256sum coreutils; \
	has python3 || need python3 python3; \
	if has $(CC); then \
		has curl-config && header curl/curl.h || \
			need libcurl libcurl4-openssl-dev$(DEPS_ARCH); \
		header zlib.h || need zlib zlib1g-dev$(DEPS_ARCH); \
		header zstd.h || need zstd libzstd-dev$(DEPS_ARCH); \
		header bzlib.h || need bzip2 libbz2-dev$(DEPS_ARCH); \
		header openssl/evp.h || need openssl libssl-dev$(DEPS_ARCH); \
	else \
		need '$(CC)' $(DEPS_CC_PACKAGE); \
	fi; \
	if [ -n "$$missing" ]; then \
		echo "error: missing build dependencies:$$missing" >&2; \
		echo "  on Debian: apt-get install$$packages" >&2; \
		case "$$packages" in *libcurl4*) echo "  (libcurl4-gnutls-dev" \
			"works as well as libcurl4-openssl-dev)" >&2;; esac; \
		exit 1; \
	fi

git-source: $(GIT_TREE)/.cinnabar-extracted

# The pinned release, for scripts (tools/dist-check, tests/release/test_dist.py).
.PHONY: print-git-version
print-git-version:
	@echo $(GIT_VERSION)

$(GIT_TARBALL):
	@bash helper/fetch-git.sh $(GIT_VERSION) $(GIT_SHA256) $@ $(GIT_DEBIAN_SUITE) \
		$(GIT_DEBIAN_VERSIONS)

# The tarball is checked again here, so that one put in build/ by hand is too.
# $(call check-git-tarball,PATH): check the tarball at PATH against GIT_SHA256.
# $(call extract-git,DIR): check the tarball and extract it as DIR/git-$(GIT_VERSION).
define check-git-tarball
	@echo "$(GIT_SHA256)  $(1)" | sha256sum -c --quiet || \
		{ echo "error: $(1): SHA-256 mismatch; remove it and run make again" >&2; \
		  exit 1; }
endef
define extract-git
	$(call check-git-tarball,$<)
	rm -rf $(1)/git-$(GIT_VERSION)
	mkdir -p $(1)
	tar -xJf $< -C $(1)
	@test -f $(1)/git-$(GIT_VERSION)/Makefile
	@touch $@
endef

# GIT_TREE_READY=1: GIT_TREE=<dir> is the pinned release extracted and checked by
# someone else (the `git` component of the Debian source package, debian/rules).
ifeq ($(GIT_TREE_READY),)
$(GIT_TREE)/.cinnabar-extracted: $(GIT_TARBALL)
	$(call extract-git,$(BUILD))
else
$(GIT_TREE)/.cinnabar-extracted:
	@test "$$(cat $(GIT_TREE)/version 2>/dev/null)" = $(GIT_VERSION) || \
		{ echo "error: $(GIT_TREE) is not git $(GIT_VERSION)" >&2; exit 1; }
	@touch $@
endif

# $(REFTABLE_GIT): git $(GIT_VERSION)'s own `git`, built in the pinned tree with
# the helper's flags (so libgit.a and git's objects are shared, not rebuilt), for
# tests/compat/test_reftable.py: repositories using the reftable ref storage need git
# 2.45 or later, which the machine's git may not be.  It is a script running
# the tree's program with the tree as its exec path, so that none of the
# machine's git-* programs of another version is run in its place: those
# the transports run by name are made there too (upload-pack, receive-pack and
# upload-archive, links to git, for local and ssh URLs; git-remote-http(s)).
REFTABLE_GIT_DIR = $(BUILD)/reftable-git
REFTABLE_GIT = $(REFTABLE_GIT_DIR)/git
REFTABLE_GIT_PROGRAMS = git git-upload-pack git-receive-pack git-upload-archive \
	git-remote-http git-remote-https
.PHONY: reftable-git
reftable-git: check-deps $(GIT_TREE)/.cinnabar-extracted
	+@GIT_CEILING_DIRECTORIES='$(CURDIR)/$(BUILD)' \
	$(MAKE) $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) --no-print-directory \
		-C $(GIT_TREE) $(GIT_MAKE_FLAGS) DEVELOPER= $(REFTABLE_GIT_PROGRAMS)
	@mkdir -p $(REFTABLE_GIT_DIR)
	@printf '#!/bin/sh\nGIT_EXEC_PATH=%s exec %s "$$@"\n' \
		'$(CURDIR)/$(GIT_TREE)' '$(CURDIR)/$(GIT_TREE)/git' >$(REFTABLE_GIT)+
	@chmod +x $(REFTABLE_GIT)+ && mv $(REFTABLE_GIT)+ $(REFTABLE_GIT)

# Trying another git release without moving the pins (doc/git-source.md, "Moving
# to the next release"):
#   make try-git TRY_GIT_VERSION=<version> TRY_GIT_SHA256=<sha256 of its tarball>
#                [TRY_GIT_DEBIAN_SUITE=<suite>] [TRY_GIT_DEBIAN_VERSIONS=<versions>]
# gets and checks that release's tarball as the pinned one is got, builds the
# helper against it in $(TRY_GIT_DIR)/ (its tree, objects and program apart from
# the pinned build's; store.c's version check lifted: what it uses of
# fast-import is to be read again), then runs TRY_GIT_TESTS with that helper.
# For a release of USER_GIT_VERSIONS, TRY_GIT_VERSION alone is enough: the
# checksum, Debian version and suite are its USER_GIT_<version> pins.
TRY_GIT_DIR = $(BUILD)/try-git
TRY_GIT_VERSION =
TRY_GIT_PINS = $(USER_GIT_$(TRY_GIT_VERSION))
TRY_GIT_SHA256 = $(word 1,$(TRY_GIT_PINS))
TRY_GIT_DEBIAN_SUITE = $(or $(word 3,$(TRY_GIT_PINS)),$(GIT_DEBIAN_SUITE))
TRY_GIT_DEBIAN_VERSIONS = $(word 2,$(TRY_GIT_PINS))
TRY_GIT_TREE = $(TRY_GIT_DIR)/git-$(TRY_GIT_VERSION)
TRY_GIT_TESTS = tests/clone/test_clone_corpus.py
.PHONY: try-git
try-git: check-deps
	@test -n '$(TRY_GIT_VERSION)' && test -n '$(TRY_GIT_SHA256)' || \
		{ echo "error: make try-git needs TRY_GIT_VERSION and" \
		  "TRY_GIT_SHA256" >&2; exit 1; }
	@bash helper/fetch-git.sh $(TRY_GIT_VERSION) $(TRY_GIT_SHA256) \
		$(TRY_GIT_TREE).tar.xz $(TRY_GIT_DEBIAN_SUITE) $(TRY_GIT_DEBIAN_VERSIONS)
	@test -f $(TRY_GIT_TREE)/.cinnabar-extracted || { \
		rm -rf $(TRY_GIT_TREE) && tar -xJf $(TRY_GIT_TREE).tar.xz \
			-C $(TRY_GIT_DIR) && touch $(TRY_GIT_TREE)/.cinnabar-extracted; }
	+GIT_CEILING_DIRECTORIES='$(CURDIR)/$(BUILD)' \
	$(MAKE) $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) --no-print-directory \
		-C $(TRY_GIT_TREE) -f '$(CURDIR)/helper/helper.mk' \
		CINNABAR_TOP='$(CURDIR)' $(GIT_MAKE_FLAGS) DEVELOPER= \
		HELPER_DEVELOPER='$(DEVELOPER)' \
		HELPER_EXTRA_CFLAGS=-DCINNABAR_GIT_UNCHECKED \
		HELPER_OBJDIR='$(CURDIR)/$(TRY_GIT_DIR)/helper' \
		HELPER_PROGRAM='$(CURDIR)/$(TRY_GIT_DIR)/$(HELPER)' helper
	+@$(MAKE) --no-print-directory test TESTS='$(TRY_GIT_TESTS)' \
		TEST_HELPER='$(TRY_GIT_DIR)/$(HELPER)'

# The sanitized helper lives apart (build/asan/), its own sources compiled with
# the sanitizers and -O1 (fast enough to fuzz; any UBSan report is fatal, as
# ASan's are), linked with git's libraries as the normal build made them: what is
# fuzzed is the helper's reading of its input, and compiling git's tree a second
# time would cost minutes for code the fuzzer does not aim at.  (The fast-import
# code the helper includes is compiled with the helper's sources, so it is
# sanitized too.)  The normal build's objects and program are left alone.
ASAN_DIR = $(BUILD)/asan
ASAN_HELPER = $(ASAN_DIR)/$(HELPER)
SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
ASAN_CFLAGS = -O1 -g $(SANITIZE)

asan: check-deps $(GIT_TREE)/.cinnabar-extracted
	+@GIT_CEILING_DIRECTORIES='$(CURDIR)/$(BUILD)' \
	$(MAKE) $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) --no-print-directory \
		-C $(GIT_TREE) -f '$(CURDIR)/helper/helper.mk' \
		CINNABAR_TOP='$(CURDIR)' $(GIT_MAKE_FLAGS) DEVELOPER= \
		HELPER_EXTRA_CFLAGS='$(ASAN_CFLAGS)' HELPER_LDFLAGS='$(SANITIZE)' \
		HELPER_OBJDIR='$(CURDIR)/$(ASAN_DIR)/helper' \
		HELPER_PROGRAM='$(CURDIR)/$(ASAN_HELPER)' helper

# Fuzzing the bundle reader of the sanitized helper (tests/fuzz/README.md).
# Findings are saved under $(FUZZ_OUT); the run fails when there is one.
# fuzz-short takes 120 s and seed 1 unless FUZZ_SECONDS or FUZZ_SEED are given,
# and minimizes each finding for 15 s at most (30 s for fuzz).
FUZZ_SECONDS = 3600
FUZZ_SEED = $(shell date +%s)
FUZZ_OUT = $(BUILD)/fuzz
FUZZ_JOBS = 2
FUZZ_ARGS =
given = $(filter command line environment,$(origin $(1)))

define run-fuzz
	$(PYTHON) tests/fuzz/fuzz.py --helper $(ASAN_HELPER) --seconds $(1) \
		--seed $(2) --jobs $(FUZZ_JOBS) --out $(FUZZ_OUT) $(FUZZ_ARGS)
endef

fuzz: asan
	$(call run-fuzz,$(FUZZ_SECONDS),$(FUZZ_SEED))

# The fixed findings of tests/fuzz/regressions/, replayed the three ways they were
# found; any finding fails.
# Those of the stream target (stream-*.hg) and of the line target
# (line-*.txt, scripts of command lines) go through it alone.
FUZZ_STREAM_REGRESSIONS = $(wildcard tests/fuzz/regressions/stream-*.hg)
FUZZ_LINE_REGRESSIONS = $(wildcard tests/fuzz/regressions/line-*.txt)
FUZZ_REGRESSIONS = $(filter-out $(FUZZ_STREAM_REGRESSIONS),$(wildcard \
	tests/fuzz/regressions/*.hg))
define replay-regressions
	$(PYTHON) tests/fuzz/fuzz.py --helper $(ASAN_HELPER) --replay $(FUZZ_REGRESSIONS)
	$(PYTHON) tests/fuzz/fuzz.py --helper $(ASAN_HELPER) --stdin \
		--replay $(FUZZ_REGRESSIONS)
	$(PYTHON) tests/fuzz/fuzz.py --helper $(ASAN_HELPER) --ignorecase \
		--replay $(FUZZ_REGRESSIONS)
	$(if $(FUZZ_STREAM_REGRESSIONS),$(PYTHON) tests/fuzz/fuzz.py \
		--helper $(ASAN_HELPER) --stream --replay $(FUZZ_STREAM_REGRESSIONS))
	$(if $(FUZZ_LINE_REGRESSIONS),$(PYTHON) tests/fuzz/fuzz.py \
		--helper $(ASAN_HELPER) --line --replay $(FUZZ_LINE_REGRESSIONS))
endef

# fuzz-short's minimum per job, well below what a job tries in 120 s on a
# 2-core machine whose other core is busy (bundles, streams and scripts of
# command lines in about those proportions): a loaded machine goes on past the
# 120 s until then, and fails if it cannot.
FUZZ_SHORT_MINIMUM = --min-inputs 250 --min-streams 25 --min-lines 10

fuzz-short: asan
	$(replay-regressions)
	$(call run-fuzz,$(if $(call given,FUZZ_SECONDS),$(FUZZ_SECONDS),120),$(if \
		$(call given,FUZZ_SEED),$(FUZZ_SEED),1)) --minimize 15 \
		$(FUZZ_SHORT_MINIMUM)

# The push oracle of tests/push/test_push_oracle.py (tests/lib/push_oracle.py), longer:
# random histories of COMMITS commits for each of SEEDS (`1-20,42`), pushed in
# STEPS pushes, compared with what hg commit makes of them (TEST_HG).  Prints one
# report per seed; fails when one differs.  KEEP=1 keeps the failing repositories;
# PUSH_HELPER=<path> pushes with another build of the helper.
SEEDS = 1-20
COMMITS = 300
STEPS = 4
KEEP =
PUSH_HELPER =
fuzz-push: helper venv
	cd tests && PATH='$(CURDIR)':"$$PATH" CINNABAR_TEST_HG='$(TEST_HG)' \
		'$(CURDIR)/$(VENV)/bin/python' -m lib.push_oracle --seeds $(SEEDS) \
		--commits $(COMMITS) --steps $(STEPS) $(if $(KEEP),--keep) \
		$(if $(PUSH_HELPER),--helper '$(abspath $(PUSH_HELPER))')

# Mutation testing (doc/testing.md, "Mutation testing"): tools/mutate applies
# each mutant of MUTANTS alone to a scratch copy of the tree, rebuilds it and runs
# the tests the mutant names; results in build/mutate/<list>.json.  MUTANT=<name>:
# that one only.  Niced: a run takes a core for most of an hour.  The helper is
# built as the helper's list builds its copy (DEVELOPER=1), so that the copy starts
# from the objects and the program of the tree's sources.
MUTANTS = tests/mutants/helper.txt tests/mutants/cinnabar.txt
MUTANT =
MUTATE_NICE = nice -n 19
.PHONY: mutate
mutate:
	$(MAKE) helper DEVELOPER=1
	CINNABAR_TEST_HG='$(TEST_HG)' $(MUTATE_NICE) python3 tools/mutate \
		--python '$(CURDIR)/$(VENV)/bin/python' \
		$(if $(MUTANT),--only '$(MUTANT)') $(MUTANTS)

# mutmut's own mutants of MUTMUT_MODULES, run against the unit tests of
# MUTMUT_TESTS only: mutmut maps each test to the functions it calls in its own
# process, which leaves out the end-to-end tests (our code runs in the git and
# helper processes they start).  In a copy of the tree (build/mutmut/tree), with
# mutmut in a venv of its own (build/mutmut-venv); `mutmut results` and `mutmut
# show NAME` there afterwards.
MUTMUT_VENV = $(BUILD)/mutmut-venv
MUTMUT_VERSION = 3.8.1
MUTMUT_TREE = $(BUILD)/mutmut/tree
MUTMUT_MODULES = cinnabar/refname.py cinnabar/hg/url.py cinnabar/redact.py
MUTMUT_TESTS = tests/unit/test_refname.py tests/unit/test_url.py \
	tests/unit/test_redact.py
.PHONY: mutate-auto
$(MUTMUT_VENV)/bin/mutmut:
	python3 -m venv $(MUTMUT_VENV)
	$(MUTMUT_VENV)/bin/pip install -q mutmut==$(MUTMUT_VERSION) pytest pytest-timeout
mutate-auto: $(MUTMUT_VENV)/bin/mutmut
	rm -rf $(MUTMUT_TREE) && mkdir -p $(MUTMUT_TREE)
	git ls-files -z | xargs -0 cp --parents -t $(MUTMUT_TREE)
	{ echo '[mutmut]'; echo 'source_paths = cinnabar/'; \
	  echo 'only_mutate ='; printf '    %s\n' $(MUTMUT_MODULES); \
	  echo 'pytest_add_cli_args_test_selection ='; \
	  printf '    %s\n' $(MUTMUT_TESTS); \
	  echo 'pytest_add_cli_args ='; printf '    %s\n' -p no:cacheprovider; \
	} >$(MUTMUT_TREE)/setup.cfg
	cd $(MUTMUT_TREE) && $(MUTATE_NICE) '$(CURDIR)/$(MUTMUT_VENV)/bin/mutmut' \
		run --max-children 1 >mutmut.log 2>&1 || { tail -20 mutmut.log; exit 1; }
	cd $(MUTMUT_TREE) && '$(CURDIR)/$(MUTMUT_VENV)/bin/mutmut' results --all true \
		>results.txt; grep -c ': killed' results.txt | sed 's/$$/ killed/'; \
		grep -v ': killed' results.txt; echo "all: $(MUTMUT_TREE)/results.txt"

# crash-sweep: each scenario of tests/lib/crashsweep.py (a fetch, a push) killed,
# or its writes failed with EIO and ENOSPC, at every one of its write-like system
# calls in turn (strace fault injection), each point checked (fsck, refs, a second
# run, leftovers, one error line); not part of `make test` (hours for all points).
# SWEEP_COUNT=<n> runs n points per fault spread over the run, SWEEP_SCENARIO=fetch
# or push one scenario, SWEEP_FAULTS=KILL,EIO some faults; fails when a point is
# inconsistent.
SWEEP_COUNT =
SWEEP_SCENARIO =
SWEEP_FAULTS = KILL,EIO,ENOSPC
crash-sweep: helper venv
	cd tests && PATH='$(CURDIR)':"$$PATH" CINNABAR_TEST_HG='$(TEST_HG)' \
		'$(CURDIR)/$(VENV)/bin/python' -m lib.crashsweep --faults $(SWEEP_FAULTS) \
		$(if $(SWEEP_COUNT),--count $(SWEEP_COUNT)) \
		$(if $(SWEEP_SCENARIO),--scenario $(SWEEP_SCENARIO))

venv: $(VENV_STAMP) $(EVOLVE_HG63)/.version $(EVOLVE_NOTNS)/.version

# $(call install-evolve,DIR,VERSION): hg-evolve VERSION (pure Python) in DIR.
define install-evolve
	rm -rf $(1)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps \
		--target $(1) hg-evolve==$(2)
	@echo $(2) >$@
endef

$(EVOLVE_HG63)/.version: $(VENV_STAMP)
	$(call install-evolve,$(EVOLVE_HG63),$(EVOLVE_HG63_VERSION))

$(EVOLVE_NOTNS)/.version: $(VENV_STAMP)
	$(call install-evolve,$(EVOLVE_NOTNS),$(EVOLVE_NOTNS_VERSION))

heptapod-venv: $(HEPTAPOD_VENV)/.version

$(HEPTAPOD_VENV)/.version:
	rm -rf $(HEPTAPOD_VENV)
	$(PYTHON) -m venv $(HEPTAPOD_VENV)
	$(HEPTAPOD_VENV)/bin/python -m pip install -q --disable-pip-version-check \
		heptapod==$(HEPTAPOD_VERSION)
	@echo $(HEPTAPOD_VERSION) >$@

$(VENV_STAMP): requirements-test.txt
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || \
		{ echo "error: $(PYTHON) cannot make a venv;" \
		  "on Debian: apt-get install python3-venv" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r $< || \
		{ echo "error: pip failed; where PyPI has no Mercurial wheel for this" \
		  "Python, Mercurial builds C extensions: on Debian," \
		  "apt-get install gcc python3-dev" >&2; exit 1; }
	@cp $< $@

# The tests find the helper and the launchers on PATH (git runs git-remote-hg from
# there), hg through CINNABAR_TEST_HG, and the corpus in ../shared/corpus unless
# CINNABAR_CORPUS says otherwise.
test: helper venv
	@test -x '$(TEST_HG)' || \
		{ echo "error: no hg at $(TEST_HG)" >&2; exit 1; }
	PATH='$(CURDIR)':"$$PATH" HG='$(TEST_HG)' CINNABAR_TEST_HG='$(TEST_HG)' \
		CINNABAR_TEST_PYTHON='$(TEST_PYTHON)' \
		CINNABAR_TEST_HELPER='$(TEST_HELPER)' CINNABAR_TEST_CHG='$(TEST_CHG)' \
		$(VENV)/bin/python -m pytest $(TESTS) $(PYTEST_ARGS)

test-hg63:
	@test -x $(DEBIAN_HG) || \
		{ echo "error: no $(DEBIAN_HG); on Debian: apt-get install mercurial" >&2; \
		  exit 1; }
	@$(MAKE) --no-print-directory test TEST_HG=$(DEBIAN_HG)

# The user's git: the `git` on PATH, which runs git-remote-hg and the client's git
# commands (the helper is linked with the pinned GIT_VERSION whatever it is).  The
# releases the README promises, each built from its Debian source package (Debian's
# patches applied: those of bookworm's 2.39.5 are security fixes; trixie's and
# sid's have none) by tools/user-git into USER_GIT_DIR/<version>, which is kept
# (CI's ~/.cache persists): built again only when its stamp differs.
# USER_GIT_<version> = SHA-256 of its orig tarball (the upstream release tarball),
# Debian source version, suite that serves it.
USER_GIT_VERSIONS = 2.39.5 2.47.3 2.55.0
USER_GIT_2.39.5 = c58da92c378df4a986ca33266897a7397e86c22ee266a284d8c2432c39066b59 \
	1:2.39.5-0+deb12u3 bookworm
USER_GIT_2.47.3 = 9c2eb1250781b3e5bfef098572d07fdf132d67e6c065e4307332ade9819a1501 \
	1:2.47.3-0+deb13u1 trixie
USER_GIT_2.55.0 = 457fdb04dc8728e007d4688695e6912e6f680727920f2a40bf11eacc17505357 \
	1:2.55.0-1 sid
USER_GIT_DIR = $(HOME)/.cache/git-cinnabar/user-git
USER_GIT_TESTS = tests/clone/test_clone_corpus.py tests/push/test_push_series.py tests/fetch/test_repo_lock.py
# Run too with a release that makes reftable repositories (2.46 and later: `git refs
# migrate`), that release being the git the reftable tests use.
USER_GIT_REFTABLE_TESTS = tests/compat/test_reftable.py

user-git:
	@$(foreach v,$(USER_GIT_VERSIONS),JOBS=$(JOBS) bash tools/user-git $(v) \
		$(USER_GIT_$(v)) $(USER_GIT_DIR)/$(v) &&) true

print-user-git-versions:
	@echo $(USER_GIT_VERSIONS)

# "<release> <Debian source version>", a line for each (.ci/run).
print-user-git-debian-versions:
	@$(foreach v,$(USER_GIT_VERSIONS),echo '$(v) $(word 2,$(USER_GIT_$(v)))';)

# Each release first on PATH, CINNABAR_TEST_GIT_VERSION telling the tests which
# git they must find there (tests/conftest.py); every release is tested, the
# exit status says whether all passed.
test-user-git: user-git helper venv
	@failed=; for v in $(USER_GIT_VERSIONS); do \
		echo "=== tests marked usergit with git $$v"; \
		case $$v in 2.39.*|2.4[0-5].*) tests='$(USER_GIT_TESTS)';; \
		*) tests='$(USER_GIT_TESTS) $(USER_GIT_REFTABLE_TESTS)';; esac; \
		PATH='$(USER_GIT_DIR)'/$$v/bin:"$$PATH" CINNABAR_TEST_GIT_VERSION=$$v \
		CINNABAR_TEST_REFTABLE_GIT='$(USER_GIT_DIR)'/$$v/bin/git \
		$(MAKE) --no-print-directory test TESTS="$$tests" \
			PYTEST_ARGS="-m usergit $(PYTEST_ARGS)" || failed="$$failed $$v"; \
	done; \
	if [ -n "$$failed" ]; then echo "test-user-git: failed with git$$failed" >&2; \
		exit 1; fi

# The server matrix: Mercurial releases people still serve, each run by the
# Python it supports (Mercurial 5.2 was the first to run on Python 3), tested by
# tests/compat/test_server_matrix.py together with the venv's Mercurial.  See the
# README's table for what each can and cannot do.
PYENV_ROOT = $(HOME)/.pyenv
pyenv-python = $(lastword $(sort $(wildcard $(PYENV_ROOT)/versions/$(1).*/bin/python$(1))))
HG_MATRIX_PY2 = $(call pyenv-python,2.7)
HG_MATRIX_PY3 = $(call pyenv-python,3.9)
HG_MATRIX_PY2_RELEASES = 4.4.2 4.9.1 5.0.2
HG_MATRIX_PY3_RELEASES = 5.9.3 6.0.3 6.1.4 6.5.3 6.9.5 7.0.3
HG_MATRIX = $(HG_MATRIX_PY2_RELEASES) $(HG_MATRIX_PY3_RELEASES)
# The part of the matrix CI tests (.ci/run), for time: the oldest release
# (Python 2), the oldest of the 6.x series people still serve, and the newest
# before 7.0 (the venv's 7.2 joins as the reference).
HG_MATRIX_CI = 4.4.2 6.1.4 6.9.5
HG_MATRIX_DIR = $(BUILD)/hg-matrix
hg-matrix-spec = $(1):$(if $(filter $(1),$(HG_MATRIX_PY2_RELEASES)),$(HG_MATRIX_PY2),$(HG_MATRIX_PY3))

hg-matrix:
	@bash tools/hg-matrix $(HG_MATRIX_DIR) \
		$(foreach v,$(HG_MATRIX),$(call hg-matrix-spec,$(v)))

# CINNABAR_HG_MATRIX: the hg executables tests/compat/test_server_matrix.py serves with;
# without it (make test), its tests are skipped.  HG_MATRIX_REFERENCE joins
# them (the venv's Mercurial, which CI's whole suite tests already).
HG_MATRIX_REFERENCE = $(TEST_HG)
hg-matrix-test: hg-matrix helper venv
	PATH='$(CURDIR)':"$$PATH" HG='$(TEST_HG)' CINNABAR_TEST_HG='$(TEST_HG)' \
	CINNABAR_TEST_CHG='$(TEST_CHG)' \
	CINNABAR_HG_MATRIX='$(foreach v,$(HG_MATRIX),$(CURDIR)/$(HG_MATRIX_DIR)/$(v)/hg) $(HG_MATRIX_REFERENCE)' \
		$(VENV)/bin/python -m pytest tests/compat/test_server_matrix.py $(PYTEST_ARGS)

hg-matrix-ci:
	@$(MAKE) --no-print-directory hg-matrix HG_MATRIX='$(HG_MATRIX_CI)'

hg-matrix-test-ci:
	@$(MAKE) --no-print-directory hg-matrix-test HG_MATRIX='$(HG_MATRIX_CI)' \
		HG_MATRIX_REFERENCE=

lint: venv
	$(VENV)/bin/python -m flake8 cinnabar tests $(wildcard $(LAUNCHERS))

deps:
	@bash .ci/install-deps

# One command on a fresh Debian machine: packages, helper, venv, then the demo.
demo: deps
	@$(MAKE) --no-print-directory helper venv
	bash demo/run.sh

install: helper
	install -d '$(DESTDIR)$(bindir)' '$(DESTDIR)$(cinnabardir)'
	install -m 755 $(LAUNCHERS) $(HELPER) '$(DESTDIR)$(cinnabardir)/'
	rm -rf '$(DESTDIR)$(cinnabardir)/cinnabar'
	find cinnabar -name '*.py' | while read -r f; do \
		install -D -m 644 "$$f" '$(DESTDIR)$(cinnabardir)'/"$$f" || exit 1; \
	done
	install -D -m 644 hg/cinnabarclone.py '$(DESTDIR)$(cinnabardir)/hg/cinnabarclone.py'
	@# Compiled now: an installed tree is seldom writable by its users, whose
	@# every command would otherwise compile the package again (~0.1 s).
	$(PYTHON) -m compileall -q -d '$(cinnabardir)/cinnabar' \
		'$(DESTDIR)$(cinnabardir)/cinnabar'
	for f in $(LAUNCHERS); do \
		ln -sfn '$(cinnabardir)'/$$f '$(DESTDIR)$(bindir)'/$$f || exit 1; \
	done
	install -d '$(DESTDIR)$(mandir)/man1'
	install -m 644 $(MANPAGES) '$(DESTDIR)$(mandir)/man1/'
	install -D -m 644 completion/git-cinnabar.bash \
		'$(DESTDIR)$(bashcompletiondir)/git-cinnabar'
	install -D -m 644 completion/_git-cinnabar \
		'$(DESTDIR)$(zshcompletiondir)/_git-cinnabar'

uninstall:
	rm -f $(addprefix '$(DESTDIR)$(bindir)'/,$(LAUNCHERS))
	rm -rf '$(DESTDIR)$(cinnabardir)'
	rm -f $(addprefix '$(DESTDIR)$(mandir)/man1/',$(notdir $(MANPAGES)))
	rm -f '$(DESTDIR)$(bashcompletiondir)/git-cinnabar'
	rm -f '$(DESTDIR)$(zshcompletiondir)/_git-cinnabar'

# The manual pages and completions, from the command table and the
# settings (see tools/manpages.py); tests/release/test_help_pages.py checks them.
manpages:
	$(PYTHON) tools/manpages.py

clean:
	rm -rf $(BUILD)/helper $(HELPER) $(HELPER)+ $(ASAN_DIR)/helper $(ASAN_HELPER)

distclean: clean
	rm -rf $(BUILD)

# ---------------------------------------------------------------------------
# Release tree: make dist, dist-check.  See doc/releasing.md.
#
#   make dist [DIST_KEY=<key file>] [DIST_TRUST='<hex>...'] [DIST_CHANNEL=release]
#             [DOWNLOAD_URL=<base URL>]
#                         $(DIST)/: this platform's helper (its own git tree,
#                         build/dist/, built reproducibly with zlib, zstd, bzip2
#                         and libcrypto linked statically), its .sha256, the
#                         Python tree tarball and the signed `release` manifest.
#                         No DIST_KEY: signed with a throwaway key, for testing.
#   make dist-check       build the release tree twice, in two directories, and
#                         compare them byte for byte (slow: run by hand)
#   make DOWNLOAD_URL=... records a default download URL in
#                         cinnabar/build_info.py (cinnabar.download-url wins)
#   make dist DIST_ARCH=aarch64
#                         the linux-aarch64 release tree, the helper cross-built
#   make dist-all         this machine's tree and DIST_CROSS_ARCHS' merged into
#                         $(DIST), one manifest signed again

DIST = dist
# DIST_ARCH=aarch64: the helper cross-built for linux-aarch64 by
# aarch64-linux-gnu-gcc against Debian's arm64 libraries (multiarch), in a
# git tree of its own (build/dist-aarch64/).  Empty: this machine's.
DIST_ARCH =
DIST_DIR = $(BUILD)/dist$(if $(DIST_ARCH),-$(DIST_ARCH))
DIST_GIT_TREE = $(DIST_DIR)/git-$(GIT_VERSION)
DIST_HELPER = $(DIST_DIR)/$(HELPER)
DIST_CHANNEL = release
DIST_KEY =
DIST_TRUST =
DOWNLOAD_URL =
# The key of a release for testing (no DIST_KEY), one for every platform.
DIST_THROWAWAY_KEY = $(BUILD)/dist/throwaway.key
DIST_SIGNING_KEY = $(or $(DIST_KEY),$(DIST_THROWAWAY_KEY))
ifeq ($(DIST_ARCH),)
DIST_PLATFORM := $(shell uname -s | tr A-Z a-z)-$(shell uname -m | tr A-Z a-z)
DIST_TOOLS =
DIST_CC = $(CC)
else
DIST_PLATFORM = linux-$(DIST_ARCH)
DIST_TOOLS = $(DIST_ARCH)-linux-gnu-
DIST_CC = $(DIST_TOOLS)gcc
endif
# Debian's name of DIST_ARCH's architecture, for the -dev packages' names.
DIST_DEB_ARCH = $(patsubst aarch64,arm64,$(DIST_ARCH))
, := ,
# The platforms besides this one that `make dist-all` cross-builds and merges.
DIST_CROSS_ARCHS = aarch64
# Libraries linked statically: a directory holding only their archives comes
# first in the search path, so -lz and the others find the .a there.
DIST_STATIC_LIBS = z zstd bz2 crypto
DIST_LIBDIR = $(DIST_DIR)/static-libs
# No -g and no absolute path in the objects: the same commit gives the same
# bytes wherever and whenever it is built.  git's objects are compiled from
# relative paths; the helper's from absolute ones, mapped away.
DIST_CFLAGS = -O2 -Wall
DIST_HELPER_CFLAGS = -ffile-prefix-map=$(CURDIR)/=
DIST_LDFLAGS = -L$(CURDIR)/$(DIST_LIBDIR) -Wl,--build-id=sha1
# The static libcrypto's dlopen: libdl (an empty archive from glibc 2.34 on).
DIST_EXTRA_LIBS = -ldl
# Every date in the release tree: the commit's (0 outside a git checkout).
ifndef SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
endif

.PHONY: dist dist-helper dist-check-deps dist-all dist-check build-info clean-dist

$(DIST_GIT_TREE)/.cinnabar-extracted: $(GIT_TARBALL)
	$(call extract-git,$(patsubst %/,%,$(dir $(DIST_GIT_TREE))))

$(DIST_LIBDIR)/.stamp:
	@mkdir -p $(DIST_LIBDIR)
	@for l in $(DIST_STATIC_LIBS); do \
		a=$$($(DIST_CC) -print-file-name=lib$$l.a); \
		test -f "$$a" || { echo "error: no static lib$$l.a (the -dev" \
			"package of lib$$l$(if $(DIST_DEB_ARCH),$(,) :$(DIST_DEB_ARCH)))" >&2; \
			exit 1; }; \
		ln -sf "$$a" $(DIST_LIBDIR)/lib$$l.a || exit 1; \
	done
	@touch $@

dist-check-deps:
	+@$(MAKE) --no-print-directory check-deps CC='$(DIST_CC)' \
		$(if $(DIST_ARCH),DEPS_ARCH=':$(DIST_DEB_ARCH)' \
		DEPS_CC_PACKAGE='gcc-$(DIST_ARCH)-linux-gnu')

dist-helper: dist-check-deps $(DIST_GIT_TREE)/.cinnabar-extracted \
		$(DIST_LIBDIR)/.stamp
	+@GIT_CEILING_DIRECTORIES='$(CURDIR)/$(BUILD)' LC_ALL=C TZ=UTC \
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
	$(MAKE) $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) --no-print-directory \
		-C $(DIST_GIT_TREE) -f '$(CURDIR)/helper/helper.mk' \
		CINNABAR_TOP='$(CURDIR)' $(GIT_MAKE_FLAGS) \
		$(if $(DIST_TOOLS),CC='$(DIST_CC)' AR='$(DIST_TOOLS)ar') \
		CFLAGS='$(DIST_CFLAGS)' LDFLAGS='$(DIST_LDFLAGS)' \
		HELPER_EXTRA_CFLAGS='$(DIST_HELPER_CFLAGS)' \
		HELPER_EXTRA_LIBS='$(DIST_EXTRA_LIBS)' \
		DEVELOPER= HELPER_DEVELOPER= \
		HELPER_OBJDIR='$(CURDIR)/$(DIST_DIR)/helper' \
		HELPER_PROGRAM='$(CURDIR)/$(DIST_HELPER)' helper

dist: dist-helper
	@SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(PYTHON) tools/make-dist \
		--helper $(DIST_HELPER) --platform $(DIST_PLATFORM) --out $(DIST) \
		--channel '$(DIST_CHANNEL)' --download-url '$(DOWNLOAD_URL)' \
		$(if $(DIST_TOOLS),--tools '$(DIST_TOOLS)') \
		$(if $(DIST_KEY),--key '$(DIST_KEY)',--throwaway-key $(DIST_THROWAWAY_KEY)) \
		$(foreach k,$(DIST_TRUST),--trust $(k))

# This machine's release tree and, cross-built, those of DIST_CROSS_ARCHS
# (each in $(BUILD)/dist-<arch>/tree), merged into $(DIST): one manifest
# listing every helper, signed again (tools/sign-release merge).
dist-all: dist
	+@for a in $(DIST_CROSS_ARCHS); do \
		$(MAKE) --no-print-directory dist DIST_ARCH=$$a \
			DIST='$(BUILD)/dist-'$$a/tree || exit 1; \
	done
	@$(PYTHON) tools/sign-release merge '$(DIST_SIGNING_KEY)' $(DIST) \
		$(foreach a,$(DIST_CROSS_ARCHS),$(BUILD)/dist-$(a)/tree)

# DIST_CHECK_ARGS: make arguments of both builds (e.g. DIST_ARCH=aarch64).
DIST_CHECK_ARGS =
dist-check:
	bash tools/dist-check $(DIST_CHECK_ARGS)

# The release built in, and checked in, an older distribution's root (as root;
# doc/releasing.md, "Portability"): the helper then needs only that distribution's
# glibc.  The root is made by debootstrap the first time and kept.
#   make dist-root [DIST_ROOT_SUITE=bullseye] [DIST_KEY=...] [DIST_TRUST=...]
#   make dist-check-root   dist/ run there: --version, a clone of nginx.hg, its ids
DIST_ROOT_SUITE = bullseye
DIST_ROOT = $(BUILD)/debian-$(DIST_ROOT_SUITE)
DIST_CORPUS = $(or $(CINNABAR_CORPUS),../shared/corpus)
.PHONY: dist-root dist-check-root
dist-root:
	bash tools/dist-in-root $(DIST_ROOT) $(DIST_ROOT_SUITE) dist-all \
		DIST_CHANNEL='$(DIST_CHANNEL)' DOWNLOAD_URL='$(DOWNLOAD_URL)' \
		$(if $(DIST_KEY),DIST_KEY='$(abspath $(DIST_KEY))') \
		$(if $(DIST_TRUST),DIST_TRUST='$(DIST_TRUST)')
dist-check-root:
	bash tools/dist-check-root $(DIST_ROOT) $(DIST_CORPUS)/nginx.hg \
		$(DIST_CORPUS)/expected/nginx.hg.tsv

# dist/'s linux-aarch64 helper run under qemu-aarch64-static with the root's arm64
# libraries (doc/releasing.md, "linux-aarch64"): its NEEDED libraries, `version`,
# the SHA-1 self-test, a clone of DIST_CHECK_BUNDLE with every git id checked,
# and a push.  `make dist-check-aarch64-reproducible` (as root): the aarch64
# release tree built twice from scratch in the root (tools/dist-check), compared.
DIST_CHECK_BUNDLE = nginx.hg
.PHONY: dist-check-aarch64 dist-check-aarch64-reproducible
dist-check-aarch64:
	bash tools/dist-check-aarch64 $(DIST_ROOT) $(DIST_CORPUS)/$(DIST_CHECK_BUNDLE) \
		$(DIST_CORPUS)/expected/$(notdir $(DIST_CHECK_BUNDLE)).tsv
dist-check-aarch64-reproducible:
	bash tools/dist-in-root $(DIST_ROOT) $(DIST_ROOT_SUITE) dist-check \
		DIST_CHECK_ARGS=DIST_ARCH=aarch64

# `make clean` removes the release tree and the release helper's objects too
# (not build/dist's git tree, which distclean removes with build/).
clean: clean-dist
clean-dist:
	rm -rf $(DIST) $(DIST_DIR)/helper $(DIST_HELPER)

# The download URL chosen at build time, for the Python side.
ifneq ($(DOWNLOAD_URL),)
all: build-info
endif
build-info:
	@$(PYTHON) tools/make-dist --build-info cinnabar/build_info.py \
		--download-url '$(DOWNLOAD_URL)'

# ---------------------------------------------------------------------------
# Debian package (debian/; doc/releasing.md, "Debian package").
#
#   make deb              $(DEB_DIR)/git-cinnabar_<version>_<arch>.deb, with its
#                         source package: this checkout's tracked files as the
#                         upstream tarball, the pinned git tarball (checked
#                         against GIT_SHA256) as its `git` component; then lintian
#   make deb-check        (as root) the package installed with apt-get in a clean
#                         Debian $(DEB_ROOT_SUITE) root, a clone and a push through
#                         it, then purged: nothing may be left
DEB_DIR = $(BUILD)/deb
DEB_ROOT_SUITE = bookworm
DEB_ROOT = $(BUILD)/debian-$(DEB_ROOT_SUITE)
DEB_CHECK_BUNDLE = hgtests/rebase.hg
.PHONY: deb deb-check
deb: $(GIT_TARBALL)
	$(call check-git-tarball,$(GIT_TARBALL))
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) bash tools/make-deb $(DEB_DIR) \
		$(GIT_TARBALL) $(JOBS)
deb-check:
	bash tools/deb-check $(DEB_ROOT) $(DEB_ROOT_SUITE) $(DEB_DIR) \
		$(DIST_CORPUS)/$(DEB_CHECK_BUNDLE) \
		$(DIST_CORPUS)/expected/$(notdir $(DEB_CHECK_BUNDLE)).tsv
