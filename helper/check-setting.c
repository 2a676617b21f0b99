/* cinnabar.check: see check-setting.h. */
#include "libgit.h"
#include "config.h"
#include "string-list.h"
#include "check-setting.h"

static const struct {
	const char *name;
	unsigned flags;
} checks[] = {
	{ "nodeid", CHECK_NODEID },
	{ "manifests", CHECK_MANIFESTS },
	{ "files", CHECK_FILES },
};

/* git-cinnabar's other values: accepted, without effect here
 * (cinnabarclone is read by cinnabar/config.py). */
static const char *const inert[] = {
	"helper", "traceback", "bundle", "memory", "cpu", "time",
	"no-bundle2", "cinnabarclone", "clonebundles", "unbundler",
	"no-version-check",
};

static int apply_one(unsigned *flags, const char *word)
{
	int off = skip_prefix(word, "no-", &word);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		if (strcmp(word, checks[i].name))
			continue;
		if (off)
			*flags &= ~checks[i].flags;
		else
			*flags |= checks[i].flags;
		return 0;
	}
	return -1;
}

/* A cinnabar.check value (NULL: unset) as CHECK_* flags. */
static unsigned check_parse(const char *value)
{
	struct string_list words = STRING_LIST_INIT_DUP;
	unsigned flags = CHECK_ALL;
	size_t i;

	if (!value)
		return flags;
	cinnabar_string_list_split(&words, value, ',');
	for (i = 0; i < words.nr; i++) {
		const char *word = words.items[i].string;
		size_t j;

		if (!*word)
			continue;
		if (!strcmp(word, "all") || !strcmp(word, "true"))
			flags = CHECK_ALL;
		else if (!strcmp(word, "none") || !strcmp(word, "false"))
			flags = 0;
		else if (apply_one(&flags, word)) {
			for (j = 0; j < ARRAY_SIZE(inert); j++)
				if (!strcmp(word, inert[j]))
					break;
			if (j == ARRAY_SIZE(inert))
				warning("cinnabar.check: unknown value '%s' "
					"ignored", word);
		}
	}
	string_list_clear(&words, 0);
	return flags;
}

int check_enabled(unsigned flags)
{
	static int loaded;
	static unsigned enabled;

	if (!loaded) {
		const char *value = NULL;
		if (repo_config_get_string_tmp(the_repository,
					       "cinnabar.check", &value))
			value = NULL;
		enabled = check_parse(value);
		loaded = 1;
	}
	return (enabled & flags) == flags;
}
