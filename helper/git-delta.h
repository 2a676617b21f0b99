/*
 * Reading git's delta format (git's Documentation/gitformat-pack.txt,
 * "Deltified representation"): the base and result sizes as
 * little-endian base-128 varints, then instructions: a byte with its high
 * bit set copies from the base, its bits 0-3 telling which of 4 offset
 * bytes follow and bits 4-6 which of 3 size bytes follow (little-endian,
 * absent bytes are 0; a size of 0 means 0x10000); a byte from 1 to 127
 * inserts that many following bytes; 0 is reserved.
 */
#ifndef CINNABAR_GIT_DELTA_H
#define CINNABAR_GIT_DELTA_H

/* A size of the header at *p, *p moved past it; -1 when malformed. */
int git_delta_read_size(const unsigned char **p, const unsigned char *end,
			size_t *out);

struct git_delta_op {
	int copy;		/* else an insert */
	size_t off;		/* of a copy, in the base */
	size_t size;
	const unsigned char *data;	/* of an insert */
};

/* The instruction at *p (before `end`), *p moved past it; -1 if malformed. */
int git_delta_read_op(const unsigned char **p, const unsigned char *end,
		      struct git_delta_op *op);

#endif
