/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The exporter's basic auth and client certificates (exporter_auth.c):
 * a request checked against the web configuration's users, bcrypt on a
 * thread of its own while the connection waits.
 */
#ifndef VNETCTL_EXPORTER_AUTH_H
#define VNETCTL_EXPORTER_AUTH_H

#include <stdbool.h>
#include <time.h>
#include <microhttpd.h>

#include "exporter_web.h"

/* a request's own state (exporter.c): when its request line came, and
 * where its basic auth check is */
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

/* W's users, its checker thread; 0 or -1 */
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

#endif /* VNETCTL_EXPORTER_AUTH_H */
