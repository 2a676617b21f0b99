/*
 * HTTP(S) through libcurl and git's http.c: see http-client.h.
 *
 * Small answers ("fetch" mode) are read in memory. Bundles ("import" mode)
 * are streamed: a thread runs the transfer and writes the body into a
 * pipe, which the importer reads as it goes, so memory stays bounded and
 * the download overlaps the import.
 *
 * Each request gets the http.* settings git matches for its own URL (see
 * use_settings_for()): those of the hg server do not go to a clone bundle
 * host, nor to the target of a redirect.
 *
 * Credentials belong to the origin (scheme, user, host and port) of the
 * URL they were given for, as in git: git's http.c has one `http_auth`,
 * so before each request the credential of the request's origin is put
 * there (see use_credentials_for()), and a redirect to another host or a
 * clone bundle hosted elsewhere asks the credential helpers afresh.
 * A 401 answer with a challenge (WWW-Authenticate, whatever its body)
 * fills the credential of its origin once; one to a filled credential
 * rejects it. A 401 without a challenge (hgweb's `401 push not
 * authorized`) asks for nothing and rejects nothing (see run_judged()).
 *
 * Answers kept in memory can be bounded by the request header
 * `X-Cinnabar-Max-Size: <bytes>` (not sent to the server): a longer body
 * stops the transfer, reported as `X-Cinnabar-Transfer: too large`.
 *
 * An answer saved to a file (`X-Cinnabar-Output-File`) can be checked
 * before anything is written: with `X-Cinnabar-Output-Magic: <word>...`,
 * a 200 body that starts with none of the words stops the transfer once
 * its first bytes tell (`X-Cinnabar-Transfer: unexpected start <hex>`). The
 * output file may be a named pipe, which its reader reads as the body
 * comes and closes to stop the transfer (`cut`): it is opened before
 * the request, so that the reader does not wait for an answer that has
 * no body for it.
 */
#include "libgit.h"
#include "config.h"
#include "credential.h"
#include <pthread.h>
#include "http.h"
#include "git-http.h"
#include "sigchain.h"
#include "string-list.h"
#include "input-stream.h"
#include "http-client.h"
#include "answer.h"
#include "urlmatch.h"
#include "words.h"

extern struct credential http_auth;

static int http_initialized;

struct request {
	const char *url;
	char *redirected;		/* url, after a redirect */
	struct curl_slist *own_headers;	/* those the Python side gave */
	struct curl_slist *headers;	/* sent: the URL's extra ones, then own */
	struct strbuf body;
	/* response */
	struct strbuf resp_headers;
	struct strbuf content_type;
	struct slot_results results;
	int status;			/* HTTP_OK, HTTP_REAUTH, ... */
	int challenged;			/* WWW-Authenticate in the last answer */
	/* streaming */
	int pipe_fd;			/* write end, or -1 */
	struct strbuf small;		/* body in fetch mode */
	FILE *body_file;		/* request body, from a file */
	curl_off_t body_file_size;
	/* fetch into a file (X-Cinnabar-Output-File), see save_body() */
	const char *output_path;
	FILE *output;
	int output_is_pipe;
	uintmax_t saved;
	struct string_list magic;	/* X-Cinnabar-Output-Magic */
	struct strbuf head;		/* a 200 body's start, until checked */
	int head_checked, bad_start;
	CURL *curl;
	int cg_version;			/* import: 0 for a bundle */
	uintmax_t max_size;		/* bound of `small`, 0: none */
	int too_large;
	int follow;			/* redirects are followed here */
	int hops;
};

/* The credential of each origin met so far; the current one is in http_auth. */
struct origin {
	char *key;
	struct credential cred;		/* stale while it is the current one */
};
static struct origin *origins;
static size_t origins_nr, origins_alloc;
static int current_origin = -1;

/*
 * What git's http.c keeps to itself and our messages need: the same
 * URL-matched configuration, then the environment, as it reads them.
 * http.lowSpeedLimit and http.lowSpeedTime (GIT_HTTP_LOW_SPEED_LIMIT,
 * GIT_HTTP_LOW_SPEED_TIME; -1 when unset), to say which setting gave up
 * on a transfer; http.sslCAInfo and http.sslCAPath (GIT_SSL_CAINFO,
 * GIT_SSL_CAPATH; NULL when unset), to say which authorities a
 * certificate was checked against; http.emptyAuth (-1 when unset).
 *
 * `matched` is every http.* entry that applies to the URL, in the order
 * http.c's http_init() takes them: two URLs with the same entries (and
 * scheme) get the same settings from http.c.
 */
