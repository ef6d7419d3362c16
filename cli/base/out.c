// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "out.h"

bool out_json;
bool out_pretty;

#define OUT_MAX_DEPTH 16
static bool first[OUT_MAX_DEPTH] = { true };
static int depth;

static void indent(void)
{
	int i;

	if (!out_pretty)
		return;
	putchar('\n');
	for (i = 0; i < depth; i++)
		fputs("  ", stdout);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* separator and key of the next JSON value */
static void json_key(const char *key)
{
	if (!first[depth])
		putchar(',');
	first[depth] = false;
	indent();
	if (key) {
		json_str(key);
		putchar(':');
		if (out_pretty)
			putchar(' ');
	}
}

static void open_(const char *key, char c)
{
	if (!out_json)
		return;
	json_key(key);
	putchar(c);
	if (depth < OUT_MAX_DEPTH - 1)
		depth++;
	first[depth] = true;
}

static void close_(char c)
{
	bool empty;

	if (!out_json)
		return;
	empty = first[depth];
	if (depth > 0)
		depth--;
	if (!empty)
		indent();
	putchar(c);
}

void out_obj_open(const char *key)
{
	open_(key, '{');
}

void out_obj_close(void)
{
	close_('}');
}

void out_arr_open(const char *key)
{
	open_(key, '[');
}

void out_arr_close(void)
{
	close_(']');
}

void out_u64(const char *key, const char *fmt, __u64 v)
{
	if (out_json) {
		json_key(key);
		printf("%llu", (unsigned long long)v);
	} else if (fmt) {
		printf(fmt, (unsigned long long)v);
	}
}

void out_double(const char *key, const char *fmt, double v)
{
	if (out_json) {
		json_key(key);
		printf("%.3f", v);
	} else if (fmt) {
		printf(fmt, v);
	}
}

void out_str(const char *key, const char *fmt, const char *v)
{
	if (out_json) {
		json_key(key);
		json_str(v);
	} else if (fmt) {
		printf(fmt, v);
	}
}

void out_bool(const char *key, const char *fmt, bool v)
{
	if (out_json) {
		json_key(key);
		fputs(v ? "true" : "false", stdout);
	} else if (fmt) {
		printf(fmt, v ? "yes" : "no");
	}
}

void out_null(const char *key, const char *fmt)
{
	if (out_json) {
		json_key(key);
		fputs("null", stdout);
	} else if (fmt) {
		fputs(fmt, stdout);
	}
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (out_json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void out_error(const char *msg)
{
	/* inside a document (an error in a listing): stderr says it */
	if (!out_json || depth > 0 || !first[0])
		return;
	fputs(out_pretty ? "{\n  \"error\": " : "{\"error\":", stdout);
	json_str(msg);
	fputs(out_pretty ? "\n}\n" : "}\n", stdout);
	fflush(stdout);
}

void out_doc_end(void)
{
	if (out_json) {
		putchar('\n');
		depth = 0;
		first[0] = true;
	}
	fflush(stdout);
}
