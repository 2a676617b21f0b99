/* The file groups of a push's changegroup: see push-files.c. */
#ifndef CINNABAR_PUSH_FILES_H
#define CINNABAR_PUSH_FILES_H

#include "push-state.h"

/*
 * Sort st->files as they are written; return how many revisions will be
 * written (one listed twice is written once), for the progress' total.
 */
size_t push_sort_files(struct push_state *st);

/*
 * Write the file groups of st->files (sorted by push_sort_files first)
 * and the empty chunk that ends them to `f`.
 */
void push_write_files(FILE *f, struct push_state *st);

#endif
