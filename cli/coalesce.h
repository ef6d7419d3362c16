/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetctl coalesce (coalesce.c) */
#ifndef VNETCTL_COALESCE_H
#define VNETCTL_COALESCE_H

int do_coalesce(int argc, char **argv);

#endif
