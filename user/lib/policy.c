// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Replaceable batching policy (docs/policy.md).
 *
 * The classifier's vnet_policy_window() is a weak global function.  A
 * policy object defines a strong one; vnet_skel_open() links the object
 * with the embedded classifier ELF with libbpf's static linker (what
 * `bpftool gen object` does at build time), so the strong definition
 * replaces the built-in in every program, and the policy's extern maps
 * resolve to the classifier's own.  The result is opened through the
 * classifier's skeleton, so loading and attaching stay the same.
 *
 * Why not freplace (BPF_PROG_TYPE_EXT) or a tail call: extension and
 * fentry programs need BPF trampolines, which the kernels vnet targets may
 * refuse (this project's CI kernel answers EPERM even to a minimal EXT
 * program), and a tail call needs the hook's context, which the shared
 * accounting code does not have.  Linking needs nothing from the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "maps_int.h"
#include "vnet.skel.h"

#define VNET_POLICY_FUNC "vnet_policy_window"

#ifndef EM_BPF
#define EM_BPF 247
#endif

/*
 * PATH is a BPF object that defines a strong global vnet_policy_window()
 * and no programs; err says what is wrong otherwise.
 */
static int policy_check(const char *path, struct vnet_err *err)
{
	bool found = false, weak = false;
	const char *name, *bad = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, i, n;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	Elf *elf;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "policy object %s: %s", path, strerror(errno));
		return ret;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_BPF ||
	    eh.e_type != ET_REL || elf_getshdrstrndx(elf, &shstrndx)) {
		vnet_err_set(err, "%s is not a BPF object file (clang -target bpf -c)",
			     path);
		ret = -EINVAL;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_size && name &&
		    strcmp(name, ".text"))
			bad = name;
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		n = d && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || strcmp(name, VNET_POLICY_FUNC) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			if (GELF_ST_BIND(sym.st_info) == STB_GLOBAL)
				found = true;
			else
				weak = true;
		}
	}
	if (bad) {
		vnet_err_set(err, "%s: a policy object has no programs, only %s() (found section '%s'); see docs/policy.md",
			     path, VNET_POLICY_FUNC, bad);
		ret = -EINVAL;
	} else if (!found) {
		vnet_err_set(err, "%s defines no %s %s() to replace the built-in policy with (global, not static%s); see docs/policy.md",
			     path, weak ? "strong" : "global", VNET_POLICY_FUNC,
			     weak ? ", not weak" : "");
		ret = -EINVAL;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/*
 * libbpf's linker says why it refuses an object only through libbpf's
 * print callback: keep its last warning for the error message, and pass
 * everything on to the callback the application installed.  (libbpf's
 * print callback is process-wide: not thread-safe, like libbpf_set_print.)
 */
static libbpf_print_fn_t linker_prev_print;
static char linker_warning[256];

static int linker_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	va_list copy;
	size_t n;

	if (level == LIBBPF_WARN) {
		va_copy(copy, ap);
		vsnprintf(linker_warning, sizeof(linker_warning), fmt, copy);
		va_end(copy);
		if (!strncmp(linker_warning, "libbpf: ", 8))
			memmove(linker_warning, linker_warning + 8,
				strlen(linker_warning + 8) + 1);
		n = strlen(linker_warning);
		while (n && linker_warning[n - 1] == '\n')
			linker_warning[--n] = '\0';
	}
	return linker_prev_print ? linker_prev_print(level, fmt, ap) : 0;
}

