/*
 * HTTP(S) through libcurl and git's http.c: see http-client.h.
 *
 * Small answers ("fetch" mode) are read in memory. Bundles ("import" mode)
 * are streamed: a thread runs the transfer and writes the body into a
 * pipe, which the importer reads as it goes, so memory stays bounded and
 * the download overlaps the import.
 *
 * Credentials belong to the origin (scheme, user, host and port) of the
 * URL they were given for, as in git: git's http.c has one `http_auth`,
 * so before each request the credential of the request's origin is put
 * there (see use_credentials_for()), and a redirect to another host or a
 * clone bundle hosted elsewhere asks the credential helpers afresh.
 * A 401 answer (whatever its body) fills the credential of its origin
 * once; a 401 to a filled credential rejects it.
 *
 * Answers kept in memory can be bounded by the request header
 * `X-Cinnabar-Max-Size: <bytes>` (not sent to the server): a longer body
 * stops the transfer, reported as `X-Cinnabar-Transfer: too large`.
 */
#include "libgit.h"
#include "config.h"
#include "credential.h"
#include <pthread.h>
#include "http.h"
#include "stream.h"
#include "http-client.h"
#include "urlmatch.h"

extern struct credential http_auth;

static int http_initialized;

struct request {
	const char *url;
	struct curl_slist *headers;
	struct strbuf body;
	/* response */
	struct strbuf resp_headers;
	struct strbuf content_type;
	struct slot_results results;
	int status;			/* HTTP_OK, HTTP_REAUTH, ... */
	/* streaming */
	int pipe_fd;			/* write end, or -1 */
	struct strbuf small;		/* body in fetch mode */
	FILE *body_file;		/* request body, from a file */
	curl_off_t body_file_size;
	/* fetch into a file (X-Cinnabar-Output-File), see save_body() */
	const char *output_path;
	FILE *output;
	uintmax_t saved;
	CURL *curl;
	int cg_version;			/* import: 0 for a bundle */
	uintmax_t max_size;		/* bound of `small`, 0: none */
	int too_large;
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
 * certificate was checked against.
 */
struct http_settings {
	long low_speed_limit, low_speed_time;
	char *ca_info, *ca_path;
};
static struct http_settings settings = { -1, -1 };

static int collect_settings(const char *var, const char *value,
			    const struct config_context *ctx, void *cb UNUSED)
{
	if (!strcmp(var, "http.lowspeedlimit"))
		settings.low_speed_limit = git_config_int(var, value, ctx->kvi);
	else if (!strcmp(var, "http.lowspeedtime"))
		settings.low_speed_time = git_config_int(var, value, ctx->kvi);
	else if (!strcmp(var, "http.sslcainfo"))
		return git_config_pathname(&settings.ca_info, var, value);
	else if (!strcmp(var, "http.sslcapath"))
		return git_config_pathname(&settings.ca_path, var, value);
	return 0;
}

static void read_settings(const char *url)
{
	struct urlmatch_config config = URLMATCH_CONFIG_INIT;
	char *normalized;
	const char *env;

	config.section = "http";
	config.collect_fn = collect_settings;
	normalized = url_normalize(url, &config.url);
	git_config(urlmatch_config_entry, &config);
	free(normalized);
	urlmatch_config_release(&config);
	if ((env = getenv("GIT_HTTP_LOW_SPEED_LIMIT")))
		settings.low_speed_limit = strtol(env, NULL, 10);
	if ((env = getenv("GIT_HTTP_LOW_SPEED_TIME")))
		settings.low_speed_time = strtol(env, NULL, 10);
	if ((env = getenv("GIT_SSL_CAINFO"))) {
		free(settings.ca_info);
		settings.ca_info = xstrdup(env);
	}
	if ((env = getenv("GIT_SSL_CAPATH"))) {
		free(settings.ca_path);
		settings.ca_path = xstrdup(env);
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

static void ensure_http(const char *url)
{
	if (http_initialized)
		return;
	http_init(NULL, url, 0);
	/* http_init() reads core.ignorecase again: see main.c. */
	ignore_case = 0;
	read_settings(url);
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

/* Put the credential of the origin of `url` in http_auth. */
static void use_credentials_for(const char *url)
{
	char *key = origin_key(url);
	size_t i;

	if (current_origin < 0) {
		/* http_init() took http_auth from this very URL. */
		ALLOC_GROW(origins, origins_nr + 1, origins_alloc);
		origins[origins_nr].key = key;
		current_origin = origins_nr++;
		return;
	}
	if (!strcmp(origins[current_origin].key, key)) {
		free(key);
		return;
	}
	origins[current_origin].cred = http_auth;
	for (i = 0; i < origins_nr; i++) {
		if (!strcmp(origins[i].key, key)) {
			http_auth = origins[i].cred;
			current_origin = i;
			free(key);
			return;
		}
	}
	ALLOC_GROW(origins, origins_nr + 1, origins_alloc);
	origins[origins_nr].key = key;
	credential_init(&http_auth);
	credential_from_url(&http_auth, url);
	current_origin = origins_nr++;
}

/*
 * git's get_active_slot() sets the user and password of a reused curl
 * handle only when http_auth has some: clear those of another origin.
 */
static void set_credentials(CURL *c)
{
	int empty_auth = 0;

	if (http_auth.password)
		return;
	curl_easy_setopt(c, CURLOPT_USERNAME, NULL);
	curl_easy_setopt(c, CURLOPT_PASSWORD, NULL);
	if (!git_config_get_maybe_bool("http.emptyauth", &empty_auth) &&
	    empty_auth)
		curl_easy_setopt(c, CURLOPT_USERPWD, ":");
}

/*
 * Whether the answer asks for credentials we have not tried (git's
 * http.c says HTTP_REAUTH for a 401 without a filled credential; for a
 * 401 to a filled one, it rejects it: credential helpers forget it).
 * Whatever the body of the 401.
 */
static int wants_credentials(struct request *r)
{
	return r->status == HTTP_REAUTH;
}

static void read_request(struct request *r, FILE *in)
{
	struct strbuf line = STRBUF_INIT;
	struct stream body;
	char buf[8192];
	size_t n;

	r->headers = http_copy_default_headers();
	/*
	 * No "Expect: 100-continue" on large POSTs: some hgweb versions
	 * (Mercurial 6.3's hg serve) fail on it, and Mercurial's own client
	 * never sends it.
	 */
	r->headers = curl_slist_append(r->headers, "Expect:");
	while (strbuf_getline_lf(&line, in) != EOF && line.len) {
		const char *path;
		struct stat st;
		if (skip_prefix(line.buf, "X-Cinnabar-Max-Size: ", &path)) {
			r->max_size = strtoumax(path, NULL, 10);
			continue;
		}
		if (skip_prefix(line.buf, "X-Cinnabar-Output-File: ", &path)) {
			r->output_path = xstrdup(path);
			continue;
		}
		if (!skip_prefix(line.buf, "X-Cinnabar-Body-File: ", &path)) {
			r->headers = curl_slist_append(r->headers, line.buf);
			continue;
		}
		r->body_file = fopen(path, "rb");
		if (!r->body_file || fstat(fileno(r->body_file), &st))
			die_errno("cannot read '%s'", path);
		r->body_file_size = st.st_size;
	}
	strbuf_release(&line);
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
 * With an output file, the body of a 200 answer replaces the file's
 * contents and the body of a 206 (partial content) is appended to them;
 * other answers' bodies are kept in memory as usual. Returns 0 when the
 * body was not for the file.
 */
static int save_body(struct request *r, const char *ptr, size_t len)
{
	long code = 0;
	if (!r->output_path)
		return 0;
	if (!r->output) {
		curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &code);
		if (code != 200 && code != 206)
			return 0;
		r->output = fopen(r->output_path, code == 200 ? "wb" : "ab");
		if (!r->output)
			die_errno("cannot write to '%s'", r->output_path);
	}
	if (fwrite(ptr, 1, len, r->output) != len)
		die_errno("cannot write to '%s'", r->output_path);
	r->saved += len;
	return 1;
}

static size_t body_cb(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct request *r = data;
	size_t len = size * nmemb;
	long code = 0;

	if (save_body(r, ptr, len))
		return len;
	if (r->pipe_fd >= 0) {
		/* Only a 2xx body goes to the importer; a 401's is dropped. */
		curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &code);
		if (code == 401)
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

static void run_request(struct request *r)
{
	struct active_request_slot *slot = get_active_slot();
	CURL *c = slot->curl;

	strbuf_reset(&r->resp_headers);
	strbuf_reset(&r->content_type);
	strbuf_reset(&r->small);
	r->too_large = 0;
	r->curl = c;
	set_credentials(c);
	curl_easy_setopt(c, CURLOPT_URL, r->url);
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
	r->status = run_one_slot(slot, &r->results);
}

/*
 * Run the request, asking for credentials once if the server wants some
 * (whether its 401 answer has a body or not).
 */
static void run_with_auth(struct request *r)
{
	run_request(r);
	if (wants_credentials(r)) {
		credential_fill(&http_auth, 1);
		if (r->output) {
			fclose(r->output);
			r->output = NULL;
		}
		run_request(r);
	}
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

static void http_fetch(struct request *r, FILE *out)
{
	size_t pos;
	run_with_auth(r);
	if (r->output && fclose(r->output))
		die_errno("cannot write to '%s'", r->output_path);
	r->output = NULL;
	fprintf(out, "status %ld\n", r->results.http_code);
	print_headers(out, r);
	for (pos = 0; pos < r->small.len; pos += 65536) {
		size_t n = r->small.len - pos < 65536 ? r->small.len - pos
						      : 65536;
		fprintf(out, "%"PRIuMAX"\n", (uintmax_t)n);
		fwrite(r->small.buf + pos, 1, n, out);
	}
	fprintf(out, "0\n");
	fflush(out);
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
	struct stream fd;
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
 * sending anything (the caller fills them and tries again).
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
	if (!stream_read(&ts->fd, &first, 1)) {
		join_transfer(&t);
		stream_release(&s);
		close(fds[0]);
		if (wants_credentials(r))
			return 1;
		if (!r->results.http_code)
			connection_failed(r);
		fprintf(out, "status %ld\n", r->results.http_code);
		fflush(out);
		die("HTTP error %ld from %s", r->results.http_code,
		    shown_url(r->url));
	}
	fprintf(out, "status %ld\n", r->results.http_code ?
		r->results.http_code : 200);
	fflush(out);
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
	if (try_import(r, out, import)) {
		credential_fill(&http_auth, 1);
		if (try_import(r, out, import))
			die("authentication to %s failed", shown_url(r->url));
	}
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
	read_request(&r, in);
	ensure_http(url);
	use_credentials_for(url);
	if (!strcmp(mode, "fetch"))
		http_fetch(&r, out);
	else if (!strcmp(mode, "import"))
		http_import(&r, out, import);
	else
		die("unknown http mode '%s'", mode);
	curl_slist_free_all(r.headers);
	if (r.body_file)
		fclose(r.body_file);
	free((char *)r.output_path);
	strbuf_release(&r.body);
	strbuf_release(&r.resp_headers);
	strbuf_release(&r.content_type);
	strbuf_release(&r.small);
}
