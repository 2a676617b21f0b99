/* The hg id of a text given in pieces, on a thread: see piece-hasher.h. */
#include "git-compat-util.h"
#include "thread-utils.h"
#include "piece-hasher.h"

#define RING 4
#define PIECE (1UL << 20)

/*
 * The buffers are a ring: `count` full ones from `head` on wait for the
 * thread (the one at `head` may be being hashed), the next one is being
 * filled by the caller (`len[fill]` bytes so far), so that at most
 * RING - 1 wait.
 */
struct piece_hasher {
	struct hg_hasher hasher;
	pthread_t thread;
	int threaded, done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *buf[RING];
	size_t len[RING];
	unsigned head, count, fill;
};

static void *hash_pieces(void *data)
{
	struct piece_hasher *h = data;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		unsigned i;

		while (!h->count && !h->done)
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->count)
			break;
		i = h->head;
		pthread_mutex_unlock(&h->lock);
		hg_hasher_update(&h->hasher, h->buf[i], h->len[i]);
		pthread_mutex_lock(&h->lock);
		h->head = (h->head + 1) % RING;
		h->count--;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

struct piece_hasher *piece_hasher_start(const struct hg_oid *p1,
					const struct hg_oid *p2)
{
	struct piece_hasher *h = xcalloc(1, sizeof(*h));
	int i;

	hg_hasher_init(&h->hasher, p1, p2);
	if (online_cpus() < 2)
		return h;
	for (i = 0; i < RING; i++)
		h->buf[i] = xmalloc(PIECE);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->threaded = !pthread_create(&h->thread, NULL, hash_pieces, h);
	if (!h->threaded) {
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->cond);
	}
	return h;
}

/* Hand the buffer being filled to the thread. */
static void push_fill(struct piece_hasher *h)
{
	pthread_mutex_lock(&h->lock);
	h->count++;
	pthread_cond_broadcast(&h->cond);
	while (h->count == RING)
		pthread_cond_wait(&h->cond, &h->lock);
	h->fill = (h->head + h->count) % RING;
	pthread_mutex_unlock(&h->lock);
	h->len[h->fill] = 0;
}

void piece_hasher_add(struct piece_hasher *h, const void *buf, size_t len)
{
	const char *p = buf;

	if (!h->threaded) {
		hg_hasher_update(&h->hasher, buf, len);
		return;
	}
	while (len) {
		size_t n = PIECE - h->len[h->fill];
		if (n > len)
			n = len;
		memcpy(h->buf[h->fill] + h->len[h->fill], p, n);
		h->len[h->fill] += n;
		p += n;
		len -= n;
		if (h->len[h->fill] == PIECE)
			push_fill(h);
	}
}

void piece_hasher_finish(struct piece_hasher *h, struct hg_oid *id)
{
	int i;

	if (h->threaded) {
		pthread_mutex_lock(&h->lock);
		if (h->len[h->fill])
			h->count++;
		h->done = 1;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->cond);
	}
	for (i = 0; i < RING; i++)
		free(h->buf[i]);
	hg_hasher_final(&h->hasher, id);
	free(h);
}
