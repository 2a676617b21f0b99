/*
 * Notes trees used as maps from a 20-byte key to an object id.
 *
 * git-cinnabar's metadata keeps three such maps, each as a tree laid out
 * like git notes (40-hex names, possibly split into 2-hex directories,
 * "fanout"), referenced from a commit:
 *   hg2git:     hg id -> git object, entries of mode 160000 (gitlinks);
 *   git2hg:     git commit -> blob describing the changeset, mode 100644;
 *   files-meta: hg file id -> blob with the file's metadata, mode 100644.
 * A map is read from a sorted table through mmap, a cache of its notes
 * tree under .git/cinnabar/ (id-table.h, made again when missing or of
 * another notes commit); changes are kept in memory, merged into a new
 * table past a number of them, and written as a new tree by
 * notes_map_store.
 */
#ifndef CINNABAR_NOTES_MAP_H
#define CINNABAR_NOTES_MAP_H

#include "hash.h"
#include "id-table.h"
#include "pack-filter.h"

struct notes_map {
	struct object_id commit;	/* notes commit of the base, or null */
	const char *name;		/* of its cache, .git/cinnabar/<name>.idx
					   (none when NULL: never stored) */
	unsigned mode;			/* mode of the entries written */
	int dirty;
	int base_ready;			/* `base` was opened (or made) */
	int trust_cache;		/* notes_map_trust_cache at init */
	int remade;			/* the cache was found damaged and
					   made again */
	struct id_table base;		/* the entries before those of `map` */
	struct pack_filter filter;	/* of the keys of a base this process
					   merged (blocks NULL otherwise):
					   most keys it lacks are told without
					   reading it */
	void *map;			/* khash: key -> value, set since */
	unsigned long spill_at;		/* entries of `map` merged into base */
	int spilled;			/* some were since `commit`: what
					   changed since it is not known */
};

/* 0: maps initialized make their caches again from the notes trees. */
extern int notes_map_trust_cache;

void notes_map_init(struct notes_map *m, const char *name,
		    const struct object_id *commit, unsigned mode);
/* Free the map's memory (a zeroed map too); it is left zeroed. */
void notes_map_release(struct notes_map *m);
const struct object_id *notes_map_get(struct notes_map *m,
				      const struct object_id *key);
void notes_map_set(struct notes_map *m, const struct object_id *key,
		   const struct object_id *value);
size_t notes_map_size(struct notes_map *m);
/* Call `fn` for every entry, in no particular order (key order). */
typedef void (*notes_map_fn)(const struct object_id *key,
			     const struct object_id *value, void *data);
void notes_map_for_each(struct notes_map *m, notes_map_fn fn, void *data);
/*
 * Store the map's tree, then a commit of it as git-cinnabar lays them out,
 * into `result`; when nothing changed, `result` is the commit loaded from
 * (or a commit of the empty tree for a map that never existed).
 */
void notes_map_store(struct notes_map *m, struct object_id *result);

/* The commit header git-cinnabar uses for all of its metadata commits. */
#define CINNABAR_AUTHORSHIP \
	"author  <cinnabar@git> 0 +0000\ncommitter  <cinnabar@git> 0 +0000\n"

#endif
