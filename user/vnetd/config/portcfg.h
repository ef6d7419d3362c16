/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The ports' keys, --port and --config (portcfg.c), for opts.c. */
#ifndef VNETD_PORTCFG_H
#define VNETD_PORTCFG_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

int vnetd_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
bool vnetd_parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *v);
bool vnetd_parse_cpus(const char *s, struct vnetd_port_cfg *c, char *why,
		      size_t len);
bool vnetd_tap_name_ok(const char *s);
int vnetd_port_kv(struct vnetd_port_cfg *c, char *tok, const char *where,
		  unsigned int *got);
int vnetd_port_add(struct vnetd_opts *o, const struct vnetd_port_cfg *c,
		   const char *where);
int vnetd_parse_port_spec(struct vnetd_opts *o, const char *spec);
int vnetd_parse_config(struct vnetd_opts *o, const char *path);
/* every port from the options (--socket/--tap, --port, --config) */
int vnetd_ports_collect(struct vnetd_opts *o);
/* no socket or tap used by two ports */
int vnetd_ports_check(const struct vnetd_opts *o);

#endif
