/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef VNETD_SD_NOTIFY_H
#define VNETD_SD_NOTIFY_H

/* sd_notify(3)'s datagram to $NOTIFY_SOCKET (sd_notify.c); 0 without one */
int vnetd_notify(const char *state);

#endif
