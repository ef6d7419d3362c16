// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A tiny test harness in the style of the kernel's BPF selftests.
 *
 *	test_start("classify/ipv4_tcp_urgent");
 *	if (!ASSERT_OK(err, "load"))
 *		goto out;
 *	ASSERT_EQ(got, want, "class");
 *  out:
 *	test_end();
 *	...
 *	return test_summary();
 *
 * Every ASSERT_*() evaluates to true when it holds.  When it does not, it
 * prints "  FAIL: <file>:<line> <name>: <details>" to stderr and marks the
 * current test failed; the test goes on unless the caller stops it, so one
 * run shows every broken expectation of a case.
 *
 * Each test prints exactly one result line to stdout, which selftests/run.sh
 * counts across all test programs:
 *	PASS: <name>
 *	FAIL: <name>: <reason>     (the first failed assertion)
 *	SKIP: <name>: <reason>
 *
 * Header only: the functions are static inline, and the state is one weak
 * definition, so that a test program built from several files (a file of
 * cases and the helpers it shares with other programs) counts in one place.
 */
#ifndef VNET_SELFTESTS_TEST_H
#define VNET_SELFTESTS_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

struct test_state {
	const char *name;	/* the running test, NULL between tests */
	bool failed;
	bool skipped;
	bool orphan_failed;	/* an assertion failed outside any test */
	char reason[256];
	unsigned int nr_passed;
	unsigned int nr_failed;
	unsigned int nr_skipped;
};

__attribute__((weak)) struct test_state test_state;

/*
 * Integers are compared as the widest type available, so that an int and a
 * __u64 compare by value (no sign-compare surprise, no -Wsign-compare).
 */
#ifdef __SIZEOF_INT128__
typedef __int128 test_int_t;
#else
typedef long long test_int_t;
#endif

