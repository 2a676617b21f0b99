/* Authorship conversions: see authorship.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "authorship.h"

struct who {
	struct strbuf name, email;
};

/* Find the first "<" followed, later, by a ">": the "<...>" part. */
static int find_angle(const char *s, size_t len, size_t *lt, size_t *gt)
{
	size_t i;
	const char *close;
	for (i = 0; i < len; i++) {
		if (s[i] == '\n')
			return 0;
		if (s[i] != '<')
			continue;
		close = memchr(s + i + 1, '>', len - i - 1);
		if (close && !memchr(s + i + 1, '\n', close - (s + i + 1))) {
			*lt = i;
			*gt = close - s;
			return 1;
		}
	}
	return 0;
}

/* Copy `s` without what a git ident cannot hold: "<", ">", NUL, LF. */
static void add_without_angles(struct strbuf *out, const char *s, size_t len)
{
	size_t i;
	for (i = 0; i < len; i++)
		if (s[i] != '<' && s[i] != '>' && s[i] && s[i] != '\n')
			strbuf_addch(out, s[i]);
}

/* Split a user string into name and email; see authorship.h. */
static void split_who(struct who *who, const char *s, size_t len)
{
	size_t lt, gt;
	strbuf_init(&who->name, 0);
	strbuf_init(&who->email, 0);
	if (find_angle(s, len, &lt, &gt)) {
		size_t name_len = lt;
		if (name_len && s[name_len - 1] == ' ')
			name_len--;
		add_without_angles(&who->name, s, name_len);
		add_without_angles(&who->email, s + lt + 1, gt - lt - 1);
	} else if (memchr(s, '@', len)) {
		add_without_angles(&who->email, s, len);
	} else {
		add_without_angles(&who->name, s, len);
	}
}

static void release_who(struct who *who)
{
	strbuf_release(&who->name);
	strbuf_release(&who->email);
}

static long parse_long(const char *s, size_t len)
{
	char buf[32];
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return strtol(buf, NULL, 10);
}

/*
 * A timestamp as git fsck accepts it: decimal digits without leading
 * zeros, below 10^18.  Mercurial reads timestamps as floats, and crafted
 * changesets hold anything: what is not such a number keeps its leading
 * digits ("1000.5" -> 1000, "0010" -> 10), or becomes 0 ("-5", "abc",
 * too large).  The exact text is kept in the git2hg note's patch.
 */
static void add_git_timestamp(struct strbuf *out, const char *ts, size_t len)
{
	size_t digits = 0, zeros = 0;
	while (zeros < len && ts[zeros] == '0')
		zeros++;
	while (zeros + digits < len && isdigit(ts[zeros + digits]))
		digits++;
	if (!digits || digits > 18)
		strbuf_addch(out, '0');
	else
		strbuf_add(out, ts + zeros, digits);
}

/* Write "Name <email> timestamp +hhmm" for an offset in seconds west. */
static void add_git_ident(struct strbuf *out, struct who *who,
			  const char *timestamp, size_t ts_len, long utcoffset)
{
	long minutes;
	/* git's zone is 4 digits: a larger one (crafted) is kept as 0. */
	if (utcoffset <= -100 * 3600 || utcoffset >= 100 * 3600)
		utcoffset = 0;
	minutes = labs(utcoffset) / 60;
	strbuf_addbuf(out, &who->name);
	strbuf_addstr(out, " <");
	strbuf_addbuf(out, &who->email);
	strbuf_addstr(out, "> ");
	add_git_timestamp(out, timestamp, ts_len);
	strbuf_addf(out, " %c%02ld%02ld", utcoffset > 0 ? '-' : '+',
		    minutes / 60, minutes % 60);
}

void git_ident_from_hg(struct strbuf *out, const char *user, size_t user_len,
		       const char *timestamp, size_t ts_len,
		       const char *utcoffset, size_t off_len)
{
	struct who who;
	split_who(&who, user, user_len);
	add_git_ident(out, &who, timestamp, ts_len,
		      parse_long(utcoffset, off_len));
	release_who(&who);
}

