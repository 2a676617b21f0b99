/*
 * Looking ids up in a pack's .idx (version 2) with pread(), without
 * mapping it: for the finished packs of the store's session (store.c),
 * looked up for every new object that passes their filter.
 *
 * Mapped, a .idx read at random pages ends up wholly in memory (the
 * kernel maps up to 16 pages around each page read), 28 bytes per
 * object; letting its pages go after each lookup (madvise) would cost a
 * system call, page faults at the next lookup, and, with the store's
 * deflating thread, a TLB shootdown on the other CPU. Here a
 * lookup is one pread of a small window of the id table, two when the
 * id is found (its offset), and the .idx stays in the page cache only.
 *
 * Format (git's Documentation/gitformat-pack.txt, "Version 2 pack-*.idx
 * files"): "\377tOc", version 2 (4 bytes, network order); the fan-out
 * table, 256 cumulative counts of 4 bytes (entry i: the number of ids
 * whose first byte is at most i); the sorted ids, 20 bytes each; a CRC32
 * of 4 bytes per object; an offset of 4 bytes per object, or, when its
 * high bit is set, the index of an 8-byte offset in the table that
 * follows.
 */
#ifndef CINNABAR_IDX_LOOKUP_H
#define CINNABAR_IDX_LOOKUP_H

struct idx_lookup {
	int fd;
	uint32_t nr;
	uint32_t fanout[256];
};

/* Open the .idx at `path`: 0, or -1 when it is not a version 2 .idx. */
int idx_lookup_open(struct idx_lookup *idx, const char *path);
void idx_lookup_close(struct idx_lookup *idx);

/* The offset in the pack of the object `hash`, or 0 when it lacks it. */
off_t idx_lookup_find(struct idx_lookup *idx, const unsigned char *hash);

#endif
