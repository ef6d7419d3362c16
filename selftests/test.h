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
 *	PASS: <name> (<seconds> s)
 *	FAIL: <name> (<seconds> s): <reason>     (the first failed assertion)
 *	SKIP: <name>: <reason>
 * (the time is the test's own, from test_start() to test_end()).
 *
 * A test program registers its tests and lets test_main() run them:
 *
 *	static void ipv4(void) { ... ASSERT_*() ... }
 *	VNET_TEST("classify/ipv4", ipv4);
 *	VNET_TEST_TABLE(nr_frames, frame_name, frame_run);  (a test per row)
 *
 *	int main(int argc, char **argv)
 *	{
 *		return test_main(argc, argv, "test_classify", NULL);
 *	}
 *
 * test_main() runs every registered test in the order of the files as they
 * are linked and of the lines in each file, each between test_start() and
 * test_end(), and takes the options of the kernel's test_progs:
 *	-l		list the selected tests' names, run nothing
 *	-t GLOB		run the tests GLOB matches (-a GLOB the same; several
 *			allowed, or GLOB,GLOB); -d GLOB: not those
 *	-n N		run the selection N times, then "# <name>: K/N passed"
 *	-v		verbose (test_main_opts.verbose)
 *	SUBSTRING...	the tests whose name contains one of them
 * A GLOB (fnmatch(3), '*' crosses '/') matches a name, or a group of names:
 * "vnetd", "vnetd/packed" and "vnetd/p*" all select "vnetd/packed/tx_to_tap".
 * selftests/run.sh lists (-l) and selects (-t) tests across every program.
 *
 * Header only: the functions are static inline, and the state is one weak
 * definition, so that a test program built from several files (a file of
 * cases and the helpers it shares with other programs) counts in one place.
 */
#ifndef VNET_SELFTESTS_TEST_H
#define VNET_SELFTESTS_TEST_H

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

struct test_state {
	const char *name;	/* the running test, NULL between tests */
	bool failed;
	bool skipped;
	bool orphan_failed;	/* an assertion failed outside any test */
	bool verbose;		/* -v, when test_main_opts.verbose is NULL */
	struct timespec t0;	/* test_start() */
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
	clock_gettime(CLOCK_MONOTONIC, &test_state.t0);
}

/* "0.013" under a second, "1.8" from one on (selftests/run.sh parses it) */
static inline const char *test__fmt_secs(char *buf, size_t len, double s)
{
	snprintf(buf, len, s < 1 ? "%.3f" : "%.1f", s);
	return buf;
}

/* Seconds since test_start(). */
static inline double test_elapsed(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - test_state.t0.tv_sec) +
	       (double)(t.tv_nsec - test_state.t0.tv_nsec) / 1e9;
}

