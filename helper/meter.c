/* Progress meters: see meter.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "trace.h"
#include "meter.h"

static int shown;

struct meter {
	const char *title;
	uint64_t total, count;
	int estimated;		/* the total is an estimate: meter.h */
	int percent;		/* lines with a percentage: a total was given */
	const uint64_t *bytes;
	uint64_t bytes_before;	/* *bytes when the meter started */
	uint64_t bytes_drawn;	/* *bytes at the last line */
	uint64_t start_ns;
	uint64_t tick;		/* of the last line: METER_INTERVAL_MS since start */
	size_t last_len;	/* of the last line, to blank what it leaves */
};

/* "12.30 MiB" for `n` bytes. */
static void add_size(struct strbuf *out, double n)
{
	static const char *units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t unit = 0;

	while (n >= 1024 && unit + 1 < ARRAY_SIZE(units)) {
		n /= 1024;
		unit++;
	}
	if (unit)
		strbuf_addf(out, "%.2f %s", n, units[unit]);
	else
		strbuf_addf(out, "%.0f %s", n, units[unit]);
}

/* The bytes of the phase so far and their rate. */
static void add_bytes(struct strbuf *out, const struct meter *m,
		      uint64_t now)
{
	double seconds = (now - m->start_ns) / 1e9;
	uint64_t bytes = *m->bytes - m->bytes_before;

	strbuf_addstr(out, ", ");
	add_size(out, bytes);
	if (seconds > 0) {
		strbuf_addstr(out, " | ");
		add_size(out, bytes / seconds);
		strbuf_addstr(out, "/s");
	}
}

static void draw(struct meter *m, uint64_t now, const char *end)
{
	struct strbuf line = STRBUF_INIT;
	size_t len;

	strbuf_addf(&line, "%s: ", m->title);
	if (m->total && m->count > m->total)
		m->total = m->count;
	if (m->total)
		m->percent = 1;
	if (m->percent)
		strbuf_addf(&line, "%3u%% (%"PRIuMAX"/%"PRIuMAX")",
			    (unsigned)(m->total ? m->count * 100 / m->total
					       : 100),
			    (uintmax_t)m->count, (uintmax_t)m->total);
	else
		strbuf_addf(&line, "%"PRIuMAX, (uintmax_t)m->count);
	if (m->bytes)
		add_bytes(&line, m, now);
	strbuf_addstr(&line, end);
	len = line.len;
	if (len < m->last_len)
		strbuf_addchars(&line, ' ', m->last_len - len);
	m->last_len = len;
	strbuf_addch(&line, *end ? '\n' : '\r');
	fwrite(line.buf, 1, line.len, stderr);
	fflush(stderr);
	strbuf_release(&line);
	m->tick = (now - m->start_ns) / (METER_INTERVAL_MS * 1000000ULL);
	if (m->bytes)
		m->bytes_drawn = *m->bytes;
}

int meter_show(int on)
{
	int before = shown;

	shown = on;
	return before;
}

int meter_shown(void)
{
	return shown;
}

struct meter *meter_start(const char *title, uint64_t total,
			  const uint64_t *bytes)
{
	struct meter *m;

	if (!shown)
		return NULL;
	CALLOC_ARRAY(m, 1);
	m->title = title;
	m->total = total;
	m->bytes = bytes;
	m->bytes_before = m->bytes_drawn = bytes ? *bytes : 0;
	m->start_ns = getnanotime();
	draw(m, m->start_ns, "");
	return m;
}

void meter_estimate(struct meter *m, uint64_t total)
{
	if (!m)
		return;
	m->total = total;
	m->estimated = 1;
}

void meter_update(struct meter *m, uint64_t n)
{
	uint64_t now;

	if (!m || (n == m->count && (!m->bytes || *m->bytes == m->bytes_drawn)))
		return;
	m->count = n;
	now = getnanotime();
	/*
	 * Once an interval, counted from the start rather than from the last
	 * line: data arriving in bursts still gives one line an interval.
	 */
	if ((now - m->start_ns) / (METER_INTERVAL_MS * 1000000ULL) != m->tick)
		draw(m, now, "");
}

void meter_stop(struct meter **m)
{
	if (!*m)
		return;
	if ((*m)->estimated && (*m)->total)
		(*m)->total = (*m)->count;
	draw(*m, getnanotime(), ", done.");
	FREE_AND_NULL(*m);
}
