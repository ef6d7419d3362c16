/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetctl exporter's parts: the HTTP server (exporter.c), its connection
 * table (exporter_conns.c), which closes a connection that has not sent a
 * whole request within EXPORTER_IDLE_S of its start or of its last answer,
 * so that idle or trickling clients cannot hold every slot, and its web
 * configuration: the file and TLS (exporter_web.c) and basic auth
 * (exporter_auth.c).
 */
#ifndef VNETCTL_EXPORTER_H
#define VNETCTL_EXPORTER_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <microhttpd.h>

/* seconds a connection may be without a request being answered */
#define EXPORTER_IDLE_S 5
/* connections at once, and from one address */
#define EXPORTER_CONN_MAX 1000
#define EXPORTER_CONN_PER_IP 128

/* MHD_OPTION_NOTIFY_CONNECTION: a connection opened or closed */
void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code);
/* the connection is answering a request (from the access handler) */
void conns_busy(struct MHD_Connection *c);
/* MHD_OPTION_NOTIFY_COMPLETED: its answer is done (or failed) */
void conns_done(void *cls, struct MHD_Connection *c, void **req,
		enum MHD_RequestTerminationCode toe);
/* close (shutdown) every connection idle for EXPORTER_IDLE_S; how many */
int conns_reap(void);
/* the connections open now */
int conns_open(void);

/* a request's own state (exporter.c): when its request line came, and
 * where its basic auth check is (exporter_auth.c) */
enum req_auth {
	AUTH_UNCHECKED,
	AUTH_WAITING, /* suspended while the checker thread runs bcrypt */
	AUTH_OK,
	AUTH_FAILED,
	AUTH_BUSY, /* the checker's queue was full: 503 */
};

struct req {
	struct timespec arrival;
	enum req_auth auth;
};

/* the web configuration (--web-config FILE, exporter_web.c) */
struct web_user {
	char *name, *hash; /* hash: bcrypt, checked */
};

/* client_auth_type: a client's certificate (mTLS), against client_ca */
enum web_client_auth {
	CLIENT_ANY,             /* NoClientCert (none asked for) */
	CLIENT_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
	CLIENT_REQUIRE,         /* RequireAndVerifyClientCert */
};

struct web_config {
	char *cert, *key; /* PEM, NUL-terminated; NULL: plain HTTP */
	char *client_ca;  /* PEM; NULL: no client certificates asked */
	enum web_client_auth client_auth;
	struct web_user *users;
	int n_users; /* 0: no basic auth */
};

/* FILE read and checked into W: 0, or 1 after an error naming FILE:LINE */
int web_config_load(const char *file, struct web_config *w);
void web_config_free(struct web_config *w);
/* W's MHD options into OPTS (WEB_MHD_OPTS entries); the flags it needs */
#define WEB_MHD_OPTS 5
unsigned int web_mhd_options(const struct web_config *w,
			     struct MHD_OptionItem *opts);

/* basic auth (exporter_auth.c): W's users, its checker thread; 0 or -1 */
int auth_start(const struct web_config *w);
void auth_stop(void);
/*
 * Whether the request may be answered (its client certificate, when
 * client_auth_type asks, and its credentials, when there are users, are
 * right); false with *RET to return from the access handler after a 403,
 * a 401, a 503, or with the connection suspended while its password is
 * checked.
 */
bool auth_request(struct MHD_Connection *c, struct req *r,
		  enum MHD_Result *ret);

/* what the exporter did, for its own families (exporter_self.c) */
struct exporter_counts {
	double read_seconds; /* the last read of the pins */
	int left_out;        /* devices it could not read */
	unsigned long long reads, scrapes, reaped;
};

/* the exporter's own families and process_*, into F */
void exporter_self(FILE *f, const struct exporter_counts *c);

#endif /* VNETCTL_EXPORTER_H */