struct http_settings {
	long low_speed_limit, low_speed_time;
	char *ca_info, *ca_path;
	int empty_auth;
	struct strbuf matched;
};
#define HTTP_SETTINGS_INIT { -1, -1, NULL, NULL, -1, STRBUF_INIT }
static struct http_settings settings = HTTP_SETTINGS_INIT;

static void http_settings_release(struct http_settings *s)
{
	free(s->ca_info);
	free(s->ca_path);
	strbuf_release(&s->matched);
}

static int collect_settings(const char *var, const char *value,
			    const struct config_context *ctx, void *cb)
{
	struct http_settings *s = cb;

	/* A value-less entry (NULL) and an empty one differ. */
	strbuf_addf(&s->matched, "%s%c%s\n", var, value ? '=' : '!',
		    value ? value : "");
	if (!strcmp(var, "http.lowspeedlimit"))
		s->low_speed_limit = git_config_int(var, value, ctx->kvi);
	else if (!strcmp(var, "http.lowspeedtime"))
		s->low_speed_time = git_config_int(var, value, ctx->kvi);
	else if (!strcmp(var, "http.emptyauth"))
		s->empty_auth = value && !strcasecmp(value, "auto") ? -1 :
				git_config_bool(var, value);
	else if (!strcmp(var, "http.sslcainfo")) {
		FREE_AND_NULL(s->ca_info);
		return git_config_pathname(&s->ca_info, var, value);
	} else if (!strcmp(var, "http.sslcapath")) {
		FREE_AND_NULL(s->ca_path);
		return git_config_pathname(&s->ca_path, var, value);
	}
	return 0;
}

static void read_settings(struct http_settings *s, const char *url)
{
	struct urlmatch_config config = URLMATCH_CONFIG_INIT;
	char *normalized;
	const char *env;

	config.section = "http";
	config.collect_fn = collect_settings;
	config.cb = s;
	normalized = url_normalize(url, &config.url);
	repo_config(the_repository, urlmatch_config_entry, &config);
	free(normalized);
	urlmatch_config_release(&config);
	/* http_init() treats https URLs apart (client certificates). */
	strbuf_addstr(&s->matched, starts_with(url, "https:") ? "https" : "");
	if ((env = getenv("GIT_HTTP_LOW_SPEED_LIMIT")))
		s->low_speed_limit = strtol(env, NULL, 10);
	if ((env = getenv("GIT_HTTP_LOW_SPEED_TIME")))
		s->low_speed_time = strtol(env, NULL, 10);
	if ((env = getenv("GIT_SSL_CAINFO"))) {
		free(s->ca_info);
		s->ca_info = xstrdup(env);
	}
	if ((env = getenv("GIT_SSL_CAPATH"))) {
		free(s->ca_path);
		s->ca_path = xstrdup(env);
	}
}

/*
 * Why a transfer failed, for people: curl's words, except when the
 * low-speed limit gave up on it (curl says "Timeout was reached").
 * Valid until the next call.
 */
static const char *transfer_failure(CURLcode code)
{
	static struct strbuf buf = STRBUF_INIT;

	if (code != CURLE_OPERATION_TIMEDOUT || settings.low_speed_limit <= 0 ||
	    settings.low_speed_time <= 0)
		return curl_easy_strerror(code);
	strbuf_reset(&buf);
	strbuf_addf(&buf, "the server sent less than %ld bytes/s for %ld s "
		    "(http.lowSpeedLimit/http.lowSpeedTime)",
		    settings.low_speed_limit, settings.low_speed_time);
	return buf.buf;
}

static void park_credentials(void);

/*
 * Give the request to `url` the http.* settings git would use for it. git's
 * http.c reads them once, in http_init(), from the URL it is given: when a
 * request's URL matches other settings than the last one's (another host,
 * or a path with settings of its own), the http layer is started again for
 * it, so that nothing set for one URL (extra headers, TLS verification,
 * client certificates, cookies, proxy...) goes with a request to another.
 */
static void use_settings_for(const char *url)
{
	struct http_settings wanted = HTTP_SETTINGS_INIT;

	read_settings(&wanted, url);
	if (http_initialized && !strcmp(wanted.matched.buf,
					settings.matched.buf)) {
		http_settings_release(&wanted);
		return;
	}
	if (http_initialized) {
		park_credentials();
		http_cleanup();
		http_forget_settings();
	}
	http_settings_release(&settings);
	settings = wanted;
	http_init(NULL, url, 0);
	/* http_init() reads core.ignorecase again: see main.c. */
	ignore_case = 0;
	http_initialized = 1;
}

