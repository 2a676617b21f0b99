/*
 * HTTP(S) for the Python side, through libcurl and git's http.c, so that
 * git's http.* configuration and credential helpers apply. See the `http`
 * command in PROTOCOL.md.
 */
#ifndef CINNABAR_HTTP_CLIENT_H
#define CINNABAR_HTTP_CLIENT_H

struct stream;

/*
 * Run one `http <mode> <url>` command: read the request headers and body
 * from `in`, answer on `out`. In "import" mode, hand the decoded response
 * body to `import` (with cg_version: 0 for a bundle, or the version of a
 * bare changegroup).
 */
void http_command(const char *mode, const char *url, int cg_version,
		  FILE *in, FILE *out,
		  void (*import)(struct stream *raw, int cg_version));

/*
 * A copy of `text` (to free) where the first URL, `scheme://[user[:password]@]
 * host...`, lost its user information: what people and logs may see.
 */
char *without_userinfo(const char *text);

#endif
