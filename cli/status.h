/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetctl status (status.c) */
#ifndef VNETCTL_STATUS_H
#define VNETCTL_STATUS_H

int do_status(int argc, char **argv);

#endif