char *without_userinfo(const char *text)
{
	struct strbuf buf = STRBUF_INIT;
	const char *authority = strstr(text, "://"), *end, *at;

	if (!authority)
		return xstrdup(text);
	authority += 3;
	end = authority + strcspn(authority, "/?# \n");
	for (at = end; at > authority && at[-1] != '@'; at--)
		;
	strbuf_add(&buf, text, authority - text);
	strbuf_addstr(&buf, at);
	return strbuf_detach(&buf, NULL);
}

/*
 * The URL as people may see it, without user information nor query (the
 * query is the wire command, or a download's signature): valid until the
 * next call.
 */
static const char *shown_url(const char *url)
{
	static char *shown;

	free(shown);
	shown = without_userinfo(url);
	shown[strcspn(shown, "?#")] = '\0';
	return shown;
}

static char *origin_key(const char *url)
{
	struct credential probe = CREDENTIAL_INIT;
	char *key;

	credential_from_url(&probe, url);
	key = xstrfmt("%s://%s@%s", probe.protocol ? probe.protocol : "",
		      probe.username ? probe.username : "",
		      probe.host ? probe.host : "");
	credential_clear(&probe);
	return key;
}

static int find_origin(const char *key)
{
	size_t i;

	for (i = 0; i < origins_nr; i++)
		if (!strcmp(origins[i].key, key))
			return i;
	return -1;
}

/*
 * Keep the current credential with its origin, before http_init() takes
 * http_auth afresh from another URL.
 */
static void park_credentials(void)
{
	if (current_origin >= 0)
		origins[current_origin].cred = http_auth;
	credential_init(&http_auth);
	current_origin = -1;
}

/*
 * Put the credential of the origin of `url` in http_auth. With no
 * current origin, http_init() has just taken http_auth from `url`.
 */
static void use_credentials_for(const char *url)
{
	char *key = origin_key(url);
	int found = find_origin(key);

	if (current_origin >= 0 && found == current_origin) {
		free(key);
		return;
	}
	if (current_origin >= 0)
		origins[current_origin].cred = http_auth;
	if (found >= 0) {
		if (current_origin < 0)
			credential_clear(&http_auth);
		http_auth = origins[found].cred;
		current_origin = found;
		free(key);
		return;
	}
	if (current_origin >= 0) {
		credential_init(&http_auth);
		credential_from_url(&http_auth, url);
	}
	ALLOC_GROW(origins, origins_nr + 1, origins_alloc);
	origins[origins_nr].key = key;
	current_origin = origins_nr++;
}

/*
 * git's get_active_slot() sets the user and password of a reused curl
 * handle only when http_auth has some: clear those of another origin.
 */
static void set_credentials(CURL *c)
{
	if (http_auth.password)
		return;
	curl_easy_setopt(c, CURLOPT_USERNAME, NULL);
	curl_easy_setopt(c, CURLOPT_PASSWORD, NULL);
	if (settings.empty_auth > 0)
		curl_easy_setopt(c, CURLOPT_USERPWD, ":");
}

/*
 * Whether the answer asks for credentials we have not tried (git's
 * http.c says HTTP_REAUTH for a 401 without a filled credential; for a
 * 401 to a filled one, it rejects it: credential helpers forget it).
 * Whatever the body of the 401; only with a challenge (run_judged()).
 */
static int wants_credentials(struct request *r)
{
	return r->status == HTTP_REAUTH;
}

/*
 * The headers sent to r->url: the extra headers of its settings, then
 * those of the request.
 */
static void build_headers(struct request *r)
{
	struct curl_slist *h;

	curl_slist_free_all(r->headers);
	r->headers = http_copy_default_headers();
	/*
	 * No "Expect: 100-continue" on large POSTs: some hgweb versions
	 * (Mercurial 6.3's hg serve) fail on it, and Mercurial's own client
	 * never sends it.
	 */
	r->headers = curl_slist_append(r->headers, "Expect:");
	for (h = r->own_headers; h; h = h->next)
		r->headers = curl_slist_append(r->headers, h->data);
}

static void read_request(struct request *r, FILE *in)
{
	struct strbuf line = STRBUF_INIT, word = STRBUF_INIT;
	struct stream body;
	char buf[8192];
	size_t n;

	while (strbuf_getline_lf(&line, in) != EOF && line.len) {
		const char *path;
		struct stat st;
		if (skip_prefix(line.buf, "X-Cinnabar-Max-Size: ", &path)) {
			r->max_size = strtoumax(path, NULL, 10);
			continue;
		}
		if (skip_prefix(line.buf, "X-Cinnabar-Output-File: ", &path)) {
			read_one_word(path, &word, "X-Cinnabar-Output-File");
			r->output_path = strbuf_detach(&word, NULL);
			continue;
		}
		if (skip_prefix(line.buf, "X-Cinnabar-Output-Magic: ", &path)) {
			cinnabar_string_list_split(&r->magic, path, ' ');
			continue;
		}
		if (!skip_prefix(line.buf, "X-Cinnabar-Body-File: ", &path)) {
			r->own_headers = curl_slist_append(r->own_headers,
							   line.buf);
			continue;
		}
		read_one_word(path, &word, "X-Cinnabar-Body-File");
		r->body_file = fopen(word.buf, "rb");
		if (!r->body_file || fstat(fileno(r->body_file), &st))
			die_errno("cannot read '%s'", word.buf);
		r->body_file_size = st.st_size;
	}
	strbuf_release(&line);
	strbuf_release(&word);
	stream_init_blocks(&body, in);
	while ((n = stream_read(&body, buf, sizeof(buf))))
		strbuf_add(&r->body, buf, n);
	stream_release(&body);
}

