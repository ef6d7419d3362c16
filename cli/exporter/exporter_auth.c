// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The exporter's client certificates (--web-config's client_auth_type,
 * client_ca_file) and basic auth (basic_auth_users).  libmicrohttpd asks
 * for a client's certificate when it has a trust (the CA file); a request
 * whose certificate does not verify against it, or without one when one
 * is required, gets 403.  A request without credentials, or with wrong
 * ones, gets 401 and `WWW-Authenticate: Basic realm="vnet exporter"`.
 * bcrypt costs tens of milliseconds a check by design, and the server has
 * one thread, so:
 *
 *   - a (name, password) pair that passed is remembered, as the exporter
 *     toolkit does, as a SHA-256 of a random per-process salt and the
 *     pair (no password is kept); a scrape with it is answered at once;
 *   - any other is checked by a thread of its own (libcrypt's crypt_rn),
 *     its connection suspended meanwhile, so that wrong passwords do not
 *     hold the server's thread up; AUTH_QUEUE wait at most, the next get
 *     503.  An unknown name is checked against a real hash all the same
 *     (the answer takes as long), and the results are compared in
 *     constant time.
 */
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "base/util.h"
#include "exporter_auth.h"

#define AUTH_REALM "vnet exporter"
/* pairs remembered, and checks waiting for the checker */
#define AUTH_CACHE 64
#define AUTH_QUEUE 16
#define DIGEST 32

struct job {
	struct MHD_Connection *c;
	struct req *r;
	char *user, *pass;
	unsigned char digest[DIGEST];
};

static struct {
	const struct web_config *w;
	pthread_t checker;
	bool running, stopping;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct job queue[AUTH_QUEUE];
	int head, n;
	unsigned char salt[DIGEST];
	unsigned char cache[AUTH_CACHE][DIGEST];
	bool cached[AUTH_CACHE];
	int next; /* the cache's entry to fill next */
} a = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

/* whether the N bytes at X and Y are equal, in a time that says nothing */
static bool same(const void *x, const void *y, size_t n)
{
	const volatile unsigned char *p = x, *q = y;
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= p[i] ^ q[i];
	return !d;
}

/* SHA-256(salt, USER, NUL, PASS): 0, or -1 */
static int digest(const char *user, const char *pass, unsigned char *out)
{
	gnutls_hash_hd_t h;

	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		return -1;
	gnutls_hash(h, a.salt, sizeof(a.salt));
	gnutls_hash(h, user, strlen(user) + 1);
	gnutls_hash(h, pass, strlen(pass));
	gnutls_hash_deinit(h, out);
	return 0;
}

static bool cache_has(const unsigned char *d)
{
	bool hit = false;

	pthread_mutex_lock(&a.lock);
	for (int i = 0; i < AUTH_CACHE; i++)
		hit |= a.cached[i] & same(a.cache[i], d, DIGEST);
	pthread_mutex_unlock(&a.lock);
	return hit;
}

static void cache_add(const unsigned char *d)
{
	pthread_mutex_lock(&a.lock);
	memcpy(a.cache[a.next], d, DIGEST);
	a.cached[a.next] = true;
	a.next = (a.next + 1) % AUTH_CACHE;
	pthread_mutex_unlock(&a.lock);
}

/* USER's PASS against USER's hash (the first user's for a stranger) */
static bool verify(const char *user, const char *pass, struct crypt_data *cd)
{
	const struct web_user *u = NULL;
	const char *hash, *out;
	bool ok;

	for (int i = 0; i < a.w->n_users; i++)
		if (!strcmp(a.w->users[i].name, user))
			u = &a.w->users[i];
	hash = u ? u->hash : a.w->users[0].hash;
	out = crypt_rn(pass, hash, cd, sizeof(*cd));
	ok = out && strlen(out) == strlen(hash) &&
	     same(out, hash, strlen(hash));
	explicit_bzero(cd, sizeof(*cd));
	return u && ok;
}

static void job_free(struct job *j)
{
	explicit_bzero(j->pass, strlen(j->pass));
	MHD_free(j->pass);
	MHD_free(j->user);
}

/* the checker: each job's bcrypt, then its connection resumed */
static void *checker(void *arg)
{
	static struct crypt_data cd;
	struct job j;
	bool ok, stop;

	(void)arg;
	pthread_mutex_lock(&a.lock);
	for (;;) {
		while (!a.n && !a.stopping)
			pthread_cond_wait(&a.wake, &a.lock);
		if (!a.n)
			break;
		j = a.queue[a.head];
		a.head = (a.head + 1) % AUTH_QUEUE;
		a.n--;
		/* stopping: the queue is emptied without checks */
		stop = a.stopping;
		pthread_mutex_unlock(&a.lock);
		ok = !stop && verify(j.user, j.pass, &cd);
		if (ok)
			cache_add(j.digest);
		j.r->auth = ok ? AUTH_OK : AUTH_FAILED;
		job_free(&j);
		MHD_resume_connection(j.c);
		pthread_mutex_lock(&a.lock);
	}
	pthread_mutex_unlock(&a.lock);
	return NULL;
}

int auth_start(const struct web_config *w)
{
	a.w = w;
	if (!w->n_users)
		return 0;
	if (getrandom(a.salt, sizeof(a.salt), 0) != sizeof(a.salt))
		return cli_error("cannot draw a random salt for the password cache: %s",
				 strerror(errno));
	if (pthread_create(&a.checker, NULL, checker, NULL))
		return cli_error("cannot start the password checker's thread");
	a.running = true;
	return 0;
}

/* every job answered, the checker gone: before MHD_stop_daemon() */
void auth_stop(void)
{
	if (!a.running)
		return;
	pthread_mutex_lock(&a.lock);
	a.stopping = true;
	pthread_cond_signal(&a.wake);
	pthread_mutex_unlock(&a.lock);
	pthread_join(a.checker, NULL);
	a.running = false;
	explicit_bzero(a.cache, sizeof(a.cache));
	explicit_bzero(a.salt, sizeof(a.salt));
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int code)
{
	static const char denied[] =
		"401 Unauthorized: this exporter wants a user and password (basic auth)\n";
	static const char busy[] =
		"503 Service Unavailable: too many password checks at once; try again\n";
	static const char forbidden[] =
		"403 Forbidden: this exporter wants a client certificate its client_ca_file signed\n";
	const char *body = code == MHD_HTTP_UNAUTHORIZED ? denied :
			   code == MHD_HTTP_FORBIDDEN    ? forbidden :
							   busy;
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(body), (void *)body,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (code == MHD_HTTP_UNAUTHORIZED) {
		ret = MHD_queue_basic_auth_fail_response(c, AUTH_REALM, r);
	} else {
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		ret = MHD_queue_response(c, code, r);
	}
	MHD_destroy_response(r);
	return ret;
}

/* the job to the checker, C suspended until it is done; false: full */
static bool enqueue(struct MHD_Connection *c, struct job *j)
{
	bool ok;

	MHD_suspend_connection(c);
	pthread_mutex_lock(&a.lock);
	ok = !a.stopping && a.n < AUTH_QUEUE;
	if (ok) {
		j->r->auth = AUTH_WAITING;
		a.queue[(a.head + a.n) % AUTH_QUEUE] = *j;
		a.n++;
		pthread_cond_signal(&a.wake);
	}
	pthread_mutex_unlock(&a.lock);
	if (!ok) {
		j->r->auth = AUTH_BUSY;
		job_free(j);
		MHD_resume_connection(c);
	}
	return ok;
}

/* the client's certificate, as client_auth_type asks */
static bool client_ok(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	unsigned int n = 0, status = 0;
	gnutls_session_t s;

	if (!ci || !ci->tls_session)
		return false;
	s = (gnutls_session_t)ci->tls_session;
	if (!gnutls_certificate_get_peers(s, &n) || !n)
		return a.w->client_auth == CLIENT_VERIFY_IF_GIVEN;
	return !gnutls_certificate_verify_peers2(s, &status) && !status;
}

bool auth_request(struct MHD_Connection *c, struct req *r, enum MHD_Result *ret)
{
	struct job j = { .c = c, .r = r };

	if (!a.w)
		return true;
	if (a.w->client_auth != CLIENT_ANY && !client_ok(c)) {
		*ret = answer(c, MHD_HTTP_FORBIDDEN);
		return false;
	}
	if (!a.w->n_users)
		return true;
	*ret = MHD_NO; /* no state (out of memory): the connection closed */
	if (!r)
		return false;
	switch (r->auth) {
	case AUTH_OK:
		return true;
	case AUTH_BUSY:
		*ret = answer(c, MHD_HTTP_SERVICE_UNAVAILABLE);
		return false;
	case AUTH_UNCHECKED:
		break;
	default:
		*ret = answer(c, MHD_HTTP_UNAUTHORIZED);
		return false;
	}
	j.user = MHD_basic_auth_get_username_password(c, &j.pass);
	if (!j.user || !j.pass || digest(j.user, j.pass, j.digest)) {
		if (j.pass)
			explicit_bzero(j.pass, strlen(j.pass));
		MHD_free(j.pass);
		MHD_free(j.user);
		*ret = answer(c, MHD_HTTP_UNAUTHORIZED);
		return false;
	}
	if (cache_has(j.digest)) {
		job_free(&j);
		r->auth = AUTH_OK;
		return true;
	}
	enqueue(c, &j);
	*ret = MHD_YES; /* answered once the check is done */
	return false;
}
