/*
 * File paths as Mercurial accepts them in a manifest.
 *
 * A manifest path is the bytes between the start of a line and its NUL;
 * Mercurial itself never writes one that its path auditor
 * (mercurial/pathutil.py) or its manifest writer refuse, and a server
 * receiving one in a push stores it unchecked (then `hg verify` fails and
 * checkouts write where they should not).  A path is refused when it:
 *
 *   - is empty, starts with '/' (absolute), ends with '/', or has an
 *     empty component ("a//b");
 *   - has a "." or ".." component;
 *   - has '\n' or '\r' anywhere (the manifest is line based), or a NUL;
 *   - has a component that is ".hg" or ".hg." once lower-cased and
 *     rid of the code points HFS+ ignores (U+200C-U+200F, U+202A-U+202E,
 *     U+206A-U+206F, U+FEFF): at the top that is the repository's own
 *     store, below it a nested repository;
 *   - has a component "HG~<digits>" or "HG8B6C~<digits>" (any case):
 *     Windows short names of ".hg";
 *   - has more than HG_PATH_MAX_DEPTH components (git's core.maxTreeDepth
 *     default; deeper trees overflow recursive tree code).
 *
 * Mercurial refuses Windows reserved names (CON, "a:b", trailing dots) only
 * on Windows, or with ui.portablefilenames=abort; so do we not.
 */
#ifndef CINNABAR_HG_PATH_H
#define CINNABAR_HG_PATH_H

#define HG_PATH_MAX_DEPTH 4096
/*
 * The longest file or directory name kept: fast-import's tree code holds
 * name lengths in 16 bits, and the manifest tree prefixes each name with
 * '_' (a longer name would be cut short, silently).
 */
#define HG_PATH_MAX_NAME 65534

/* Number of '/'-separated components of `path`. */
size_t hg_path_depth(const char *path, size_t len);

/*
 * Die, naming the path (C-quoted, in single quotes), when `path` is refused; `action` says
 * what was being done ("push", "import").
 */
void hg_path_audit(const char *path, size_t len, const char *action);

/*
 * The paths an imported manifest may not hold: those that end with '/'
 * (no file name), those deeper than HG_PATH_MAX_DEPTH (git's tree code
 * recurses once per directory), and those with a name longer than
 * HG_PATH_MAX_NAME.  Others that Mercurial refuses are
 * imported as git-cinnabar imports them (git refuses to check out ".git"
 * or ".." entries itself; empty components are dropped from the git tree,
 * the manifest keeps them).  Dies naming the path.
 */
void hg_path_check_import(const char *path, size_t len);

/* Die as hg_path_audit does, saying `why`. */
NORETURN void hg_path_die(const char *path, size_t len, const char *action,
			  const char *why);

/* The reasons given for paths too deep, and for names too long. */
extern const char hg_path_too_deep[];
extern const char hg_path_name_too_long[];

#endif
