/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetctl guard (guard.c) */
#ifndef VNETCTL_GUARD_H
#define VNETCTL_GUARD_H

int do_guard(int argc, char **argv);

#endif
