// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl exporter --listen ADDR:PORT: a Prometheus exporter.  An HTTP
 * server (libmicrohttpd, its one polling thread) answers
 *
 *   GET /metrics   every attached, present device's counters, read from
 *                  the pinned maps at each scrape (prom.c, the printer of
 *                  `stats --prometheus`), text format 0.0.4
 *   GET /          a landing page that links to /metrics
 *
 * and the main thread waits for SIGINT/SIGTERM (a clean stop, exit 0);
 * SIGHUP has nothing to reload and is logged.  Scrapes that arrive while
 * one is read share the next read (one read serves every scrape waiting
 * when it starts); a client that asks for gzip gets it; a connection
 * without a whole request EXPORTER_IDLE_S after it opened or was last
 * answered is closed (exporter_conns.c).  --web-config FILE adds HTTPS
 * (exporter_web.c: the file, the certificate) and basic auth
 * (exporter_auth.c).  docs/metrics.md.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <microhttpd.h>
#include <zlib.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/util.h"
#include "exporter.h"
#include "exporter_auth.h"
#include "exporter_conns.h"
#include "exporter_self.h"
#include "exporter_web.h"
#include "prom.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define MAX_DEVS 1024

static const char landing[] =
	"<!DOCTYPE html>\n"
	"<html><head><title>vnet exporter</title></head>\n"
	"<body><h1>vnet exporter</h1>\n"
	"<p>The counters of vnet's classifier and of vnetd's datapath for every\n"
	"attached tap on this host: <a href=\"/metrics\">/metrics</a>.</p>\n"
	"</body></html>\n";

static int reply(struct MHD_Connection *c, unsigned int code, const char *type,
		 void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r;
	int ret;

	r = MHD_create_response_from_buffer(len, body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* the last read of the pins: every scrape that came before it began */
static struct {
	char *body;
	size_t len;
	struct timespec started;
	bool ok;
} last;

/* for the exporter's own families */
static struct exporter_counts counts;

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * MHD_OPTION_URI_LOG_CALLBACK: a request line came; its state.  The
 * server's one thread reads a request only after the read before it, so
 * the time the request reached the socket comes from the kernel (TCP_INFO:
 * milliseconds since the last data came), a millisecond early at worst.
 */
static void *req_start(void *cls, const char *uri, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct req *r = calloc(1, sizeof(*r));
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	long ms;

	(void)cls;
	(void)uri;
	if (!r)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &r->arrival);
	if (ci && !getsockopt(ci->connect_fd, IPPROTO_TCP, TCP_INFO, &ti, &len) &&
	    len >= offsetof(struct tcp_info, tcpi_last_data_recv) +
			   sizeof(ti.tcpi_last_data_recv)) {
		ms = (long)ti.tcpi_last_data_recv + 1;
		r->arrival.tv_sec -= ms / 1000;
		r->arrival.tv_nsec -= (ms % 1000) * 1000000L;
		if (r->arrival.tv_nsec < 0) {
			r->arrival.tv_nsec += 1000000000L;
			r->arrival.tv_sec--;
		}
	}
	return r;
}

/* the body gzipped into *OUT (allocated); 0 or -1 */
static int gzip(const char *in, size_t len, char **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = compressBound(len) + 32;

	*out = malloc(cap);
	if (!*out || deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
				  Z_DEFAULT_STRATEGY) != Z_OK) {
		free(*out);
		return -1;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = (Bytef *)*out;
	z.avail_out = cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(*out);
		return -1;
	}
	*out_len = z.total_out;
	deflateEnd(&z);
	return 0;
}

static bool wants_gzip(struct MHD_Connection *c)
{
	const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING);

	return ae && strstr(ae, "gzip");
}