/*
 * Acknowledging an answer's headers at once.
 *
 * A server that writes an answer's headers and its body separately,
 * without TCP_NODELAY (`hg serve`: Python's http.server writes the
 * headers, then the body), holds the body back (Nagle's algorithm) until
 * the headers are acknowledged. On a connection reused for another
 * request, Linux delays that acknowledgement (40 ms or more) in case an
 * answer of ours can carry it: none will, we wait for the body. So once
 * the headers are read, TCP_QUICKACK sends the pending acknowledgement.
 *
 * curl says which socket a transfer uses only once it is over: the
 * sockets it opens are kept (it closes them through close_socket()), and
 * each is told; there is one, or a few after redirects to other hosts.
 * Linux only; elsewhere nothing is done.
 */
static curl_socket_t *open_sockets;
static size_t open_sockets_nr, open_sockets_alloc;

static int keep_socket(void *data UNUSED, curl_socket_t sock,
		       curlsocktype purpose)
{
	if (purpose == CURLSOCKTYPE_IPCXN) {
		ALLOC_GROW(open_sockets, open_sockets_nr + 1,
			   open_sockets_alloc);
		open_sockets[open_sockets_nr++] = sock;
	}
	return CURL_SOCKOPT_OK;
}

static int close_socket(void *data UNUSED, curl_socket_t sock)
{
	size_t i;

	for (i = 0; i < open_sockets_nr; i++) {
		if (open_sockets[i] == sock) {
			open_sockets[i] = open_sockets[--open_sockets_nr];
			break;
		}
	}
	return close(sock);
}

static void acknowledge_now(void)
{
#ifdef TCP_QUICKACK
	int one = 1;
	size_t i;

	for (i = 0; i < open_sockets_nr; i++)
		setsockopt(open_sockets[i], IPPROTO_TCP, TCP_QUICKACK, &one,
			   sizeof(one));
#endif
}

static size_t header_cb(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct request *r = data;
	size_t len = size * nmemb;
	const char *v;
	strbuf_add(&r->resp_headers, ptr, len);
	if (len > 5 && !strncmp(ptr, "HTTP/", 5))
		r->challenged = 0;	/* a new answer (after a redirect) */
	else if (len > 17 && !strncasecmp(ptr, "www-authenticate:", 17))
		r->challenged = 1;
	if (len <= 2 && (len == 1 || ptr[0] == '\r'))
		acknowledge_now();	/* the blank line after the headers */
	if (len > 13 && !strncasecmp(ptr, "content-type:", 13)) {
		strbuf_reset(&r->content_type);
		v = ptr + 13;
		strbuf_add(&r->content_type, v, len - 13);
		strbuf_trim(&r->content_type);
	}
	return len;
}

/*
 * Whether `head`, the start of a body, starts with one of the magic
 * words (1), with none (0), or is too short to tell (-1).
 */
static int check_magic(const struct string_list *magic,
		       const struct strbuf *head)
{
	const struct string_list_item *word;
	int short_of_one = 0;

	for_each_string_list_item(word, magic) {
		size_t len = strlen(word->string);
		if (head->len >= len && !memcmp(head->buf, word->string, len))
			return 1;
		if (head->len < len &&
		    !memcmp(head->buf, word->string, head->len))
			short_of_one = 1;
	}
	return short_of_one ? -1 : 0;
}

static int write_output(struct request *r, const char *ptr, size_t len)
{
	if (fwrite(ptr, 1, len, r->output) == len &&
	    (!r->output_is_pipe || !fflush(r->output)))
		return 1;
	if (r->output_is_pipe && errno == EPIPE)
		return -1;	/* the reader is gone: stop the transfer */
	die_errno("cannot write to '%s'", r->output_path);
}

/*
 * A 200 body's start, kept until the magic words tell: 1 when `ptr` and
 * `len` are what to write (the start kept, then the rest; or the bytes
 * given when no check is due), 0 while too short, -1 to stop.
 */
