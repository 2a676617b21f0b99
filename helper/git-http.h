/*
 * git's http.c, compiled into the helper (git-http.c), with the one thing
 * it lacks for a client that talks to several hosts: forgetting the
 * http.* settings of one URL, so that http_init() can take those of
 * another.
 */
#ifndef CINNABAR_GIT_HTTP_H
#define CINNABAR_GIT_HTTP_H

/*
 * After http_cleanup(), put every setting http_init() reads from the
 * configuration and the environment back as it was before the first
 * http_init(). http_cleanup() forgets some (extra headers, proxy), but
 * not the others (TLS verification and certificates, cookie file, low
 * speed limits, user agent...), which would otherwise stay in force for
 * a URL that has none of them.
 */
void http_forget_settings(void);

#endif