static int reply_body(struct MHD_Connection *c, unsigned int code,
		      const char *body, size_t len)
{
	struct MHD_Response *r;
	char *z;
	size_t zlen;
	int ret;

	if (wants_gzip(c) && !gzip(body, len, &z, &zlen)) {
		r = MHD_create_response_from_buffer(zlen, z, MHD_RESPMEM_MUST_FREE);
		if (r)
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
						"gzip");
		else
			free(z);
	} else {
		r = MHD_create_response_from_buffer(len, (void *)body,
						    MHD_RESPMEM_MUST_COPY);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				code == MHD_HTTP_OK ? PROM_CONTENT_TYPE :
						      "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * Why no device can be read at all: bpffs not mounted, the pins'
 * directory unreadable; NULL when it can be.  The scrape then fails
 * (500), so that Prometheus says up 0, not a healthy target without
 * devices.
 */
static const char *pins_unreadable(char *why, size_t len, int n)
{
	struct statfs sf;

	if (statfs("/sys/fs/bpf", &sf) || sf.f_type != BPF_FS_MAGIC)
		snprintf(why, len, "no BPF filesystem at /sys/fs/bpf, so no attached device can be read: mount it (mount -t bpf bpf /sys/fs/bpf) and attach again\n");
	else if (n < 0)
		snprintf(why, len, "cannot read %s: %s%s\n", VNET_PIN_ROOT,
			 strerror(-n),
			 n == -EACCES || n == -EPERM ? " (the exporter runs as root: it needs CAP_BPF and CAP_SYS_ADMIN to read the pins)" : "");
	else
		return NULL;
	return why;
}

/* LAST's body replaced by MSG */
static int body_is(const char *msg)
{
	free(last.body);
	last.body = strdup(msg);
	last.len = last.body ? strlen(msg) : 0;
	return last.body ? 0 : -1;
}

/* read every device pinned now into `last`: 0, or -1 (out of memory) */
static int read_pins(void)
{
	static char names[MAX_DEVS][IF_NAMESIZE];
	struct timespec done;
	char why[512];
	FILE *f;
	int n, left_out;

	free(last.body);
	last.body = NULL;
	last.ok = false;
	clock_gettime(CLOCK_MONOTONIC, &last.started);
	n = vnet_list(names, MAX_DEVS);
	if (pins_unreadable(why, sizeof(why), n)) {
		fprintf(stderr, "%s exporter: %s", prog_name, why);
		return body_is(why);
	}
	f = open_memstream(&last.body, &last.len);
	if (!f)
		return -1;
	left_out = stats_prometheus(f, names, n, -1, true);
	clock_gettime(CLOCK_MONOTONIC, &done);
	counts.reads++;
	counts.left_out = left_out;
	counts.read_seconds = (double)(done.tv_sec - last.started.tv_sec) +
			      (done.tv_nsec - last.started.tv_nsec) / 1e9;
	exporter_self(f, &counts);
	if (fclose(f))
		return -1;
	last.ok = !(left_out > 0 && left_out == n);
	if (!last.ok) {
		/* every device failed: the same as none readable */
		snprintf(why, sizeof(why), "none of the %d attached devices could be read (the exporter's log says why)\n",
			 n);
		return body_is(why);
	}
	return 0;
}

/* one scrape: the read that began after this request came, or a new one */
static int metrics(struct MHD_Connection *c, const struct req *r)
{
	counts.scrapes++;
	if (!last.body || !r || ts_before(&last.started, &r->arrival))
		if (read_pins())
			return MHD_NO;
	return reply_body(c, last.ok ? MHD_HTTP_OK :
				       MHD_HTTP_INTERNAL_SERVER_ERROR,
			  last.body, last.len);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	static const char not_found[] = "not found: the metrics are at /metrics\n";
	static const char not_allowed[] = "only GET and HEAD\n";
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_size;
	conns_busy(c);
	if (!auth_request(c, *state, &ret))
		return ret;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			     (void *)not_allowed, strlen(not_allowed),
			     MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/metrics"))
		return metrics(c, *state);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8",
			     (void *)landing, strlen(landing),
			     MHD_RESPMEM_PERSISTENT);
	return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", (void *)not_found,
		     strlen(not_found), MHD_RESPMEM_PERSISTENT);
}