static int write_checked_start(struct request *r, const char **ptr,
			       size_t *len)
{
	int checked;

	if (!r->magic.nr || r->head_checked)
		return 1;
	strbuf_add(&r->head, *ptr, *len);
	*len = 0;
	checked = check_magic(&r->magic, &r->head);
	if (checked < 0)
		return 0;
	if (!checked) {
		r->bad_start = 1;
		return -1;
	}
	r->head_checked = 1;
	*ptr = r->head.buf;
	*len = r->head.len;
	return 1;
}

/*
 * With an output file, the body of a 200 answer replaces the file's
 * contents and the body of a 206 (partial content) is appended to them;
 * other answers' bodies are kept in memory as usual. Returns 0 when the
 * body was not for the file, -1 to stop the transfer.
 */
static int save_body(struct request *r, const char *ptr, size_t len)
{
	long code = 0;
	int ret;

	if (!r->output_path)
		return 0;
	curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200 && code != 206)
		return 0;
	if (code == 200 && (ret = write_checked_start(r, &ptr, &len)) <= 0)
		return ret < 0 ? -1 : 1;	/* kept until it tells */
	if (!r->output) {
		r->output = fopen(r->output_path, code == 200 ? "wb" : "ab");
		if (!r->output)
			die_errno("cannot write to '%s'", r->output_path);
	}
	if ((ret = write_output(r, ptr, len)) < 0)
		return ret;
	r->saved += len;
	return 1;
}

static size_t body_cb(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct request *r = data;
	size_t len = size * nmemb;
	long code = 0;

	switch (save_body(r, ptr, len)) {
	case 1:
		return len;
	case -1:
		return 0;	/* stops the transfer */
	}
	if (r->pipe_fd >= 0) {
		/*
		 * Only a 2xx body goes to the importer; a 401's is dropped,
		 * and so is a redirect's when it is followed.
		 */
		curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &code);
		if (code == 401 || (code / 100 == 3 && r->follow))
			return len;
	}
	if (r->pipe_fd < 0) {
		if (r->max_size && r->small.len + len > r->max_size) {
			r->too_large = 1;
			return 0;	/* stops the transfer */
		}
		strbuf_add(&r->small, ptr, len);
		return len;
	}
	if (write_in_full(r->pipe_fd, ptr, len) < 0)
		return 0;	/* the importer is gone: abort the transfer */
	return len;
}

/*
 * Run the request; git's http.c takes any 401 to a request with
 * credentials for their rejection (credential helpers forget them). A 401
 * without a challenge (WWW-Authenticate) is no such thing: hgweb answers
 * `401 push not authorized` to a user it knows, and no credential would
 * do. So http.c does not see the credential while the request runs, and
 * the answer is judged here: a challenge is HTTP_REAUTH (ask for
 * credentials) or, to a filled credential, its rejection; a 401 without
 * one is HTTP_NOAUTH, the credential kept.
 */
static int run_judged(struct active_request_slot *slot, struct request *r)
{
	char *username = http_auth.username, *password = http_auth.password;
	int status;

	http_auth.username = http_auth.password = NULL;
	status = run_one_slot(slot, &r->results);
	http_auth.username = username;
	http_auth.password = password;
	if (status == HTTP_OK) {
		cinnabar_credential_approve(&http_auth);
	} else if (status == HTTP_REAUTH && !r->challenged) {
		status = HTTP_NOAUTH;
	} else if (status == HTTP_REAUTH && password) {
		cinnabar_credential_reject(&http_auth);
		status = HTTP_NOAUTH;
	}
	return status;
}

static void run_request(struct request *r)
{
	struct active_request_slot *slot = get_active_slot();
	CURL *c = slot->curl;

	strbuf_reset(&r->resp_headers);
	strbuf_reset(&r->content_type);
	strbuf_reset(&r->small);
	strbuf_reset(&r->head);
	r->head_checked = 0;
	r->too_large = 0;
	r->challenged = 0;
	r->curl = c;
	set_credentials(c);
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	/* Each hop of a redirect is a request with its own settings. */
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 0L);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, keep_socket);
	curl_easy_setopt(c, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
	/* Byte ranges of a file are ranges of its bytes as stored. */
	curl_easy_setopt(c, CURLOPT_ENCODING, r->output_path ? NULL : "");
	if (r->body_file) {
		rewind(r->body_file);
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, fread);
		curl_easy_setopt(c, CURLOPT_READDATA, r->body_file);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
				 r->body_file_size);
	} else if (r->body.len) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body.buf);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)r->body.len);
	} else {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	}
	r->status = run_judged(slot, r);
}

static void use_url(struct request *r, const char *url);