/* Prints the result line of the current test; true if it passed. */
static inline bool test_end(void)
{
	const char *name = test_state.name ? test_state.name : "(unnamed)";
	bool passed = false;
	char secs[32];

	test__fmt_secs(secs, sizeof(secs), test_elapsed());
	if (test_state.failed) {
		printf("FAIL: %s (%s s): %s\n", name, secs, test_state.reason);
		test_state.nr_failed++;
	} else if (test_state.skipped) {
		printf("SKIP: %s: %s\n", name, test_state.reason);
		test_state.nr_skipped++;
	} else {
		printf("PASS: %s (%s s)\n", name, secs);
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

/* ------------------------------------------------------------------ */
/* Registered tests and test_main()                                    */
/* ------------------------------------------------------------------ */

/*
 * One registration: a test (name, fn) or a table of tests (nr() of them,
 * the i-th named name_of(i) and run by run_one(i)).
 */
struct test_entry {
	const char *name;
	void (*fn)(void);
	unsigned int (*nr)(void);
	const char *(*name_of)(unsigned int i);
	void (*run_one)(unsigned int i);
	const char *file;
	int line;
	unsigned int seq;	/* order of registration (constructors) */
	unsigned int rank;	/* order of the file (its first registration) */
	struct test_entry *next;
};

struct test_registry {
	struct test_entry *head;
	unsigned int nr;
};

__attribute__((weak)) struct test_registry test_registry;

static inline void test__register(struct test_entry *e)
{
	e->seq = test_registry.nr++;
	e->next = test_registry.head;
	test_registry.head = e;
}

#define TEST__CAT2(a, b) a##b
#define TEST__CAT(a, b) TEST__CAT2(a, b)
#define TEST__DEFINE(id, ...) TEST__DEFINE2(id, __VA_ARGS__)
#define TEST__DEFINE2(id, tname, tfn, tnr, tname_of, trun)                   \
	static struct test_entry TEST__CAT(test__entry_, id) = {            \
		.name = (tname),                                            \
		.fn = (tfn),                                                \
		.nr = (tnr),                                                \
		.name_of = (tname_of),                                      \
		.run_one = (trun),                                          \
		.file = __FILE__,                                           \
		.line = __LINE__,                                           \
	};                                                                  \
	__attribute__((constructor)) static void TEST__CAT(test__reg_,      \
							   id)(void)        \
	{                                                                   \
		test__register(&TEST__CAT(test__entry_, id));               \
	}                                                                   \
	extern int test__registered

/*
 * VNET_TEST("group/test", fn): fn runs as the test "group/test", between
 * test_start() and test_end().  At file scope, after fn or its prototype.
 */
#define VNET_TEST(name, fn) TEST__DEFINE(__COUNTER__, name, fn, NULL, NULL, NULL)

/*
 * VNET_TEST_TABLE(nr, name_of, run_one): nr() tests from a table, the i-th
 * named name_of(i) and run by run_one(i).  They stand where the table is
 * registered in the order of the tests.
 */
#define VNET_TEST_TABLE(nr, name_of, run_one) \
	TEST__DEFINE(__COUNTER__, NULL, NULL, nr, name_of, run_one)

/* What a program adds to test_main(); every field may be NULL. */
struct test_main_opts {
	/*
	 * Once, before the first test that runs (not for -l, not when no
	 * test is selected): 0, or a reason in why and > 0 to skip every
	 * test, < 0 to fail every test (each gets its SKIP/FAIL line).
	 */
	int (*setup)(char *why, size_t len);
	/* after the last test, when setup ran */
	void (*teardown)(void);
	/* -v sets it (else test_state.verbose) */
	bool *verbose;
};

struct test__run {
	const char *name;
	const struct test_entry *e;
	unsigned int idx;
	unsigned int passed;
};

static inline int test__entry_cmp(const void *a, const void *b)
{
	const struct test_entry *x = *(const struct test_entry *const *)a;
	const struct test_entry *y = *(const struct test_entry *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The registrations in test order: by file (in the order the files'
 * constructors ran, that is as they were linked), then by line, whatever
 * order a compiler runs the constructors of one file in.
 */
static inline struct test_entry **test__sorted(unsigned int *nr)
{
	struct test_entry **v, *e;
	unsigned int n = 0, i, j;

	v = calloc(test_registry.nr + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (e = test_registry.head; e; e = e->next)
		v[n++] = e;
	for (i = 0; i < n; i++) {
		v[i]->rank = v[i]->seq;
		for (j = 0; j < n; j++)
			if (!strcmp(v[j]->file, v[i]->file) &&
			    v[j]->seq < v[i]->rank)
				v[i]->rank = v[j]->seq;
	}
	qsort(v, n, sizeof(*v), test__entry_cmp);
	*nr = n;
	return v;
}

/*
 * Whether GLOB selects NAME: fnmatch(3) without FNM_PATHNAME ('*' crosses
 * '/'), on the name or on a group of it (GLOB/...).  selftests/select.sh
 * has the same rule for the runner and the shell tests.
 */
static inline bool test_glob_match(const char *glob, const char *name)
{
	char grp[512];

	if (!fnmatch(glob, name, 0))
		return true;
	snprintf(grp, sizeof(grp), "%s/*", glob);
	return !fnmatch(grp, name, 0);
}

struct test__sel {
	char **allow, **deny, **sub;
	unsigned int nr_allow, nr_deny, nr_sub;
};

/* adds each of a comma-separated list of globs */
static inline void test__sel_add(char ***v, unsigned int *n, const char *arg)
{
	const char *p = arg, *end;

	for (; *p; p = *end ? end + 1 : end) {
		char **nv;

		end = strchrnul(p, ',');
		if (end == p)
			continue;
		nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv)
			return;
		*v = nv;
		(*v)[*n] = strndup(p, (size_t)(end - p));
		if ((*v)[*n])
			(*n)++;
	}
}

static inline void test__sel_free(struct test__sel *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_allow; i++)
		free(s->allow[i]);
	for (i = 0; i < s->nr_deny; i++)
		free(s->deny[i]);
	free(s->allow);
	free(s->deny);
	free(s->sub); /* argv's strings */
}

static inline bool test__selected(const struct test__sel *s, const char *name)
{
	unsigned int i;
	bool ok;

	for (i = 0; i < s->nr_deny; i++)
		if (test_glob_match(s->deny[i], name))
			return false;
	ok = !s->nr_allow;
	for (i = 0; !ok && i < s->nr_allow; i++)
		ok = test_glob_match(s->allow[i], name);
	if (!ok || !s->nr_sub)
		return ok;
	for (i = 0; i < s->nr_sub; i++)
		if (strstr(name, s->sub[i]))
			return true;
	return false;
}

static inline void test__usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-l] [-v] [-n N] [-t GLOB]... [-a GLOB]... "
		"[-d GLOB]... [SUBSTRING...]\n"
		"  -l       list the selected tests, run nothing\n"
		"  -t, -a   run the tests GLOB matches (GLOB[,GLOB...])\n"
		"  -d       not the tests GLOB matches\n"
		"  -n N     run the selection N times\n"
		"  -v       verbose\n",
		prog);
}