/*
 * ADDR:PORT, [ADDR6]:PORT or :PORT (every address): a listening TCP
 * socket; -2 after a usage error, -1 after an error (message printed).
 */
static int listen_on(const char *spec, char *shown, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV |
					      AI_PASSIVE };
	char host[INET6_ADDRSTRLEN + 2] = "", *port, *end;
	struct addrinfo *ai;
	unsigned long p;
	int fd, one = 1, zero = 0, ret;

	port = strrchr(spec, ':');
	if (!port || (size_t)(port - spec) >= sizeof(host)) {
		cli_usage("exporter", "--listen '%s': expected ADDR:PORT, [ADDR]:PORT or :PORT (e.g. 127.0.0.1:9477)",
			  spec);
		return -2;
	}
	memcpy(host, spec, (size_t)(port - spec));
	host[port - spec] = '\0';
	port++;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p < 1 || p > 65535) {
		cli_usage("exporter", "--listen '%s': the port must be a number from 1 to 65535",
			  spec);
		return -2;
	}
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 3 || host[n - 1] != ']') {
			cli_usage("exporter", "--listen '%s': an IPv6 address goes in brackets: [::1]:9477",
				  spec);
			return -1;
		}
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
		hints.ai_family = AF_INET6;
	}
	/* :PORT: every IPv6 and IPv4 address (one dual-stack socket) */
	if (!host[0])
		hints.ai_family = AF_INET6;
	ret = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (ret && !host[0]) { /* no IPv6 here: IPv4's every address */
		hints.ai_family = AF_INET;
		ret = getaddrinfo(NULL, port, &hints, &ai);
	}
	if (ret) {
		cli_usage("exporter", "--listen '%s': '%s' is not a numeric IP address (%s)",
			  spec, host, gai_strerror(ret));
		return -2;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !host[0] && ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		cli_error("cannot listen on %s: %s%s", spec, strerror(errno),
			  errno == EADDRINUSE ? " (another process has that port: pick another with --listen)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	snprintf(shown, len, "%s%s%s:%s", ai->ai_family == AF_INET6 ? "[" : "",
		 host[0] ? host : (ai->ai_family == AF_INET6 ? "::" : "0.0.0.0"),
		 ai->ai_family == AF_INET6 ? "]" : "", port);
	if (!host[0] && ai->ai_family == AF_INET6)
		snprintf(shown, len, "[::]:%s (IPv6 and IPv4)", port);
	freeaddrinfo(ai);
	return fd;
}

/*
 * libmicrohttpd's messages, a repeated one at most every 10 s with how
 * many were left out (a client at its connection limit would otherwise
 * write a line per refused connection)
 */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	static char prev[256];
	static time_t prev_at;
	static unsigned long held;
	char msg[256];
	time_t t = time(NULL);

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!strcmp(msg, prev) && t - prev_at < 10) {
		held++;
		return;
	}
	if (held)
		fprintf(stderr, "%s exporter: (the last message %lu more times)\n",
			prog_name, held);
	fprintf(stderr, "%s exporter: %s%s", prog_name, msg,
		msg[0] && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
	snprintf(prev, sizeof(prev), "%s", msg);
	prev_at = t;
	held = 0;
}