/*
 * With http.followRedirects true, git lets libcurl follow every redirect
 * within the request, which sends the request's extra headers to the
 * next host too. Here each hop is a request of its own, with the settings
 * and credentials of its URL: a GET answered by a redirect (at most 20, as
 * git says to libcurl; only to http or https, never from https to http)
 * is asked again of the URL it points to. Returns whether it did; a
 * redirect not followed is the answer (the Python side refuses it).
 * Each hop being a request of its own, libcurl's own limits on the
 * schemes of redirects do not apply: without the check, a redirect to
 * ftp:// would be asked of that host.
 */
static int follow_redirect(struct request *r)
{
	char *next = NULL;
	long code = r->results.http_code;

	if (!r->follow || code / 100 != 3 || r->hops >= 20)
		return 0;
	curl_easy_getinfo(r->curl, CURLINFO_REDIRECT_URL, &next);
	if (!next || !(istarts_with(next, "http://") ||
		       istarts_with(next, "https://")))
		return 0;
	if (istarts_with(r->url, "https:") && !istarts_with(next, "https://"))
		return 0;
	r->hops++;
	next = xstrdup(next);
	use_url(r, next);
	free(r->redirected);
	r->redirected = next;
	return 1;
}

/*
 * Run the request, asking for credentials once if the server wants some
 * (whether its 401 answer has a body or not).
 */
static void run_with_auth(struct request *r)
{
	do {
		run_request(r);
		if (wants_credentials(r)) {
			cinnabar_credential_fill(&http_auth);
			if (r->output && !r->output_is_pipe) {
				fclose(r->output);
				r->output = NULL;
			}
			run_request(r);
		}
	} while (follow_redirect(r));
}

/* curl's own words on the failure of the last transfer. */
static const char *curl_words(CURLcode code)
{
	return curl_errorstr[0] ? curl_errorstr : curl_easy_strerror(code);
}

/* The certificate authorities a server's certificate was checked against. */
static void print_authorities(FILE *out, CURL *c)
{
	const char *ca_info = settings.ca_info, *ca_path = settings.ca_path;

#if LIBCURL_VERSION_NUM >= 0x075400
	if (!ca_info)
		curl_easy_getinfo(c, CURLINFO_CAINFO, &ca_info);
	if (!ca_path)
		curl_easy_getinfo(c, CURLINFO_CAPATH, &ca_path);
#endif
	fprintf(out, "X-Cinnabar-CA-File: %s\n", ca_info ? ca_info : "none");
	if (ca_path)
		fprintf(out, "X-Cinnabar-CA-Path: %s\n", ca_path);
}

/*
 * Why a request got no answer at all (PROTOCOL.md, X-Cinnabar-Failure):
 * the kind of failure, then the system's words (connect) or curl's.
 */
static void print_failure(FILE *out, struct request *r)
{
	CURLcode code = r->results.curl_result;
	long os_errno = 0;

	switch (code) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		fprintf(out, "X-Cinnabar-Failure: resolve %s\n", curl_words(code));
		break;
	case CURLE_COULDNT_CONNECT:
		curl_easy_getinfo(r->curl, CURLINFO_OS_ERRNO, &os_errno);
		fprintf(out, "X-Cinnabar-Failure: connect %s\n",
			os_errno ? strerror(os_errno) : curl_words(code));
		break;
	case CURLE_SSL_CONNECT_ERROR:
		fprintf(out, "X-Cinnabar-Failure: tls %s\n", curl_words(code));
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		fprintf(out, "X-Cinnabar-Failure: %s %s\n",
			code == CURLE_SSL_CACERT_BADFILE ? "ca-file" :
			"certificate", curl_words(code));
		print_authorities(out, r->curl);
		break;
	default:
		fprintf(out, "X-Cinnabar-Failure: other %s\n", curl_words(code));
	}
}

/*
 * The reason phrase of a status line (`HTTP/1.1 403 ssl required`), when
 * the server gave one: hgweb says there why it refused.
 */
static void print_reason(FILE *out, const char *status_line)
{
	const char *p = status_line + strcspn(status_line, " ");

	p += strspn(p, " ");
	p += strcspn(p, " ");	/* the code */
	p += strspn(p, " ");
	if (*p)
		fprintf(out, "X-Cinnabar-Reason: %s\n", p);
}

/* The first bytes of `head` in hex, valid until the next call. */
static const char *hex_start(const struct strbuf *head)
{
	static struct strbuf buf = STRBUF_INIT;
	size_t i;

	strbuf_reset(&buf);
	for (i = 0; i < head->len && i < 16; i++)
		strbuf_addf(&buf, "%02x", (unsigned char)head->buf[i]);
	return buf.buf;
}

