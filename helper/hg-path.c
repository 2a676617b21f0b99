/* File paths as Mercurial accepts them: see hg-path.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "quote.h"
#include "hg-path.h"

const char hg_path_too_deep[] =
	"it is more than 4096 directories deep (git's core.maxTreeDepth)";
const char hg_path_name_too_long[] =
	"one of its names is longer than 65534 bytes, which git-cinnabar's "
	"trees cannot hold";

/* Whether a component of the path is longer than HG_PATH_MAX_NAME. */
static int has_long_name(const char *path, size_t len)
{
	const char *end = path + len, *p = path;

	if (len <= HG_PATH_MAX_NAME)
		return 0;
	while (p < end) {
		const char *slash = memchr(p, '/', end - p);
		size_t clen = (slash ? slash : end) - p;
		if (clen > HG_PATH_MAX_NAME)
			return 1;
		p += clen + 1;
	}
	return 0;
}

/* UTF-8 encodings of the code points HFS+ ignores in file names. */
static const char *const hfs_ignored[] = {
	"\xe2\x80\x8c", "\xe2\x80\x8d", "\xe2\x80\x8e", "\xe2\x80\x8f",
	"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad",
	"\xe2\x80\xae", "\xe2\x81\xaa", "\xe2\x81\xab", "\xe2\x81\xac",
	"\xe2\x81\xad", "\xe2\x81\xae", "\xe2\x81\xaf", "\xef\xbb\xbf",
};

/* Length of the HFS+-ignored code point at `p`, or 0. */
static size_t hfs_ignored_at(const char *p, size_t left)
{
	size_t i;
	if (left < 3 || ((unsigned char)*p != 0xe2 && (unsigned char)*p != 0xef))
		return 0;
	for (i = 0; i < ARRAY_SIZE(hfs_ignored); i++)
		if (!memcmp(p, hfs_ignored[i], 3))
			return 3;
	return 0;
}

/* Whether a component reads ".hg" or ".hg." to Mercurial. */
static int is_dot_hg(const char *p, size_t len)
{
	char clean[5];
	size_t n = 0, skip;
	while (len) {
		if ((skip = hfs_ignored_at(p, len))) {
			p += skip;
			len -= skip;
			continue;
		}
		if (n == 4)
			return 0;
		clean[n++] = tolower(*p++);
		len--;
	}
	return (n == 3 && !memcmp(clean, ".hg", 3)) ||
	       (n == 4 && !memcmp(clean, ".hg.", 4));
}

/* Whether a component is a Windows short name of ".hg". */
static int is_hg_short_name(const char *p, size_t len)
{
	const char *tilde = memchr(p, '~', len);
	size_t first, i;
	if (!tilde || tilde == p + len - 1)
		return 0;
	for (i = tilde - p + 1; i < len; i++)
		if (!isdigit(p[i]))
			return 0;
	first = tilde - p;
	return (first == 2 && !strncasecmp(p, "hg", 2)) ||
	       (first == 6 && !strncasecmp(p, "hg8b6c", 6));
}

static const char *component_problem(const char *p, size_t len)
{
	if (!len)
		return "it has an empty component";
	if ((len == 1 && *p == '.') || (len == 2 && !memcmp(p, "..", 2)))
		return "it has a '.' or '..' component";
	if (is_dot_hg(p, len))
		return "it has a '.hg' component (Mercurial's own store)";
	if (is_hg_short_name(p, len))
		return "it has a Windows short name of '.hg'";
	return NULL;
}

size_t hg_path_depth(const char *path, size_t len)
{
	size_t depth = 1;
	const char *end = path + len;
	while ((path = memchr(path, '/', end - path))) {
		depth++;
		path++;
	}
	return depth;
}

/* Why `path` is refused, or NULL when Mercurial accepts it. */
static const char *hg_path_problem(const char *path, size_t len)
{
	const char *end = path + len, *p = path;
	if (!len)
		return "it is empty";
	if (*path == '/')
		return "it is absolute";
	if (path[len - 1] == '/')
		return "it ends with '/'";
	if (memchr(path, '\n', len) || memchr(path, '\r', len))
		return "Mercurial does not allow '\\n' or '\\r' in file names";
	if (memchr(path, '\0', len))
		return "it has a NUL byte";
	if (hg_path_depth(path, len) > HG_PATH_MAX_DEPTH)
		return hg_path_too_deep;
	if (has_long_name(path, len))
		return hg_path_name_too_long;
	while (p <= end) {
		const char *slash = memchr(p, '/', end - p);
		size_t clen = (slash ? slash : end) - p;
		const char *why = component_problem(p, clen);
		if (why)
			return why;
		p += clen + 1;
	}
	return NULL;
}

void hg_path_audit(const char *path, size_t len, const char *action)
{
	const char *why = hg_path_problem(path, len);
	if (why)
		hg_path_die(path, len, action, why);
}

void hg_path_check_import(const char *path, size_t len)
{
	if (len && path[len - 1] == '/')
		hg_path_die(path, len, "import", "a file name cannot end "
			    "with '/'");
	if (len > HG_PATH_MAX_DEPTH * 2 &&
	    hg_path_depth(path, len) > HG_PATH_MAX_DEPTH)
		hg_path_die(path, len, "import", hg_path_too_deep);
	if (has_long_name(path, len))
		hg_path_die(path, len, "import", hg_path_name_too_long);
}

void hg_path_die(const char *path, size_t len, const char *action,
		 const char *why)
{
	struct strbuf quoted = STRBUF_INIT;
	char *shown;
	/* Long paths (deep ones) are cut: the start names them well. */
	shown = xmemdupz(path, len > 200 ? 200 : len);
	quote_c_style(shown, &quoted, NULL, CQUOTE_NODQ);
	free(shown);
	die("cannot %s the file '%s'%s: %s (%s)", action, quoted.buf,
	    len > 200 ? "..." : "", why,
	    !strcmp(action, "push") ?
	    "rename or remove it in a new commit, then push that" :
	    "this repository cannot be converted to git as it is");
}
