/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The vhost-user requests' names (handlers.c). */
#ifndef VNET_VHOST_HANDLERS_H
#define VNET_VHOST_HANDLERS_H

#include <stdint.h>

/* Name of a request ("SET_VRING_KICK"), or "UNKNOWN". */
const char *vhost_user_request_name(uint32_t request);

#endif /* VNET_VHOST_HANDLERS_H */
