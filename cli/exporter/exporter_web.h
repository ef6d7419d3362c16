/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The exporter's web configuration (--web-config FILE, exporter_web.c):
 * the file, in node_exporter's web config format, read and checked, and
 * TLS for libmicrohttpd from it.
 */
#ifndef VNETCTL_EXPORTER_WEB_H
#define VNETCTL_EXPORTER_WEB_H

#include <microhttpd.h>

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

#endif /* VNETCTL_EXPORTER_WEB_H */
