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
#if __has_include("odb.h")
#include "odb.h"		/* git 2.51 and later */
#else
#include "object-store-ll.h"
#endif
#include "path.h"
#include "repository.h"
#include "setup.h"
#include "strbuf.h"

/*
 * libgit's API changed between the pinned release and the newer ones that
 * `make try-git` builds against (doc/git-source.md): functions gained a
 * repository or object database argument, sizes became size_t, names
 * moved. The helper calls the cinnabar_* names below, which are written
 * twice: against the pinned release, and against 2.55.0 (the newest
 * tried). CINNABAR_GIT_VERSION_NUM (helper.mk) is the release compiled
 * against, 24703 for 2.47.3; releases between the two are untried, and
 * take the pinned release's side.
 */
#if CINNABAR_GIT_VERSION_NUM >= 25500
#define CINNABAR_GIT_NEW_API 1
#else
#define CINNABAR_GIT_NEW_API 0
#endif

#include "commit.h"
#include "credential.h"
#include "oidmap.h"
#include "packfile.h"
#include "refs.h"
#include "string-list.h"

#if CINNABAR_GIT_NEW_API
/* The sizes the helper passes are unsigned long: the same as size_t. */
extern char cinnabar_sizes_alike[sizeof(unsigned long) == sizeof(size_t)
				 ? 1 : -1];
typedef struct git_hash_ctx cinnabar_hash_ctx;
#define cinnabar_null_oid() null_oid(the_hash_algo)
#define cinnabar_read_object(oid, type, size) \
	odb_read_object(the_repository->objects, (oid), (type), \
			(size_t *)(size))
#define cinnabar_object_info(oid, size) \
	odb_read_object_info(the_repository->objects, (oid), \
			     (size_t *)(size))
#define cinnabar_object_info_extended(oid, oi, flags) \
	odb_read_object_info_extended(the_repository->objects, (oid), (oi), \
				      (flags))
#define cinnabar_unpack_entry(p, offset, type, size) \
	unpack_entry(the_repository, (p), (offset), (type), (size_t *)(size))
#define cinnabar_unpack_object_header(p, w, pos, size) \
	unpack_object_header((p), (w), (pos), (size_t *)(size))
#define cinnabar_mkstemp(path, pattern) \
	odb_mkstemp(the_repository->objects, (path), (pattern))
#define cinnabar_pack_name(buf, hash, ext) \
	odb_pack_name(the_repository, (buf), (hash), (ext))
#define cinnabar_find_in_pack(oid, p) find_pack_entry_one((oid), (p))
#define cinnabar_common_path(sb, ...) \
	repo_common_path_append(the_repository, (sb), __VA_ARGS__)
#define cinnabar_create_leading_directories(path) \
	safe_create_leading_directories(the_repository, (path))
#define cinnabar_transaction_begin(refs, err) \
	ref_store_transaction_begin((refs), 0, (err))
#define cinnabar_setup_git_directory_gently(nongit) \
	setup_git_directory_gently(the_repository, (nongit))
#define cinnabar_credential_fill(c) credential_fill(the_repository, (c), 1)
#define cinnabar_credential_approve(c) credential_approve(the_repository, (c))
#define cinnabar_credential_reject(c) credential_reject(the_repository, (c))
#define cinnabar_oidmap_clear(map) oidmap_clear((map), 1)
#define cinnabar_commit_list_free(list) commit_list_free(list)
#define cinnabar_string_list_split(list, string, delim) \
	string_list_split((list), (string), (const char[]){ (delim), 0 }, -1)
#define cinnabar_pack_compression_level() \
	(repo_config_values(the_repository)->pack_compression_level)
/* Settings of pack reads: fields of the repository's settings. */
#define CINNABAR_PACK_SETTING(name) \
	(*(prepare_repo_settings(the_repository), \
	   &the_repository->settings.name))
#else
typedef git_hash_ctx cinnabar_hash_ctx;
#define cinnabar_null_oid() null_oid()
#define cinnabar_read_object(oid, type, size) \
	repo_read_object_file(the_repository, (oid), (type), (size))
#define cinnabar_object_info(oid, size) \
	oid_object_info(the_repository, (oid), (size))
#define cinnabar_object_info_extended(oid, oi, flags) \
	oid_object_info_extended(the_repository, (oid), (oi), (flags))
#define cinnabar_unpack_entry(p, offset, type, size) \
	unpack_entry(the_repository, (p), (offset), (type), (size))
#define cinnabar_unpack_object_header(p, w, pos, size) \
	unpack_object_header((p), (w), (pos), (size))
#define cinnabar_mkstemp(path, pattern) odb_mkstemp((path), (pattern))
#define cinnabar_pack_name(buf, hash, ext) odb_pack_name((buf), (hash), (ext))
#define cinnabar_find_in_pack(oid, p) find_pack_entry_one((oid)->hash, (p))
#define cinnabar_common_path(sb, ...) \
	strbuf_git_common_path((sb), the_repository, __VA_ARGS__)
#define cinnabar_create_leading_directories(path) \
	safe_create_leading_directories(path)
#define cinnabar_transaction_begin(refs, err) \
	ref_store_transaction_begin((refs), (err))
#define cinnabar_setup_git_directory_gently(nongit) \
	setup_git_directory_gently(nongit)
#define cinnabar_credential_fill(c) credential_fill((c), 1)
#define cinnabar_credential_approve(c) credential_approve(c)
#define cinnabar_credential_reject(c) credential_reject(c)
#define cinnabar_oidmap_clear(map) oidmap_free((map), 1)
#define cinnabar_commit_list_free(list) free_commit_list(list)
#define cinnabar_string_list_split(list, string, delim) \
	string_list_split((list), (string), (delim), -1)
#define cinnabar_pack_compression_level() (pack_compression_level)
#define CINNABAR_PACK_SETTING(name) (name)
#endif

#endif
