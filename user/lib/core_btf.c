// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel types vnet's CO-RE relocations name, cut out of the kernel's
 * BTF once per process (libvnet.h, vnet_core_btf()).
 *
 * Without it libbpf parses /sys/kernel/btf/vmlinux (5-6 MB, 100k+ types)
 * for every object it loads whose programs carry CO-RE relocations: in a
 * vnetd with many ports, once per port, and that parse was most of a
 * port's start-up.  Here it is parsed once, and for every struct or union
 * of the object's own BTF whose name carries a flavour (`net_device___vnet`)
 * the kernel's type of the same name is written into a new BTF with just
 * the members the local type declares: same names, the kernel's offsets
 * (members found through anonymous structs and unions too, which end up
 * direct members at their absolute offset), types of the same kind
 * (integers as the kernel has them, pointers to the types cut the same
 * way or to void, arrays of integers, nested structs cut alike).  libbpf
 * takes that as `btf_custom_path` and relocates against it, as it would
 * against the kernel's BTF: the relocated offsets are the kernel's.  A
 * member the kernel does not have is left out (its relocation fails as it
 * would against the kernel's BTF); a bitfield or a kind not handled makes
 * the cut fail, and libbpf reads the kernel's BTF itself as before.
 *
 * The kernel's BTF was needed for one more thing: a tp_btf program is
 * loaded with the BTF id of its tracepoint (`btf_trace_net_dev_start_xmit`),
 * and libbpf parses the kernel's BTF for any object with such a program.
 * The id is looked up here in the same parse, and the section gets a
 * handler of vnet's (libbpf_register_prog_handler()): the program is
 * opened as a raw tracepoint one, which needs no kernel BTF, and loaded
 * as what it is, BPF_PROG_TYPE_TRACING / BPF_TRACE_RAW_TP with that id
 * (tp_prepare()), as libbpf would have loaded it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"

#define MEMO_MAX 64
#define DEPTH_MAX 8
#define MEMBERS_MAX 64

struct cut {
	const struct btf *l;	/* the object's */
	const struct btf *k;	/* the kernel's */
	struct btf *o;		/* being written */
	__u32 memo_k[MEMO_MAX];	/* kernel composite ids cut so far ... */
	int memo_o[MEMO_MAX];	/* ... and their ids in o */
	unsigned int nmemo;
	unsigned int depth;
};

/* past typedefs and modifiers */
static const struct btf_type *skip(const struct btf *b, __u32 *id)
{
	const struct btf_type *t = btf__type_by_id(b, *id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		*id = t->type;
		t = btf__type_by_id(b, *id);
	}
	return t;
}

/*
 * Member NAME of the kernel's composite ID, directly or inside anonymous
 * members: its type in *TYPE, its bit offset from ID's start added to
 * *OFF.  -ENOENT: none; -EOPNOTSUPP: a bitfield.
 */
static int find_member(const struct btf *b, __u32 id, const char *name,
		       __u32 *type, __u32 *off)
{
	const struct btf_type *t = skip(b, &id);
	const struct btf_member *m;
	unsigned int i;

	if (!t || !btf_is_composite(t))
		return -ENOENT;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(b, m->name_off);
		__u32 sub = 0;

		if (mn && mn[0]) {
			if (strcmp(mn, name))
				continue;
			if (btf_member_bitfield_size(t, i))
				return -EOPNOTSUPP;
			*type = m->type;
			*off += btf_member_bit_offset(t, i);
			return 0;
		}
		if (!find_member(b, m->type, name, type, &sub)) {
			*off += btf_member_bit_offset(t, i) + sub;
			return 0;
		}
	}
	return -ENOENT;
}

static int cut_composite(struct cut *c, __u32 lid, __u32 kid);

