# helper/helper.mk: build git-cinnabar-helper against the pinned git tree.
#
# The top-level Makefile runs this file from inside the pinned git tree:
#
#   make -C build/git-2.47.3 -f $(TOP)/helper/helper.mk CINNABAR_TOP=$(TOP) \
#        <git build flags> helper
#
# It includes git's own Makefile, so git's libraries (libgit.a, xdiff/lib.a,
# reftable/libreftable.a, common-main.o) are built by git's rules, and the
# helper's sources are compiled with exactly git's $(ALL_CFLAGS): the structures
# the helper shares with libgit.a must have the same layout on both sides.  The
# git tree root is the include path ("-I." in git's flags), so a helper file can
# say #include "builtin/fast-import.c" (store.c does; git-http.c includes git's
# http.c, which is why git's http.o is not linked).
#
# Every helper/*.c and helper/sha1/*.c (the SHA-1 library) goes into the one
# program.  Objects live in build/helper/ (build/helper/sha1/ for the library),
# the program at the top of the work tree, next to the launchers.
#
# Two macros are defined for helper/main.c, the one source that uses them:
#   CINNABAR_HELPER_VERSION   the helper's version, e.g. "0.1.0"
#   CINNABAR_BUILD_ID         a hash of the helper's sources, so that a helper
#                             built from other sources can be recognised as stale:
#                             cinnabar/helper_version.py's expected_build_id(),
#                             the one definition of it, run here with python3
#                             ($(HELPER_PYTHON)), which the Python side compares
#                             with the helper's answer to `version`.
# Changing either one recompiles main.o only: the build id changes with every
# edit of a helper source, which would otherwise recompile all of them.

# Where this file is, before git's Makefile adds its own names to MAKEFILE_LIST.
HELPER_MK_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
HELPER_SRCDIR ?= $(HELPER_MK_DIR)
CINNABAR_TOP ?= $(patsubst %/,%,$(dir $(HELPER_MK_DIR)))
HELPER_OBJDIR ?= $(CINNABAR_TOP)/build/helper
HELPER_PROGRAM ?= $(CINNABAR_TOP)/git-cinnabar-helper

include Makefile

# HELPER_DEVELOPER=1 (the top-level `make DEVELOPER=1`): the helper's own sources
# are compiled with git's DEVELOPER=1 warnings, -Werror included (DEVOPTS applies as
# in git), taken from the pinned tree's config.mak.dev.  git's own objects keep their
# flags: its $(DEVELOPER_CFLAGS) is put back as it was, so GIT-CFLAGS, and with it
# libgit.a, do not change.
ifneq ($(HELPER_DEVELOPER),)
HELPER_SAVED_DEVELOPER_CFLAGS := $(DEVELOPER_CFLAGS)
HELPER_SAVED_SPARSE_FLAGS := $(SPARSE_FLAGS)
HELPER_SAVED_PERL_FATAL := $(GIT_TEST_PERL_FATAL_WARNINGS)
DEVELOPER_CFLAGS :=
include config.mak.dev
HELPER_DEV_CFLAGS := $(DEVELOPER_CFLAGS)
DEVELOPER_CFLAGS := $(HELPER_SAVED_DEVELOPER_CFLAGS)
SPARSE_FLAGS := $(HELPER_SAVED_SPARSE_FLAGS)
GIT_TEST_PERL_FATAL_WARNINGS := $(HELPER_SAVED_PERL_FATAL)
endif

HELPER_VERSION = 0.1.0

