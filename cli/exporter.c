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
 * SIGHUP has nothing to reload and is logged.  docs/metrics.md.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "vnetctl.h"

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

/* one scrape: the devices pinned now, the present ones' counters */
static int metrics(struct MHD_Connection *c)
{
	static char names[MAX_DEVS][IF_NAMESIZE];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	n = vnet_list(names, MAX_DEVS);
	if (n < 0) {
		fprintf(stderr, "%s exporter: cannot read %s: %s\n", prog_name,
			VNET_PIN_ROOT, strerror(-n));
		n = 0;
	}
	stats_prometheus(f, names, n, -1, true);
	if (fclose(f)) {
		free(buf);
		return MHD_NO;
	}
	return reply(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, buf, len,
		     MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	static const char not_found[] = "not found: the metrics are at /metrics\n";
	static const char not_allowed[] = "only GET and HEAD\n";

	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			     (void *)not_allowed, strlen(not_allowed),
			     MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/metrics"))
		return metrics(c);
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
	int fd, one = 1, ret;

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
	ret = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (ret) {
		cli_usage("exporter", "--listen '%s': '%s' is not a numeric IP address (%s)",
			  spec, host, gai_strerror(ret));
		return -2;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
	freeaddrinfo(ai);
	return fd;
}

const struct cli_opt exporter_opts[] = {
	{ "listen", 'l', "ADDR:PORT", "where to listen, e.g. 127.0.0.1:9477 or :9477" },
	{ NULL, 0, NULL, NULL },
};

int do_exporter(int argc, char **argv)
{
	const char *spec = NULL;
	struct MHD_Daemon *d;
	char shown[128];
	sigset_t mask;
	int opt, fd, sig;

	while ((opt = cli_getopt(argc, argv, exporter_opts, "")) != -1) {
		if (opt != 'l')
			return cli_bad_option("exporter", opt, argv);
		spec = optarg;
	}
	if (optind < argc)
		return cli_usage("exporter", "unexpected argument '%s'", argv[optind]);
	if (!spec)
		return cli_usage("exporter", "--listen ADDR:PORT is needed (e.g. --listen 127.0.0.1:9477)");
	if (out_json)
		return cli_usage("exporter", "-j: the exporter serves the Prometheus text format");
	fd = listen_on(spec, shown, sizeof(shown));
	if (fd < 0)
		return fd == -2 ? EXIT_USAGE : 1;

	/* blocked here, so that the server's thread inherits the mask */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
				     (strchr(shown, '[') ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, handle, NULL,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_TIMEOUT, 10u,
			     MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_END);
	if (!d) {
		close(fd);
		return cli_error("cannot start the HTTP server on %s", shown);
	}
	fprintf(stderr, "%s exporter: serving http://%s/metrics\n", prog_name,
		shown);
	for (;;) {
		if (sigwait(&mask, &sig))
			continue;
		if (sig != SIGHUP)
			break;
		fprintf(stderr, "%s exporter: SIGHUP: nothing to reload (each scrape reads the pins anew); still serving\n",
			prog_name);
	}
	fprintf(stderr, "%s exporter: %s, exiting\n", prog_name, strsignal(sig));
	MHD_stop_daemon(d);
	close(fd);
	return 0;
}
