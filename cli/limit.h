/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetctl limit (limit.c) */
#ifndef VNETCTL_LIMIT_H
#define VNETCTL_LIMIT_H

int do_limit(int argc, char **argv);

#endif
