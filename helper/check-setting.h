/*
 * cinnabar.check: which Mercurial ids the import verifies.
 *
 * The config value is a comma-separated list applied left to right to
 * the default, which verifies every id:
 *     nodeid      changeset ids        manifests   manifest ids
 *     files       file revision ids    all, true   the three above
 *     no-<check>  turn <check> off (no-nodeid, no-manifests, no-files)
 *     none, false turn the three off
 * so a git-cinnabar setting that turns checks on (`nodeid,manifests`)
 * verifies at least as much here, and only `no-...` or `none` verifies
 * less (`none,manifests`: manifests only). Other values git-cinnabar
 * knows (helper, traceback, bundle, memory, cpu, time, no-bundle2,
 * cinnabarclone, clonebundles, unbundler, no-version-check) are accepted
 * and have no effect here; anything else gets a warning and is ignored.
 * The default differs from git-cinnabar's, which leaves manifests (and
 * files) unchecked.
 */
#ifndef CINNABAR_CHECK_SETTING_H
#define CINNABAR_CHECK_SETTING_H

#define CHECK_NODEID 0x1
#define CHECK_MANIFESTS 0x2
#define CHECK_FILES 0x4
#define CHECK_ALL (CHECK_NODEID | CHECK_MANIFESTS | CHECK_FILES)

/* Whether all the checks in `flags` are on (reads the config once). */
int check_enabled(unsigned flags);

#endif
