/* The file groups of a push's changegroup: see push-files.c. */
#ifndef CINNABAR_PUSH_FILES_H
#define CINNABAR_PUSH_FILES_H

#include "push-state.h"

/*
 * Write the file groups of st->files (sorted here) and the empty chunk
 * that ends them to `f`.
 */
void push_write_files(FILE *f, struct push_state *st);

#endif
