/*
 * Authorship conversions between Mercurial and git, as git-cinnabar does
 * them (the resulting git commit ids depend on every detail here).
 *
 * Mercurial: a free-form user string, a timestamp and a UTC offset in
 * seconds west of UTC ("1482880019 -7200"); an optional "committer" extra
 * holds "user timestamp offset" (hg-git style, where the offset may also be
 * git's +hhmm form).
 * git: "Name <email> timestamp +hhmm".
 *
 * The user string is split into name and email by taking the text before
 * the first "<...>" (dropping one space before it) as the name and its
 * content as the email; without "<...>", a string with an "@" is an email
 * and anything else a name. "<" and ">" are then removed from both.
 *
 * The git side is always well-formed (git fsck --strict): NUL and LF are
 * dropped from names, timestamps that are not plain numbers and zones
 * beyond 4 digits are replaced (see add_git_timestamp); the changeset's
 * exact text is then restored from the git2hg note (changeset.h).
 */
#ifndef CINNABAR_AUTHORSHIP_H
#define CINNABAR_AUTHORSHIP_H

/* hg user + timestamp + offset strings -> git ident ("Name <e> ts tz"). */
void git_ident_from_hg(struct strbuf *out, const char *user, size_t user_len,
		       const char *timestamp, size_t ts_len,
		       const char *utcoffset, size_t off_len);
/*
 * hg "committer" extra value -> git ident; -1 when it is not
 * "user timestamp offset" nor ends with ">".
 */
int git_ident_from_hg_committer(struct strbuf *out, const char *committer,
				size_t len, const char *timestamp,
				size_t ts_len, const char *utcoffset,
				size_t off_len);

/* git ident -> hg user, timestamp and offset strings. */
struct hg_authorship {
	struct strbuf user, timestamp, utcoffset;
};
#define HG_AUTHORSHIP_INIT { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT }
int hg_authorship_from_git(struct hg_authorship *out, const char *ident,
			   size_t len);
/* git ident -> hg "committer" extra value ("user timestamp offset"). */
int hg_committer_from_git(struct strbuf *out, const char *ident, size_t len);
void hg_authorship_release(struct hg_authorship *a);

#endif
