/* Texts of large stored manifests kept on disk: see manifest-cache.h. */
#include "libgit.h"
#include "config.h"
#include "tempfile.h"
#include "hg-id.h"
#include "manifest-cache.h"

#define DIR_NAME "cinnabar/manifests"
/* "<p1> <p2> <tree>\n" */
#define HEADER_LEN (3 * (GIT_SHA1_HEXSZ + 1))
#define READ_SIZE (64 * 1024)

static void cache_path(struct strbuf *path, const char *name)
{
	strbuf_reset(path);
	cinnabar_common_path(path, DIR_NAME "/%s", name);
}

/* Parse the header into p1, p2 and tree; 0 when well formed. */
static int parse_header(const char *buf, struct hg_oid *p1, struct hg_oid *p2,
			struct object_id *tree)
{
	const char *hex = buf;

	if (hg_oid_from_hex(hex, p1) || hex[GIT_SHA1_HEXSZ] != ' ')
		return -1;
	hex += GIT_SHA1_HEXSZ + 1;
	if (hg_oid_from_hex(hex, p2) || hex[GIT_SHA1_HEXSZ] != ' ')
		return -1;
	hex += GIT_SHA1_HEXSZ + 1;
	if (get_oid_hex(hex, tree) || hex[GIT_SHA1_HEXSZ] != '\n')
		return -1;
	return 0;
}

/*
 * Read the text after the header from `fd`, hashing it, into `blocks`
 * when given, else at the end of `flat`. 0 when all was read.
 */
static int read_text(int fd, struct hg_hasher *h, struct strbuf *flat,
		     struct block_text *blocks)
{
	struct strbuf pending = STRBUF_INIT;
	struct strbuf *buf = blocks ? &pending : flat;
	ssize_t n;

	for (;;) {
		strbuf_grow(buf, READ_SIZE);
		n = xread(fd, buf->buf + buf->len, READ_SIZE);
		if (n <= 0)
			break;
		hg_hasher_update(h, buf->buf + buf->len, n);
		strbuf_setlen(buf, buf->len + n);
		if (blocks)
			block_text_append(blocks, buf, 0);
	}
	if (blocks)
		block_text_append(blocks, buf, 1);
	strbuf_release(&pending);
	return n < 0 ? -1 : 0;
}

int manifest_cache_read(const struct hg_oid *node,
			const struct object_id *tree, struct strbuf *flat,
			struct block_text *blocks)
{
	struct strbuf path = STRBUF_INIT;
	struct block_text made = BLOCK_TEXT_INIT;
	char header[HEADER_LEN];
	struct hg_oid p1, p2, id;
	struct object_id stored_tree;
	struct hg_hasher h;
	size_t flat_len = flat ? flat->len : 0;
	int fd, ok = 0;

	cache_path(&path, hg_oid_to_hex(node));
	fd = open(path.buf, O_RDONLY);
	if (fd < 0) {
		strbuf_release(&path);
		return -1;
	}
	if (read_in_full(fd, header, HEADER_LEN) == HEADER_LEN &&
	    !parse_header(header, &p1, &p2, &stored_tree) &&
	    oideq(&stored_tree, tree)) {
		hg_hasher_init(&h, &p1, &p2);
		ok = !read_text(fd, &h, flat, blocks ? &made : NULL);
		hg_hasher_final(&h, &id);
		ok = ok && hg_oideq(&id, node);
	}
	/* Used last: pruning goes by modification time (failing, sooner). */
	if (ok)
		(void)futimens(fd, NULL);
	close(fd);
	if (ok && blocks) {
		block_text_release(blocks);
		SWAP(*blocks, made);
	} else if (!ok) {
		unlink(path.buf);
		if (flat)
			strbuf_setlen(flat, flat_len);
	}
	block_text_release(&made);
	strbuf_release(&path);
	return ok ? 0 : -1;
}

static int is_cache_name(const char *name)
{
	struct hg_oid oid;
	return strlen(name) == GIT_SHA1_HEXSZ && !hg_oid_from_hex(name, &oid);
}

