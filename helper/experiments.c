/* cinnabar.experiments: see experiments.h. */
#include "libgit.h"
#include "config.h"
#include "experiments.h"

static const char *experiments_value(void)
{
	static int read;
	static const char *value;

	if (!read) {
		read = 1;
		value = getenv("GIT_CINNABAR_EXPERIMENTS");
		if (!value &&
		    repo_config_get_string_tmp(the_repository,
					       "cinnabar.experiments", &value))
			value = NULL;
	}
	return value;
}

/*
 * Find `name` among the comma-separated words; return what follows it in
 * its word (an empty string for the word alone, "=..." for a value), or
 * NULL.
 */
static const char *find_word(const char *name)
{
	const char *p = experiments_value();
	size_t len = strlen(name);

	while (p && *p) {
		const char *end = strchrnul(p, ',');
		if ((size_t)(end - p) >= len && !strncmp(p, name, len) &&
		    (p + len == end || p[len] == '='))
			return p + len;
		p = *end ? end + 1 : end;
	}
	return NULL;
}

int experiment(const char *name)
{
	const char *rest = find_word(name);
	return rest && (!*rest || *rest == ',');
}

int push_similarity(void)
{
	const char *rest;
	char *end;
	int percent;
	long n;

	if (!repo_config_get_int(the_repository, "cinnabar.similarity",
				 &percent)) {
		if (percent >= 0 && percent <= 100)
			return percent;
		warning("invalid value for cinnabar.similarity: '%d'", percent);
		return 100;
	}
	rest = find_word("similarity");
	if (!rest || *rest != '=')
		return 100;
	n = strtol(rest + 1, &end, 10);
	if (end == rest + 1 || (*end && *end != ',') || n < 0 || n > 100) {
		warning("invalid value for the similarity experiment: '%.*s'",
			(int)strcspn(rest + 1, ","), rest + 1);
		return 100;
	}
	return n;
}