/*
 * Runs the registered tests that the command line selects; the exit status
 * (test_summary()'s, 2 on a usage error).  PROG names the program in the
 * summary line.
 */
static inline int test_main(int argc, char **argv, const char *prog,
			    const struct test_main_opts *o)
{
	static const struct test_main_opts none;
	struct test__sel sel = { 0 };
	struct test__run *runs = NULL;
	struct test_entry **ents;
	unsigned int nents, nruns = 0, i, j, k, reps = 1;
	bool list = false, setup_done = false;
	int opt, setup_rc = 0;
	char why[512] = "";

	if (!o)
		o = &none;
	while ((opt = getopt(argc, argv, "lt:a:d:n:vh")) != -1) {
		switch (opt) {
		case 'l':
			list = true;
			break;
		case 't':
		case 'a':
			test__sel_add(&sel.allow, &sel.nr_allow, optarg);
			break;
		case 'd':
			test__sel_add(&sel.deny, &sel.nr_deny, optarg);
			break;
		case 'n':
			reps = (unsigned int)strtoul(optarg, NULL, 10);
			if (!reps) {
				test__usage(prog);
				exit(2);
			}
			break;
		case 'v':
			if (o->verbose)
				*o->verbose = true;
			test_state.verbose = true;
			break;
		default:
			test__usage(prog);
			exit(2);
		}
	}
	for (; optind < argc; optind++) {
		char **nv = realloc(sel.sub, (sel.nr_sub + 1) * sizeof(*nv));

		if (!nv)
			exit(1);
		sel.sub = nv;
		sel.sub[sel.nr_sub++] = argv[optind];
	}

	ents = test__sorted(&nents);
	if (!ents) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (i = 0; i < nents; i++) {
		const struct test_entry *e = ents[i];
		unsigned int n = e->nr ? e->nr() : 1;

		for (k = 0; k < n; k++) {
			const char *name = e->nr ? e->name_of(k) : e->name;
			struct test__run *nr;

			if (!test__selected(&sel, name))
				continue;
			nr = realloc(runs, (nruns + 1) * sizeof(*runs));
			if (!nr) {
				fprintf(stderr, "%s: out of memory\n", prog);
				exit(1);
			}
			runs = nr;
			runs[nruns++] = (struct test__run){ name, e, k, 0 };
		}
	}
	test__sel_free(&sel);
	free(ents);
	if (list) {
		for (i = 0; i < nruns; i++)
			printf("%s\n", runs[i].name);
		fflush(stdout);
		free(runs);
		return 0;
	}

	for (j = 0; j < reps; j++) {
		for (i = 0; i < nruns; i++) {
			const struct test_entry *e = runs[i].e;

			if (!setup_done) {
				setup_done = true;
				if (o->setup)
					setup_rc = o->setup(why, sizeof(why));
			}
			test_start(runs[i].name);
			if (setup_rc > 0)
				test_skip("%s", why);
			else if (setup_rc < 0)
				test_fail("%s", why);
			else if (e->nr)
				e->run_one(runs[i].idx);
			else
				e->fn();
			if (test_end())
				runs[i].passed++;
		}
	}
	if (setup_done && o->teardown)
		o->teardown();
	if (reps > 1)
		for (i = 0; i < nruns; i++)
			printf("# %s: %u/%u passed\n", runs[i].name,
			       runs[i].passed, reps);
	free(runs);
	return test_summary(prog);
}

#endif /* VNET_SELFTESTS_TEST_H */