static void print_headers(FILE *out, struct request *r)
{
	struct strbuf **lines = strbuf_split(&r->resp_headers, '\n'), **l;
	const char *status_line = NULL;

	for (l = lines; *l; l++) {
		strbuf_trim(*l);
		if (starts_with((*l)->buf, "HTTP/"))
			status_line = (*l)->buf;	/* the last one counts */
		else if ((*l)->len)
			fprintf(out, "%s\n", (*l)->buf);
	}
	if (status_line)
		print_reason(out, status_line);
	strbuf_list_free(lines);
	if (r->output_path)
		fprintf(out, "X-Cinnabar-Saved: %"PRIuMAX"\n", r->saved);
	if (!r->results.http_code && r->results.curl_result != CURLE_OK)
		print_failure(out, r);
	/* git's http.c calls any status >= 300 an error: not a cut. */
	if (r->too_large)
		fprintf(out, "X-Cinnabar-Transfer: too large\n");
	else if (r->bad_start)
		fprintf(out, "X-Cinnabar-Transfer: unexpected start %s\n",
			hex_start(&r->head));
	else if (r->results.curl_result == CURLE_OK ||
		 r->results.curl_result == CURLE_HTTP_RETURNED_ERROR)
		fprintf(out, "X-Cinnabar-Transfer: complete\n");
	else
		fprintf(out, "X-Cinnabar-Transfer: cut %s\n",
			transfer_failure(r->results.curl_result));
	fprintf(out, "\n");
}

static void connection_failed(struct request *r)
{
	die("cannot reach %s: %s", shown_url(r->url),
	    curl_words(r->results.curl_result));
}

/* A named pipe is opened at once: its reader waits for it. */
static void open_output_pipe(struct request *r)
{
	struct stat st;

	if (!r->output_path || stat(r->output_path, &st) ||
	    !S_ISFIFO(st.st_mode))
		return;
	r->output = fopen(r->output_path, "wb");
	if (!r->output)
		die_errno("cannot write to '%s'", r->output_path);
	r->output_is_pipe = 1;
	sigchain_push(SIGPIPE, SIG_IGN);
}

static void http_fetch(struct request *r, FILE *out)
{
	size_t pos;
	open_output_pipe(r);
	run_with_auth(r);
	if (r->magic.nr && !r->head_checked && r->head.len)
		r->bad_start = 1;	/* too short to be what was wanted */
	if (r->output && fclose(r->output) && !r->output_is_pipe)
		die_errno("cannot write to '%s'", r->output_path);
	r->output = NULL;
	if (r->output_is_pipe)
		sigchain_pop(SIGPIPE);
	fprintf(out, "status %ld\n", r->results.http_code);
	print_headers(out, r);
	for (pos = 0; pos < r->small.len; pos += 65536) {
		size_t n = r->small.len - pos < 65536 ? r->small.len - pos
						      : 65536;
		fprintf(out, "%"PRIuMAX"\n", (uintmax_t)n);
		fwrite(r->small.buf + pos, 1, n, out);
	}
	fprintf(out, "0\n");
	answer_flush(out);
}

/* Streaming import. */

struct transfer {
	struct request *r;
	pthread_t thread;
	int joined;
};

static void *transfer_thread(void *data)
{
	struct transfer *t = data;
	run_request(t->r);
	close(t->r->pipe_fd);
	t->r->pipe_fd = -1;
	return NULL;
}

struct transfer_stream {
	struct stream fd;	/* first: stream_pass_idle */
	struct transfer *t;
};

static void join_transfer(struct transfer *t)
{
	if (!t->joined) {
		pthread_join(t->thread, NULL);
		t->joined = 1;
	}
}

static size_t transfer_read(struct stream *s, void *buf, size_t len)
{
	struct transfer_stream *ts = s->data;
	size_t n = stream_read(&ts->fd, buf, len);
	if (!n) {
		join_transfer(ts->t);
		if (ts->t->r->results.curl_result != CURLE_OK)
			die("the connection to the server failed during the "
			    "transfer: %s", transfer_failure(
				ts->t->r->results.curl_result));
	}
	return n;
}

static void transfer_release(struct stream *s)
{
	struct transfer_stream *ts = s->data;
	stream_release(&ts->fd);
	free(ts);
}

