/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The two services of vnetd that its agent (agent.c) uses as well as the
 * datapath: the monotonic clock and systemd's readiness notification.
 * Nothing of the datapath (vnetd.h) is needed for them.
 */
#ifndef VNETD_UTIL_H
#define VNETD_UTIL_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds (notify.c) */
uint64_t vnetd_now_ns(void);

/* sd_notify(3)'s datagram to $NOTIFY_SOCKET (notify.c); 0 without one */
int vnetd_notify(const char *state);

#endif /* VNETD_UTIL_H */