/* a type in o for the local member type LID against the kernel's KID */
static int cut_type(struct cut *c, __u32 lid, __u32 kid)
{
	const struct btf_type *lt = skip(c->l, &lid), *kt = skip(c->k, &kid);
	const char *name;

	if (!kt)
		return -EINVAL;
	name = btf__name_by_offset(c->k, kt->name_off);
	if (btf_is_int(kt))
		return btf__add_int(c->o, name && name[0] ? name : "int",
				    (size_t)kt->size, btf_int_encoding(kt));
	if (btf_is_enum(kt) || btf_is_enum64(kt))
		return btf__add_int(c->o, "int", (size_t)kt->size, 0);
	if (btf_is_ptr(kt)) {
		__u32 lp = lt && btf_is_ptr(lt) ? lt->type : 0, kp = kt->type;
		const struct btf_type *ltp = lp ? skip(c->l, &lp) : NULL;
		const struct btf_type *ktp = skip(c->k, &kp);
		int to = 0;

		if (ltp && ktp && btf_is_composite(ltp) && btf_is_composite(ktp)) {
			to = cut_composite(c, lp, kp);
			if (to < 0)
				return to;
		}
		return btf__add_ptr(c->o, to);
	}
	if (btf_is_array(kt)) {
		const struct btf_array *a = btf_array(kt);
		__u32 e = a->type;
		const struct btf_type *et = skip(c->k, &e);
		int elem, idx;

		if (!et || !btf_is_int(et))
			return -EOPNOTSUPP;
		elem = cut_type(c, 0, e);
		idx = elem < 0 ? elem : btf__add_int(c->o, "int", 4, BTF_INT_SIGNED);
		if (idx < 0)
			return idx;
		return btf__add_array(c->o, idx, elem, a->nelems);
	}
	if (btf_is_composite(kt) && lt && btf_is_composite(lt))
		return cut_composite(c, lid, kid);
	return -EOPNOTSUPP;
}

/* the kernel's composite KID with the members of the local LID */
static int cut_composite(struct cut *c, __u32 lid, __u32 kid)
{
	const struct btf_type *lt = skip(c->l, &lid), *kt = skip(c->k, &kid);
	const char *mname[MEMBERS_MAX];
	__u32 moff[MEMBERS_MAX];
	int mtype[MEMBERS_MAX];
	const struct btf_member *m;
	unsigned int i, n = 0;
	int id;

	if (!lt || !kt || !btf_is_composite(lt) || !btf_is_composite(kt))
		return -EINVAL;
	for (i = 0; i < c->nmemo; i++)
		if (c->memo_k[i] == kid)
			return c->memo_o[i];
	if (c->depth >= DEPTH_MAX || btf_vlen(lt) > MEMBERS_MAX ||
	    c->nmemo == MEMO_MAX)
		return -E2BIG;
	c->depth++;
	m = btf_members(lt);
	for (i = 0; i < btf_vlen(lt); i++, m++) {
		const char *name = btf__name_by_offset(c->l, m->name_off);
		__u32 ktype = 0, off = 0;
		int ret;

		if (!name || !name[0]) {
			c->depth--;
			return -EOPNOTSUPP; /* vnet's local types name every member */
		}
		ret = find_member(c->k, kid, name, &ktype, &off);
		if (ret == -ENOENT)
			continue;
		if (!ret)
			ret = cut_type(c, m->type, ktype);
		if (ret < 0) {
			c->depth--;
			return ret;
		}
		mname[n] = name;
		moff[n] = off;
		mtype[n++] = ret;
	}
	c->depth--;
	/* the fields follow their struct directly: their types came first */
	id = btf_is_union(kt) ?
		     btf__add_union(c->o, btf__name_by_offset(c->k, kt->name_off),
				    kt->size) :
		     btf__add_struct(c->o, btf__name_by_offset(c->k, kt->name_off),
				     kt->size);
	for (i = 0; id >= 0 && i < n; i++) {
		int ret = btf__add_field(c->o, mname[i], mtype[i], moff[i], 0);

		if (ret < 0)
			id = ret;
	}
	if (id < 0)
		return id;
	c->memo_k[c->nmemo] = kid;
	c->memo_o[c->nmemo++] = id;
	return id;
}

/* the tp_btf sections of vnet's objects (bpf/tp_xmit.bpf.c, xmit_dispatch) */
#define TP_NAME "net_dev_start_xmit"
#define TP_SEC "tp_btf/" TP_NAME

