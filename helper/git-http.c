/*
 * git's http.c with http_forget_settings(): see git-http.h.
 *
 * This file includes the pinned git tree's http.c as it is, to reach the
 * static variables its http_options() and http_init() set. Nothing of it
 * is changed; if the pinned version changes, the check below fails the
 * build (helper.mk passes the version of the tree compiled against as
 * CINNABAR_GIT_VERSION_ID, its dots as underscores): the variables reset
 * here must be read again against the new http.c before adding its
 * version below.
 */
#define CINNABAR_GIT_2_39_5 1
#define CINNABAR_GIT_2_47_3 2
#define CINNABAR_GIT_2_55_0 3
#define CINNABAR_PASTE(a, b) a##b
#define CINNABAR_PINNED(v) CINNABAR_PASTE(CINNABAR_GIT_, v)
#if !defined(CINNABAR_GIT_VERSION_ID) || !CINNABAR_PINNED(CINNABAR_GIT_VERSION_ID)
#error "git-http.c is written against git 2.39.5's, 2.47.3's and 2.55.0's http.c; check it against this git version"
#endif
#include "http.c"
#include "git-http.h"

/*
 * The strings are not freed: some point into the environment (git
 * 2.39's set_from_env()), and one set of them is kept for each change
 * of URL settings, a few in a process.
 */
#define FORGET(var) ((var) = NULL)

void http_forget_settings(void)
{
	FORGET(curl_http_version);
	curl_ssl_verify = -1;
	FORGET(ssl_cipherlist);
	FORGET(ssl_version);
	FORGET(ssl_cert);
	FORGET(ssl_key);
#if CINNABAR_PINNED(CINNABAR_GIT_VERSION_ID) >= CINNABAR_GIT_2_47_3
	FORGET(ssl_cert_type);
	FORGET(ssl_key_type);
#endif
	FORGET(ssl_capath);
	FORGET(ssl_cainfo);
#ifdef GIT_CURL_HAVE_CURLOPT_PINNEDPUBLICKEY
	FORGET(ssl_pinnedkey);
#endif
	curl_ssl_try = 0;
	FORGET(http_ssl_backend);
	http_schannel_check_revoke = 1;
	http_schannel_use_ssl_cainfo = 0;
	min_curl_sessions = 1;
	max_requests = -1;
	curl_low_speed_limit = -1;
	curl_low_speed_time = -1;
	curl_ftp_no_epsv = 0;
	FORGET(curl_no_proxy);
	FORGET(http_proxy_ssl_cert);
	FORGET(http_proxy_ssl_key);
	FORGET(http_proxy_ssl_ca_info);
	FORGET(curl_cookie_file);
	curl_save_cookies = 0;
	http_post_buffer = 16 * LARGE_PACKET_MAX;
	FORGET(user_agent);
	curl_empty_auth = -1;
#ifdef CURLGSSAPI_DELEGATION_FLAG
	FORGET(curl_deleg);
#endif
	http_follow_config = HTTP_FOLLOW_INITIAL;
	http_proactive_auth = 0;
	/* What a 401 of one server taught about the methods it takes. */
	http_auth_methods = CURLAUTH_ANY;
	http_auth_methods_restricted = 0;
#if CINNABAR_PINNED(CINNABAR_GIT_VERSION_ID) >= CINNABAR_GIT_2_55_0
	empty_auth_try_negotiate = 0;
	curl_tcp_keepidle = -1;
	curl_tcp_keepintvl = -1;
	curl_tcp_keepcnt = -1;
	http_retry_after = 0;
	http_max_retries = 0;
	http_max_retry_time = 300;
#endif
}
