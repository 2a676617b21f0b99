/*
 * Progress meters on stderr, in git's words and at a person's pace.
 *
 * A meter names a phase and counts what it went through:
 *
 *	Receiving changesets:  45% (4423/9828), 12.30 MiB | 8.10 MiB/s
 *	Storing changesets:  45% (4423/9828)
 *	Receiving files: 100% (796/796), 80.02 MiB | 9.57 MiB/s, done.
 *
 * with a percentage when the total is known (non-zero), bytes and their
 * rate when the meter was given a byte counter. The line is shown when
 * the meter starts (so that something appears as soon as data is asked
 * for), then rewritten in place (a carriage return) once every
 * METER_INTERVAL_MS (counted from the start) while the count or the
 * bytes change, and ends with ", done." and a newline when the meter
 * stops. git's own progress.c redraws once a second or at each percent;
 * people read more life into about ten updates a second.
 *
 * A total may be an estimate (meter_estimate): what the server announced,
 * or what Mercurial counts a phase against (the manifests against the
 * changesets, the files against the names the changesets list). The
 * count never shows above it (the total grows with the count), and the
 * last line shows the count as the total: 100% of what came (also when
 * nothing came: `100% (0/0)`).
 *
 * Meters are shown only while meter_show(1) is in force (main sets it
 * from git's `option progress`, else from whether stderr is a terminal);
 * otherwise meter_start returns NULL, which the other functions take and
 * ignore.
 */
#ifndef CINNABAR_METER_H
#define CINNABAR_METER_H

#define METER_INTERVAL_MS 100

struct meter;

/*
 * Whether meters are shown from now on (off until set); the setting
 * before, for a caller that turns them off for a while.
 */
int meter_show(int on);
/* Whether meters are shown: for work done only to feed a meter. */
int meter_shown(void);

/*
 * Start a meter for `title` (kept, not copied); `total` 0 when unknown;
 * `bytes`, when not NULL, is read at each update for the bytes line.
 */
struct meter *meter_start(const char *title, uint64_t total,
			  const uint64_t *bytes);
/*
 * Give the meter an estimated total (0: unknown), e.g. once it is known:
 * see above. Drawn at the next update.
 */
void meter_estimate(struct meter *m, uint64_t total);
/* The count is now `n`: redraw if the last line is old enough. */
void meter_update(struct meter *m, uint64_t n);
/* Draw the final line with ", done." and free the meter; *m is NULL. */
void meter_stop(struct meter **m);

#endif