/* loads a TP_SEC program as libbpf would, with the id found in the cut */
static int tp_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *o,
		      long cookie)
{
	int ret = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);

	if (ret)
		return ret;
	o->expected_attach_type = BPF_TRACE_RAW_TP;
	o->attach_btf_obj_fd = 0;
	o->attach_btf_id = (__u32)cookie;
	return 0;
}

static void tp_handler(const struct btf *k)
{
	int id = btf__find_by_name_kind(k, "btf_trace_" TP_NAME,
					BTF_KIND_TYPEDEF);
	LIBBPF_OPTS(libbpf_prog_handler_opts, ho,
		    .prog_prepare_load_fn = tp_prepare);

	if (id <= 0)
		return;
	ho.cookie = id;
	libbpf_register_prog_handler(TP_SEC, BPF_PROG_TYPE_RAW_TRACEPOINT,
				     BPF_TRACE_RAW_TP, &ho);
}

/* the cut of every flavoured composite of LOCAL, into a memfd: its fd */
static int core_btf_make(const struct btf *local)
{
	struct cut c = { .l = local };
	const void *raw;
	__u32 id, n;
	int fd = -1, ret = 0;
	__u32 size;

	c.k = btf__load_vmlinux_btf();
	if (!c.k)
		return -errno;
	c.o = btf__new_empty();
	if (!c.o) {
		ret = -errno;
		goto out;
	}
	n = btf__type_cnt(local);
	for (id = 1; !ret && id < n; id++) {
		const struct btf_type *t = btf__type_by_id(local, id);
		const char *name = btf__name_by_offset(local, t->name_off);
		const char *fl = name ? strstr(name, "___") : NULL;
		char base[128];
		int kid;

		if (!btf_is_composite(t) || !fl || fl == name ||
		    (size_t)(fl - name) >= sizeof(base))
			continue;
		snprintf(base, sizeof(base), "%.*s", (int)(fl - name), name);
		kid = btf__find_by_name_kind(c.k, base,
					     btf_is_union(t) ? BTF_KIND_UNION :
							       BTF_KIND_STRUCT);
		if (kid < 0)
			continue; /* not in this kernel: as against its BTF */
		ret = cut_composite(&c, id, (__u32)kid);
		ret = ret < 0 ? ret : 0;
	}
	if (ret)
		goto out;
	raw = btf__raw_data(c.o, &size);
	if (!raw) {
		ret = -errno;
		goto out;
	}
	fd = memfd_create("vnet-core-btf", MFD_CLOEXEC);
	if (fd < 0 || write(fd, raw, size) != (ssize_t)size) {
		ret = fd < 0 ? -errno : -EIO;
		if (fd >= 0)
			close(fd);
		fd = -1;
		goto out;
	}
	/* only with the cut: it is what spares the objects the kernel's BTF */
	tp_handler(c.k);
out:
	btf__free(c.o);
	btf__free((struct btf *)c.k);
	return fd >= 0 ? fd : ret;
}

static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static bool core_tried;
static char core_path[32];

const char *vnet_core_btf(const struct btf *local)
{
	const char *p;
	int fd;

	pthread_mutex_lock(&core_lock);
	if (!core_tried && local) {
		core_tried = true;
		fd = core_btf_make(local);
		if (fd >= 0)
			snprintf(core_path, sizeof(core_path),
				 "/proc/self/fd/%d", fd);
	}
	p = core_path[0] ? core_path : NULL;
	pthread_mutex_unlock(&core_lock);
	return p;
}

/*
 * A BTF with no types, for an object loaded without its programs: libbpf
 * relocates no program that is not loaded, and a custom BTF spares it
 * the kernel's (5-6 MB parsed per object, most of such a load)
 */
const char *vnet_empty_btf(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char path[32];
	static bool tried;
	struct btf *b;
	const void *raw;
	__u32 size;
	int fd;

	pthread_mutex_lock(&lock);
	if (!tried) {
		tried = true;
		b = btf__new_empty();
		raw = b ? btf__raw_data(b, &size) : NULL;
		fd = raw ? memfd_create("vnet-empty-btf", MFD_CLOEXEC) : -1;
		if (fd >= 0 && write(fd, raw, size) != (ssize_t)size) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0)
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		btf__free(b);
	}
	pthread_mutex_unlock(&lock);
	return path[0] ? path : NULL;
}