/* "/proc/self/fd/N" of a new memfd */
static int memfd_path(const char *name, char *path, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/*
 * The classifier ELF with the policy object linked in, in a malloc()ed
 * buffer.
 */
static int policy_link(const char *policy, void **buf, size_t *size,
		       struct vnet_err *err)
{
	char in_path[64], out_path[64];
	struct bpf_linker *linker = NULL;
	const void *elf;
	struct stat st;
	int in = -1, out = -1, ret;
	size_t sz;
	ssize_t n;

	*buf = NULL;
	in = memfd_path("vnet-classifier", in_path, sizeof(in_path));
	out = memfd_path("vnet-linked", out_path, sizeof(out_path));
	if (in < 0 || out < 0) {
		ret = in < 0 ? in : out;
		vnet_err_set(err, "memfd_create: %s", strerror(-ret));
		goto out;
	}
	elf = vnet__elf_bytes(&sz);
	if (write(in, elf, sz) != (ssize_t)sz) {
		ret = -EIO;
		vnet_err_set(err, "cannot write the classifier object to a memfd");
		goto out;
	}
	linker = bpf_linker__new(out_path, NULL);
	if (!linker) {
		ret = -errno;
		vnet_err_set(err, "cannot start libbpf's linker: %s",
			     strerror(errno));
		goto out;
	}
	linker_warning[0] = '\0';
	linker_prev_print = libbpf_set_print(linker_print);
	ret = bpf_linker__add_file(linker, in_path, NULL);
	if (!ret)
		ret = bpf_linker__add_file(linker, policy, NULL);
	if (!ret)
		ret = bpf_linker__finalize(linker);
	libbpf_set_print(linker_prev_print);
	if (ret) {
		vnet_err_set(err, "cannot link policy %s with the classifier: %s%s%s (%s() must have the built-in's signature and vnet's maps must be declared extern, see docs/policy.md)",
			     policy, strerror(-ret),
			     linker_warning[0] ? ": " : "", linker_warning,
			     VNET_POLICY_FUNC);
		goto out;
	}
	if (fstat(out, &st)) {
		ret = -errno;
		goto out;
	}
	*buf = malloc((size_t)st.st_size);
	if (!*buf) {
		ret = -ENOMEM;
		goto out;
	}
	n = pread(out, *buf, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		ret = -EIO;
		vnet_err_set(err, "cannot read the linked object back");
		free(*buf);
		*buf = NULL;
		goto out;
	}
	*size = (size_t)st.st_size;
	ret = 0;
out:
	bpf_linker__free(linker);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

/*
 * vnet_core_btf() for the classifier: made from the embedded object's BTF
 * on the first call (the programs' ___vnet types are vnet's, whatever
 * policy is linked in).
 */
const char *vnet_skel_core_btf(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static bool made;
	struct vnet *s;

	pthread_mutex_lock(&lock);
	if (!made) {
		made = true;
		s = vnet__open();
		if (s) {
			vnet_core_btf(bpf_object__btf(s->obj));
			vnet__destroy(s);
		}
	}
	pthread_mutex_unlock(&lock);
	return vnet_core_btf(NULL);
}

struct vnet *vnet_skel_open(const char *policy, struct vnet_err *err)
{
	return vnet_skel_open_core(policy, NULL, err);
}

struct vnet *vnet_skel_open_core(const char *policy, const char *btf_path,
				 struct vnet_err *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct vnet *skel;
	void *buf = NULL;
	size_t size = 0;
	int ret;

	oo.btf_custom_path = btf_path;

	if (policy && strcmp(policy, VNET_POLICY_BUILTIN)) {
		ret = policy_check(policy, err);
		if (!ret)
			ret = policy_link(policy, &buf, &size, err);
		if (ret) {
			errno = -ret;
			return NULL;
		}
	}
	if (!buf) {
		skel = vnet__open_opts(&oo);
		if (!skel)
			vnet_err_set(err, "cannot open the embedded BPF object: %s",
				     strerror(errno));
		return skel;
	}
	/* vnet__open_opts() with the linked ELF instead of the embedded one */
	skel = calloc(1, sizeof(*skel));
	if (!skel) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = vnet__create_skeleton(skel);
	if (ret)
		goto fail;
	skel->skeleton->data = buf;
	skel->skeleton->data_sz = size;
	ret = bpf_object__open_skeleton(skel->skeleton, &oo);
	if (ret) {
		vnet_err_set(err, "cannot open the classifier linked with policy %s: %s",
			     policy, strerror(-ret));
		goto fail;
	}
	return skel;
fail:
	if (skel && skel->skeleton && skel->skeleton->data == buf) {
		vnet_skel_destroy(skel); /* frees buf */
	} else {
		vnet__destroy(skel);
		free(buf);
	}
	errno = -ret;
	return NULL;
}

void vnet_skel_destroy(struct vnet *skel)
{
	const void *embedded;
	void *linked = NULL;
	size_t sz;

	if (!skel)
		return;
	embedded = vnet__elf_bytes(&sz);
	if (skel->skeleton && skel->skeleton->data != embedded)
		linked = (void *)skel->skeleton->data;
	vnet__destroy(skel);
	free(linked);
}

int vnet_policy_record(const char *ifname, const char *policy,
		       struct vnet_err *err)
{
	struct vnet_policy_info info = {};
	char path[PATH_MAX], *abs;
	__u32 key = 0;
	int fd, ret;

	if (!policy || !strcmp(policy, VNET_POLICY_BUILTIN))
		return 0;
	/*
	 * realpath() writes up to PATH_MAX bytes: never into info.path (256)
	 * itself; a longer path is recorded cut, as the record is for people
	 */
	abs = realpath(policy, NULL);
	snprintf(info.path, sizeof(info.path), "%s", abs ? abs : policy);
	free(abs);
	ret = vnet_pin_path(path, sizeof(path), ifname, VNET_PIN_POLICY);
	if (ret)
		return ret;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vnet_policy", sizeof(key),
			    sizeof(info.path), 1, NULL);
	if (fd < 0) {
		vnet_err_set(err, "cannot create the policy record: %s",
			     strerror(-fd));
		return fd;
	}
	if (bpf_map_update_elem(fd, &key, info.path, BPF_ANY) ||
	    bpf_obj_pin(fd, path)) {
		ret = -errno;
		vnet_err_set(err, "cannot pin %s: %s", path, strerror(errno));
	}
	close(fd);
	return ret;
}

int vnet_policy_query(const char *ifname, struct vnet_policy_info *info,
		      struct vnet_err *err)
{
	struct vnet_map m;
	__u32 key = 0;
	int ret;

	memset(info, 0, sizeof(*info));
	ret = vnet_map_get_any_ns(ifname, VNET_MAP_POLICY, 0, &m, err);
	if (ret == -ENOENT)
		return 0; /* the built-in */
	if (ret)
		return ret;
	if (bpf_map_lookup_elem(m.fd, &key, info->path)) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot read the policy record: %s",
			     ifname, strerror(errno));
	}
	info->path[sizeof(info->path) - 1] = '\0';
	vnet_map_put(&m);
	return ret;
}