HELPER_SOURCES := $(sort $(wildcard $(HELPER_SRCDIR)/*.c $(HELPER_SRCDIR)/sha1/*.c))
HELPER_OBJS := $(patsubst $(HELPER_SRCDIR)/%.c,$(HELPER_OBJDIR)/%.o,$(HELPER_SOURCES))
HELPER_PYTHON = python3
HELPER_BUILD_ID := $(shell cd '$(CINNABAR_TOP)' && $(HELPER_PYTHON) -B -c \
	'from cinnabar.helper_version import expected_build_id as f; print(f() or "")')
ifeq ($(HELPER_BUILD_ID),)
$(error cannot compute the build id: $(HELPER_PYTHON) running $(CINNABAR_TOP)/cinnabar/helper_version.py)
endif

# The release compiled against, as a name (2_47_3: store.c's and git-http.c's
# checks) and as a number (24703: libgit.h's choice between APIs).
HELPER_GIT_VERSION_NUM = $(shell printf '%d%02d%02d' \
	$(wordlist 1,3,$(subst ., ,$(GIT_VERSION)) 0 0))
HELPER_DEFINES = -DCINNABAR_GIT_VERSION_ID=$(subst .,_,$(GIT_VERSION)) \
	-DCINNABAR_GIT_VERSION_NUM=$(HELPER_GIT_VERSION_NUM)
HELPER_VERSION_DEFINES = -DCINNABAR_HELPER_VERSION='"$(HELPER_VERSION)"' \
	-DCINNABAR_BUILD_ID='"$(HELPER_BUILD_ID)"'
$(HELPER_OBJDIR)/main.o: HELPER_OBJ_DEFINES = $(HELPER_VERSION_DEFINES)
$(HELPER_OBJDIR)/main.o: $(HELPER_OBJDIR)/HELPER-VERSION

# Flags for the helper's own objects only, not git's (which would all be rebuilt
# when they change): `make dist` maps the source directory away with
# -ffile-prefix-map, so that where it is built leaves no trace in the helper.
HELPER_EXTRA_CFLAGS =

# Libraries the helper needs beyond git's own: bundle decompression, and
# OpenSSL's SHA-1 for Mercurial ids (see hg-id.c).  libcurl comes with git's
# http.c (in git-http.o) through git's $(CURL_LIBCURL), zlib and pthread through
# git's $(LIBS).
# HELPER_EXTRA_LIBS: what a static libcrypto needs besides (`make dist`: libdl,
# which glibc before 2.34 keeps out of libc).
HELPER_EXTRA_LIBS =
HELPER_LIBS = -lzstd -lbz2 -lcrypto $(HELPER_EXTRA_LIBS)
# Link flags for the helper only, kept out of git's GIT-LDFLAGS (`make asan`:
# the sanitizers' runtime).
HELPER_LDFLAGS =

.PHONY: helper helper-print-flags
helper: $(HELPER_PROGRAM)

ifeq ($(HELPER_SOURCES),)
$(HELPER_PROGRAM):
	$(error no C sources in $(HELPER_SRCDIR))
else
$(HELPER_PROGRAM): $(HELPER_OBJS) GIT-LDFLAGS $(GITLIBS)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -o $@+ $(ALL_LDFLAGS) $(HELPER_LDFLAGS) \
		$(filter %.o,$^) \
		$(CURL_LIBCURL) $(LIBS) $(HELPER_LIBS) && mv $@+ $@
endif

# Rewritten only when what they hold changes, so that objects are recompiled then
# and only then (git's GIT-CFLAGS does the same for its flags): HELPER-CFLAGS, the
# flags of every helper object; HELPER-VERSION, the version and build id of main.o.
# $(call helper-stamp,<file>,<contents>)
define helper-stamp
	@mkdir -p $(sort $(HELPER_OBJDIR) $(dir $(HELPER_OBJS)))
	@flags='$(strip $(2))'; \
	if test x"$$flags" != x"`cat $(1) 2>/dev/null`"; then \
		echo "$$flags" >$(1); \
	fi
endef
$(HELPER_OBJDIR)/HELPER-CFLAGS: FORCE
	$(call helper-stamp,$@,$(GIT_VERSION) $(HELPER_DEV_CFLAGS) $(HELPER_EXTRA_CFLAGS))
$(HELPER_OBJDIR)/HELPER-VERSION: FORCE
	$(call helper-stamp,$@,$(HELPER_VERSION) $(HELPER_BUILD_ID))

$(HELPER_OBJDIR)/%.o: $(HELPER_SRCDIR)/%.c $(HELPER_OBJDIR)/HELPER-CFLAGS GIT-CFLAGS \
		| $(GENERATED_H)
	$(QUIET_CC)$(CC) -o $@ -c -MMD -MP -MF $(@:.o=.d) $(ALL_CFLAGS) $(HELPER_DEV_CFLAGS) \
		$(HELPER_DEFINES) $(HELPER_OBJ_DEFINES) $(HELPER_EXTRA_CFLAGS) $<

-include $(HELPER_OBJS:.o=.d)

# For editors and tools: the exact flags a helper source is compiled with.
helper-print-flags:
	@echo $(CC) $(ALL_CFLAGS) $(HELPER_DEV_CFLAGS) $(HELPER_DEFINES) $(HELPER_VERSION_DEFINES) $(HELPER_EXTRA_CFLAGS)
	@echo $(ALL_LDFLAGS) $(CURL_LIBCURL) $(LIBS) $(HELPER_LIBS)
