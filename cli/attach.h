/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetctl attach and detach (attach.c) */
#ifndef VNETCTL_ATTACH_H
#define VNETCTL_ATTACH_H

#include "base/util.h"

extern const struct cli_opt attach_opts[], detach_opts[];
int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);

#endif