/* Wrap the raw body per its Mercurial media type. */
static void decode_media_type(struct stream *s, struct request *r)
{
	struct stream inner = *s;
	const char *type = r->content_type.buf;
	if (starts_with(type, "application/mercurial-0.1")) {
		stream_init_zlib(s, &inner);
	} else if (starts_with(type, "application/mercurial-0.2")) {
		unsigned char len;
		char name[256];
		stream_read_exact(s, &len, 1);
		stream_read_exact(s, name, len);
		name[len] = '\0';
		if (!strcmp(name, "zstd"))
			stream_init_zstd(s, &inner);
		else if (!strcmp(name, "zlib"))
			stream_init_zlib(s, &inner);
		else if (strcmp(name, "none"))
			die("the server used an unknown compression '%s'",
			    name);
	} else if (starts_with(type, "application/hg-error")) {
		char buf[1024];
		size_t n = stream_read(s, buf, sizeof(buf) - 1);
		buf[n] = '\0';
		die("the server reported an error: %s", buf);
	} else {
		die("unexpected answer from the server (Content-Type '%s'); "
		    "is this a Mercurial repository?", type);
	}
}

/*
 * Start the transfer; return 1 if the server asked for credentials before
 * sending anything (the caller fills them and tries again), 2 if it
 * redirected to another URL, now r->url (the caller tries again).
 */
static int try_import(struct request *r, FILE *out,
		      void (*import)(struct stream *raw, int cg_version))
{
	struct transfer t = { r };
	struct transfer_stream *ts;
	struct stream s, body;
	int fds[2];
	char first;

	if (pipe(fds))
		die_errno("cannot create a pipe");
	r->pipe_fd = fds[1];
	if (pthread_create(&t.thread, NULL, transfer_thread, &t))
		die("cannot start the transfer thread");
	ts = xcalloc(1, sizeof(*ts));
	stream_init_fd(&ts->fd, fds[0]);
	ts->t = &t;
	memset(&s, 0, sizeof(s));
	s.read = transfer_read;
	s.release = transfer_release;
	s.data = ts;
	s.set_idle = stream_pass_idle;
	if (!stream_read(&ts->fd, &first, 1)) {
		join_transfer(&t);
		stream_release(&s);
		close(fds[0]);
		if (wants_credentials(r))
			return 1;
		if (follow_redirect(r))
			return 2;
		if (!r->results.http_code)
			connection_failed(r);
		fprintf(out, "status %ld\n", r->results.http_code);
		answer_flush(out);
		die("HTTP error %ld from %s", r->results.http_code,
		    shown_url(r->url));
	}
	fprintf(out, "status %ld\n", r->results.http_code ?
		r->results.http_code : 200);
	answer_flush(out);
	stream_init_prefixed(&body, &s, &first, 1);
	decode_media_type(&body, r);
	import(&body, r->cg_version);
	{
		/* Let the transfer end even if the bundle ended early. */
		char buf[8192];
		while (xread(fds[0], buf, sizeof(buf)) > 0)
			;
	}
	join_transfer(&t);
	close(fds[0]);
	return 0;
}

static void http_import(struct request *r, FILE *out,
			void (*import)(struct stream *raw, int cg_version))
{
	int tried = 0, result;

	while ((result = try_import(r, out, import))) {
		if (result == 2)
			continue;
		if (tried++)
			die("authentication to %s failed", shown_url(r->url));
		cinnabar_credential_fill(&http_auth);
	}
}

/*
 * Make `url` the one r goes to: its settings in force first, so that the
 * headers start with its extra ones; then its credentials.
 */
static void use_url(struct request *r, const char *url)
{
	r->url = url;
	use_settings_for(url);
	use_credentials_for(url);
	build_headers(r);
	r->follow = http_follow_config == HTTP_FOLLOW_ALWAYS &&
		    !r->body_file && !r->body.len;
}

void http_command(const char *mode, const char *url, int cg_version,
		  FILE *in, FILE *out,
		  void (*import)(struct stream *raw, int cg_version))
{
	struct request r = { .url = url, .pipe_fd = -1, .cg_version = cg_version };
	strbuf_init(&r.body, 0);
	strbuf_init(&r.resp_headers, 0);
	strbuf_init(&r.content_type, 0);
	strbuf_init(&r.small, 0);
	strbuf_init(&r.head, 0);
	string_list_init_dup(&r.magic);
	read_request(&r, in);
	use_url(&r, url);
	if (!strcmp(mode, "fetch"))
		http_fetch(&r, out);
	else if (!strcmp(mode, "import"))
		http_import(&r, out, import);
	else
		die("unknown http mode '%s'", mode);
	curl_slist_free_all(r.headers);
	curl_slist_free_all(r.own_headers);
	free(r.redirected);
	if (r.body_file)
		fclose(r.body_file);
	free((char *)r.output_path);
	strbuf_release(&r.body);
	strbuf_release(&r.resp_headers);
	strbuf_release(&r.content_type);
	strbuf_release(&r.small);
	strbuf_release(&r.head);
	string_list_clear(&r.magic, 0);
}