/* git's [+-]hhmm as a number -> seconds west of UTC. */
static long utcoffset_from_git_tz(long tz)
{
	long sign = tz > 0 ? -1 : tz < 0 ? 1 : 0;
	tz = labs(tz);
	return sign * ((tz / 100) * 60 + tz % 100) * 60;
}

/* Whether an hg-git committer offset is in git's [+-]hhmm form. */
static int offset_is_git_form(const char *s, size_t len, long value)
{
	if (len >= 1 && s[0] == '+')
		return 1;
	if (len >= 2 && s[0] == '-' && s[1] == '0')
		return 1;
	if (len >= 2 && s[0] == '-' && s[1] == '1')
		return value > -1800 && value % 900 != 0 &&
		       (value % 100) % 15 == 0;
	return 0;
}

/* Split "a b c" on its last two spaces. */
static int rsplit3(const char *s, size_t len, size_t *sp1, size_t *sp2)
{
	const char *p2 = memrchr(s, ' ', len), *p1;
	if (!p2)
		return -1;
	p1 = memrchr(s, ' ', p2 - s);
	if (!p1)
		return -1;
	*sp1 = p1 - s;
	*sp2 = p2 - s;
	return 0;
}

int git_ident_from_hg_committer(struct strbuf *out, const char *committer,
				size_t len, const char *timestamp,
				size_t ts_len, const char *utcoffset,
				size_t off_len)
{
	struct who who;
	size_t sp1, sp2;
	long offset;

	if (len && committer[len - 1] == '>') {
		git_ident_from_hg(out, committer, len, timestamp, ts_len,
				  utcoffset, off_len);
		return 0;
	}
	if (rsplit3(committer, len, &sp1, &sp2))
		return -1;
	split_who(&who, committer, sp1);
	offset = parse_long(committer + sp2 + 1, len - sp2 - 1);
	if (offset_is_git_form(committer + sp2 + 1, len - sp2 - 1, offset))
		offset = utcoffset_from_git_tz(offset);
	add_git_ident(out, &who, committer + sp1 + 1, sp2 - sp1 - 1, offset);
	release_who(&who);
	return 0;
}

int hg_authorship_from_git(struct hg_authorship *out, const char *ident,
			   size_t len)
{
	struct who who;
	size_t sp1, sp2;

	if (rsplit3(ident, len, &sp1, &sp2))
		return -1;
	split_who(&who, ident, sp1);
	strbuf_reset(&out->user);
	if (!who.name.len) {
		strbuf_addch(&out->user, '<');
		strbuf_addbuf(&out->user, &who.email);
		strbuf_addch(&out->user, '>');
	} else if (!who.email.len) {
		strbuf_addbuf(&out->user, &who.name);
	} else {
		strbuf_addf(&out->user, "%s <%s>", who.name.buf,
			    who.email.buf);
	}
	release_who(&who);
	strbuf_reset(&out->timestamp);
	strbuf_addf(&out->timestamp, "%"PRIuMAX,
		    (uintmax_t)strtoumax(ident + sp1 + 1, NULL, 10));
	strbuf_reset(&out->utcoffset);
	strbuf_addf(&out->utcoffset, "%ld", utcoffset_from_git_tz(
		parse_long(ident + sp2 + 1, len - sp2 - 1)));
	return 0;
}

int hg_committer_from_git(struct strbuf *out, const char *ident, size_t len)
{
	struct hg_authorship a = HG_AUTHORSHIP_INIT;
	if (hg_authorship_from_git(&a, ident, len))
		return -1;
	strbuf_reset(out);
	strbuf_addf(out, "%s %s %s", a.user.buf, a.timestamp.buf,
		    a.utcoffset.buf);
	hg_authorship_release(&a);
	return 0;
}

void hg_authorship_release(struct hg_authorship *a)
{
	strbuf_release(&a->user);
	strbuf_release(&a->timestamp);
	strbuf_release(&a->utcoffset);
}
