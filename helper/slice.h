/*
 * A piece of a buffer (not NUL-terminated, not owned): what parsers of
 * commits and changesets hand out for their fields.
 */
#ifndef CINNABAR_SLICE_H
#define CINNABAR_SLICE_H

struct slice {
	const char *buf;
	size_t len;
};

#endif