struct cached_file {
	char name[GIT_SHA1_HEXSZ + 1];
	timestamp_t sec;
	unsigned nsec;
};

static size_t min_len(size_t bound)
{
	size_t test = git_env_ulong("CINNABAR_TEST_MANIFEST_CACHE_MIN",
				    MANIFEST_CACHE_MIN);
	return test < bound ? test : bound;
}

static int newer_first(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;
	if (x->sec != y->sec)
		return x->sec < y->sec ? 1 : -1;
	return x->nsec < y->nsec ? 1 : x->nsec > y->nsec ? -1 : 0;
}

/* Remove all but the newest `keep` texts of `min` bytes or more. */
static void prune(unsigned keep, size_t min)
{
	struct strbuf path = STRBUF_INIT;
	struct cached_file *files = NULL;
	size_t nr = 0, alloc = 0, i;
	struct dirent *de;
	struct stat st;
	DIR *dir;

	cache_path(&path, "");
	dir = opendir(path.buf);
	while (dir && (de = readdir(dir))) {
		if (!is_cache_name(de->d_name))
			continue;
		cache_path(&path, de->d_name);
		if (stat(path.buf, &st))
			continue;
		if (st.st_size < HEADER_LEN || st.st_size - HEADER_LEN < min) {
			unlink(path.buf);
			continue;
		}
		ALLOC_GROW(files, nr + 1, alloc);
		memcpy(files[nr].name, de->d_name, sizeof(files[nr].name));
		files[nr].sec = st.st_mtime;
		files[nr++].nsec = ST_MTIME_NSEC(st);
	}
	if (dir)
		closedir(dir);
	QSORT(files, nr, newer_first);
	for (i = keep; i < nr; i++) {
		cache_path(&path, files[i].name);
		unlink(path.buf);
	}
	free(files);
	strbuf_release(&path);
}

static void write_block(const char *data, size_t len, void *cb_data)
{
	int *fd = cb_data;
	if (*fd >= 0 && write_in_full(*fd, data, len) < 0)
		*fd = -1;
}

static void keep_text(const struct hg_oid *node, const struct hg_oid *p1,
		      const struct hg_oid *p2, const struct object_id *tree,
		      const struct block_text *text, size_t min, unsigned keep)
{
	struct strbuf path = STRBUF_INIT, header = STRBUF_INIT;
	struct tempfile *tmp;
	int fd;

	if (text->len < min)
		return;
	/* Named after this process: see table_file in notes-map.c. */
	strbuf_addf(&header, "text-%"PRIuMAX"-XXXXXX", (uintmax_t)getpid());
	cache_path(&path, header.buf);
	strbuf_reset(&header);
	if (cinnabar_create_leading_directories(path.buf) != SCLD_OK ||
	    !(tmp = mks_tempfile(path.buf))) {
		strbuf_release(&path);
		strbuf_release(&header);
		return;		/* a cache: the next fetch makes the text */
	}
	fd = get_tempfile_fd(tmp);
	strbuf_addf(&header, "%s ", hg_oid_to_hex(p1));
	strbuf_addf(&header, "%s %s\n", hg_oid_to_hex(p2), oid_to_hex(tree));
	write_block(header.buf, header.len, &fd);
	block_text_each(text, write_block, &fd);
	cache_path(&path, hg_oid_to_hex(node));
	if (fd < 0 || rename_tempfile(&tmp, path.buf))
		delete_tempfile(&tmp);
	else
		prune(keep, 0);
	strbuf_release(&header);
	strbuf_release(&path);
}

void manifest_cache_write(const struct hg_oid *node, const struct hg_oid *p1,
			  const struct hg_oid *p2,
			  const struct object_id *tree,
			  const struct block_text *text, int snapshot)
{
	keep_text(node, p1, p2, tree, text,
		  min_len(snapshot ? MANIFEST_CACHE_SNAPSHOT_MIN
				   : MANIFEST_CACHE_MIN),
		  MANIFEST_CACHE_IMPORT_FILES);
}

void manifest_cache_trim(void)
{
	prune(MANIFEST_CACHE_FILES, min_len(MANIFEST_CACHE_MIN));
}
