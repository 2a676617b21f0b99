/*
 * libgit.h: git's library as the helper sees it. Every helper source that
 * uses more of libgit than git-compat-util.h includes this first, in place
 * of the one header (cache.h) that older git releases had for it all.
 *
 * The helper is one of libgit's callers that work on one repository, the
 * one it runs in: USE_THE_REPOSITORY_VARIABLE gives it the_repository and
 * the functions that take it implicitly, and must be defined before any of
 * git's headers is read. The headers listed are those whose names most of
 * the helper uses (object ids in hex, reading objects, the environment's
 * settings); a source needing another includes it itself.
 */
#ifndef CINNABAR_LIBGIT_H
#define CINNABAR_LIBGIT_H

#define USE_THE_REPOSITORY_VARIABLE
#include "git-compat-util.h"
#include "environment.h"
#include "gettext.h"
#include "hash.h"
#include "hex.h"
#include "object.h"
#include "object-file.h"
#include "object-name.h"
#include "object-store-ll.h"
#include "path.h"
#include "repository.h"
#include "setup.h"
#include "strbuf.h"

#endif
