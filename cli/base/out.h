/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One printer for text and JSON (after iproute2's print_*()): every call
 * names the JSON key and the text format of the same value; in JSON mode the
 * key is used, in text mode the format (NULL = nothing in text).
 */
#ifndef VNETCTL_OUT_H
#define VNETCTL_OUT_H

#include <stdbool.h>
#include <linux/types.h>

extern bool out_json;
extern bool out_pretty;

void out_obj_open(const char *key);
void out_obj_close(void);
void out_arr_open(const char *key);
void out_arr_close(void);
void out_u64(const char *key, const char *fmt, __u64 v);
void out_double(const char *key, const char *fmt, double v);
void out_str(const char *key, const char *fmt, const char *v);
void out_bool(const char *key, const char *fmt, bool v);
void out_null(const char *key, const char *fmt);
/* text mode only */
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* end of one JSON document (a newline) */
void out_doc_end(void);
/* in JSON mode and outside a document: {"error": MSG} as one document */
void out_error(const char *msg);

#endif