static inline const char *test__fmt_int(char *buf, size_t len, test_int_t v)
{
	if (v >= -(test_int_t)0x7fffffffffffffffLL - 1 &&
	    v <= (test_int_t)0x7fffffffffffffffLL)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

static inline void test__vrecord(const char *fmt, va_list ap)
{
	/* the first failure is the one the result line reports */
	if (test_state.failed)
		return;
	vsnprintf(test_state.reason, sizeof(test_state.reason), fmt, ap);
}

/* Marks the current test failed, with a reason and no diagnostic line. */
static inline void test_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void test_fail(const char *fmt, ...)
{
	va_list ap;

	if (!test_state.name) {
		test_state.orphan_failed = true;
		return;
	}
	va_start(ap, fmt);
	test__vrecord(fmt, ap);
	va_end(ap);
	test_state.failed = true;
}

/* Backend of the ASSERT_*() macros. */
static inline void test__assert_fail(const char *file, int line,
				     const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline void test__assert_fail(const char *file, int line,
				     const char *name, const char *fmt, ...)
{
	char details[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(details, sizeof(details), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  FAIL: %s:%d %s: %s\n", file, line, name, details);
	test_fail("%s: %s", name, details);
}

/* Marks the current test skipped (unless it already failed). */
static inline void test_skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void test_skip(const char *fmt, ...)
{
	va_list ap;

	if (test_state.failed || test_state.skipped)
		return;
	va_start(ap, fmt);
	vsnprintf(test_state.reason, sizeof(test_state.reason), fmt, ap);
	va_end(ap);
	test_state.skipped = true;
}

static inline void test_start(const char *name)
{
	test_state.name = name;
	test_state.failed = false;
	test_state.skipped = false;
	test_state.reason[0] = '\0';
}

/* Prints the result line of the current test; true if it passed. */
static inline bool test_end(void)
{
	const char *name = test_state.name ? test_state.name : "(unnamed)";
	bool passed = false;

	if (test_state.failed) {
		printf("FAIL: %s: %s\n", name, test_state.reason);
		test_state.nr_failed++;
	} else if (test_state.skipped) {
		printf("SKIP: %s: %s\n", name, test_state.reason);
		test_state.nr_skipped++;
	} else {
		printf("PASS: %s\n", name);
		test_state.nr_passed++;
		passed = true;
	}
	/* keep stdout and the stderr diagnostics in order when piped */
	fflush(stdout);
	test_state.name = NULL;
	return passed;
}

/* One SKIP line for a test (or a group of tests) that cannot run at all. */
static inline void test_skip_all(const char *name, const char *reason)
{
	test_start(name);
	test_skip("%s", reason);
	test_end();
}

#define RUN_TEST(fn)                  \
	do {                          \
		test_start(#fn);      \
		fn();                 \
		test_end();           \
	} while (0)

/*
 * "# <prog>: N passed, N failed, N skipped" and the exit status: non-zero
 * when a test (or an assertion outside a test) failed.
 */
static inline int test_summary(const char *prog)
{
	printf("# %s: %u passed, %u failed, %u skipped\n", prog,
	       test_state.nr_passed, test_state.nr_failed,
	       test_state.nr_skipped);
	fflush(stdout);
	return test_state.nr_failed || test_state.orphan_failed ? 1 : 0;
}

/*
 * Whether this process can run BPF tests: root, and the bpf() syscall
 * creates a map.  On false, why says what is missing (a SKIP reason).
 */
static inline bool test_have_root_bpf(char *why, size_t len)
{
	int fd;

	if (geteuid() != 0) {
		snprintf(why, len, "needs root (euid %u)", geteuid());
		return false;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vnet_probe", 4, 4, 1, NULL);
	if (fd < 0) {
		snprintf(why, len, "BPF unavailable: bpf_map_create: %s",
			 strerror(-fd));
		return false;
	}
	close(fd);
	return true;
}

#define ASSERT_TRUE(actual, name)                                           \
	({                                                                  \
		bool ___ok = (actual);                                      \
		if (!___ok)                                                 \
			test__assert_fail(__FILE__, __LINE__, (name),       \
					  "unexpected false: %s", #actual); \
		___ok;                                                      \
	})

#define ASSERT_FALSE(actual, name)                                         \
	({                                                                 \
		bool ___ok = !(actual);                                    \
		if (!___ok)                                                \
			test__assert_fail(__FILE__, __LINE__, (name),      \
					  "unexpected true: %s", #actual); \
		___ok;                                                     \
	})

/* "<expr> = <actual>, expected <op> <expected>" */
#define TEST__CMP(actual, expected, op, name)                               \
	({                                                                  \
		test_int_t ___act = (test_int_t)(actual);                   \
		test_int_t ___exp = (test_int_t)(expected);                 \
		bool ___ok = ___act op ___exp;                              \
		char ___a[48], ___e[48];                                    \
		if (!___ok)                                                 \
			test__assert_fail(                                  \
				__FILE__, __LINE__, (name),                 \
				"%s = %s, expected %s %s", #actual,         \
				test__fmt_int(___a, sizeof(___a), ___act),  \
				#op,                                        \
				test__fmt_int(___e, sizeof(___e), ___exp)); \
		___ok;                                                      \
	})

#define ASSERT_EQ(actual, expected, name) TEST__CMP(actual, expected, ==, name)
#define ASSERT_NEQ(actual, expected, name) TEST__CMP(actual, expected, !=, name)
#define ASSERT_LT(actual, expected, name) TEST__CMP(actual, expected, <, name)
#define ASSERT_LE(actual, expected, name) TEST__CMP(actual, expected, <=, name)
#define ASSERT_GT(actual, expected, name) TEST__CMP(actual, expected, >, name)
#define ASSERT_GE(actual, expected, name) TEST__CMP(actual, expected, >=, name)

/* 0 is success; a negative value is an error, errno printed with it. */
#define ASSERT_OK(res, name)                                                \
	({                                                                  \
		long long ___res = (long long)(res);                        \
		int ___errno = errno; /* after res: the call sets it */     \
		bool ___ok = ___res == 0;                                   \
		if (!___ok)                                                 \
			test__assert_fail(__FILE__, __LINE__, (name),       \
					  "unexpected error: %lld (errno %d: " \
					  "%s)",                            \
					  ___res, ___errno,                 \
					  strerror(___errno));              \
		___ok;                                                      \
	})

#define ASSERT_ERR(res, name)                                             \
	({                                                                \
		long long ___res = (long long)(res);                      \
		bool ___ok = ___res < 0;                                  \
		if (!___ok)                                               \
			test__assert_fail(__FILE__, __LINE__, (name),     \
					  "unexpected success: %lld", ___res); \
		___ok;                                                    \
	})

/* libbpf 1.x returns NULL and sets errno on error. */
#define ASSERT_OK_PTR(ptr, name)                                            \
	({                                                                  \
		const void *___ptr = (ptr);                                 \
		int ___errno = errno; /* after ptr: the call sets it */     \
		bool ___ok = ___ptr &&                                      \
			     (unsigned long)___ptr < (unsigned long)-4095;  \
		if (!___ok)                                                 \
			test__assert_fail(__FILE__, __LINE__, (name),       \
					  "unexpected pointer %p (errno %d: " \
					  "%s)",                            \
					  ___ptr, ___errno,                 \
					  strerror(___errno));              \
		___ok;                                                      \
	})

#define ASSERT_NULL(ptr, name)                                        \
	({                                                            \
		const void *___ptr = (ptr);                           \
		bool ___ok = !___ptr;                                 \
		if (!___ok)                                           \
			test__assert_fail(__FILE__, __LINE__, (name), \
					  "unexpected pointer %p",    \
					  ___ptr);                    \
		___ok;                                                \
	})

#define ASSERT_STREQ(actual, expected, name)                                 \
	({                                                                   \
		const char *___act = (actual);                               \
		const char *___exp = (expected);                             \
		bool ___ok = ___act && ___exp && !strcmp(___act, ___exp);    \
		if (!___ok)                                                  \
			test__assert_fail(__FILE__, __LINE__, (name),        \
					  "actual \"%s\" != expected \"%s\"", \
					  ___act ? ___act : "(null)",        \
					  ___exp ? ___exp : "(null)");       \
		___ok;                                                       \
	})

#define ASSERT_MEMEQ(actual, expected, len, name)                          \
	({                                                                 \
		const unsigned char *___act = (const void *)(actual);      \
		const unsigned char *___exp = (const void *)(expected);    \
		size_t ___len = (len), ___i = 0;                           \
		while (___i < ___len && ___act[___i] == ___exp[___i])      \
			___i++;                                            \
		if (___i < ___len)                                         \
			test__assert_fail(__FILE__, __LINE__, (name),      \
					  "differ at byte %zu of %zu: "    \
					  "0x%02x != 0x%02x",              \
					  ___i, ___len, ___act[___i],      \
					  ___exp[___i]);                   \
		___i == ___len;                                            \
	})

#endif /* VNET_SELFTESTS_TEST_H */