/* EXPORTER_CONN_MAX connections need more than a soft limit of 1024 */
static void raise_nofile(void)
{
	struct rlimit r;

	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

const struct cli_opt exporter_opts[] = {
	{ "listen", 'l', "ADDR:PORT",
	  "where to listen, e.g. 127.0.0.1:9477 or :9477" },
	{ "web-config", 0, "FILE",
	  "HTTPS and basic auth from FILE, in the format of\n"
	  "node_exporter's --web.config.file (docs/metrics.md)" },
	{ NULL, 0, NULL, NULL },
};

/* the server on FD, with WEB's TLS and users; NULL after a message */
static struct MHD_Daemon *start(int fd, const char *shown,
				const struct web_config *web)
{
	struct MHD_OptionItem opts[WEB_MHD_OPTS];
	unsigned int flags = web_mhd_options(web, opts);
	struct MHD_Daemon *d;

	d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
				     (strchr(shown, '[') ? MHD_USE_IPv6 : 0) |
				     flags,
			     0, NULL, NULL, handle, NULL,
			     MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned int)EXPORTER_IDLE_S * 2,
			     MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned int)EXPORTER_CONN_MAX,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			     (unsigned int)EXPORTER_CONN_PER_IP,
			     MHD_OPTION_NOTIFY_CONNECTION, conns_notify, NULL,
			     MHD_OPTION_URI_LOG_CALLBACK, req_start, NULL,
			     MHD_OPTION_NOTIFY_COMPLETED, conns_done, NULL,
			     MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!d) {
		cli_error("cannot start the HTTP server on %s%s", shown,
			  web->cert ?
				  " with TLS (this libmicrohttpd may lack it)" :
				  "");
		return NULL;
	}
	fprintf(stderr, "%s exporter: serving %s://%s/metrics%s\n", prog_name,
		web->cert ? "https" : "http", shown,
		web->n_users ? " (basic auth)" : "");
	if (web->n_users && !web->cert)
		fprintf(stderr,
			"%s exporter: warning: basic auth without TLS: passwords cross the network in the clear (tls_server_config)\n",
			prog_name);
	return d;
}

/* until SIGINT or SIGTERM, a tick a second: connections past their time
 * are closed; the signal */
static int serve(const sigset_t *mask)
{
	unsigned long long reaped = 0;
	int sig;

	for (;;) {
		struct timespec tick = { .tv_sec = 1 };

		sig = sigtimedwait(mask, NULL, &tick);
		if (sig < 0) {
			reaped += (unsigned long long)conns_reap();
			__atomic_store_n(&counts.reaped, reaped,
					 __ATOMIC_RELAXED);
			continue;
		}
		if (sig != SIGHUP)
			return sig;
		fprintf(stderr,
			"%s exporter: SIGHUP: nothing to reload (each scrape reads the pins anew); still serving\n",
			prog_name);
	}
}

int do_exporter(int argc, char **argv)
{
	const char *spec = NULL, *web_file = NULL;
	struct web_config web = { 0 };
	struct MHD_Daemon *d = NULL;
	char shown[128];
	sigset_t mask;
	int opt, fd, sig;

	while ((opt = cli_getopt(argc, argv, exporter_opts, "")) != -1) {
		if (opt == 'l')
			spec = optarg;
		else if (opt == 256 + 1)
			web_file = optarg;
		else
			return cli_bad_option("exporter", opt, argv);
	}
	if (optind < argc)
		return cli_usage("exporter", "unexpected argument '%s'", argv[optind]);
	if (!spec)
		return cli_usage("exporter", "--listen ADDR:PORT is needed (e.g. --listen 127.0.0.1:9477)");
	if (out_json)
		return cli_usage("exporter", "-j: the exporter serves the Prometheus text format");
	if (web_file && web_config_load(web_file, &web))
		return 1;
	fd = listen_on(spec, shown, sizeof(shown));
	if (fd < 0) {
		web_config_free(&web);
		return fd == -2 ? EXIT_USAGE : 1;
	}

	/* blocked here, so that the server's threads inherit the mask */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	stats_prometheus_keep_open();
	if (!auth_start(&web))
		d = start(fd, shown, &web);
	if (!d) {
		auth_stop();
		web_config_free(&web);
		close(fd);
		return 1;
	}
	sig = serve(&mask);
	fprintf(stderr, "%s exporter: %s, exiting\n", prog_name, strsignal(sig));
	auth_stop();
	MHD_stop_daemon(d);
	web_config_free(&web);
	close(fd);
	return 0;
}
