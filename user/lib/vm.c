// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The VM a tap belongs to: the vm map (struct vnet_vm, include/vnet/abi.h),
 * one mmapable entry written whole under its gen, as the limits are
 * (limit.c).  The exporter keeps it mapped and reads its gen at each
 * scrape without a syscall, building its vm label again only when the gen
 * changed.  A name is stored as given when it fits and is UTF-8: the
 * exporter escapes it as the text exposition format says.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "libvnet.h"
#include "maps_int.h"

/* the length of the UTF-8 sequence at S, 0 when it is none */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	__u32 cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	cp = s[0] & (0x7f >> n); /* the lead byte's bits */
	/* a NUL ends the loop too: it is no continuation byte */
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

int vnet_vm_check(const char *name, struct vnet_err *err)
{
	size_t len = strlen(name), i, n;

	if (len > VNET_VM_NAME_MAX) {
		vnet_err_set(err,
			     "the VM name is %zu bytes long, more than the %d a tap's vm map holds (every libvirt domain's name fits: libvirt keeps a running domain in /run/libvirt/qemu/NAME.xml); give a shorter name",
			     len, VNET_VM_NAME_MAX);
		return -EINVAL;
	}
	for (i = 0; i < len; i += n) {
		n = utf8_len((const unsigned char *)name + i);
		if (!n) {
			vnet_err_set(err,
				     "the VM name is not UTF-8 (byte %zu is 0x%02x), and Prometheus' label values are UTF-8: give the name in UTF-8 (iconv -t UTF-8)",
				     i + 1, (unsigned char)name[i]);
			return -EINVAL;
		}
	}
	return 0;
}

int vnet_vm_read(const struct vnet_vm *mem, struct vnet_vm *out)
{
	int ret = vnet_seq_read(&mem->gen, mem, out, sizeof(*out), &out->gen);

	out->name[VNET_VM_NAME_MAX] = '\0';
	return ret;
}

void vnet_vm_write(struct vnet_vm *e, const char *name)
{
	size_t len = strnlen(name, VNET_VM_NAME_MAX);
	__u32 g = vnet_seq_begin(&e->gen);

	memcpy(e->name, name, len);
	/* zero after it: bpftool map dump shows a string */
	memset(e->name + len, 0, sizeof(e->name) - len);
	vnet_seq_end(&e->gen, g);
}

/*
 * IFNAME has pins (its info map): attached, by a vnet without vm maybe
 * (stat(): vnetd's sandbox allows it, not access())
 */
static bool attached(const char *ifname)
{
	char path[PATH_MAX];
	struct stat sb;

	return !vnet_pin_path(path, sizeof(path), ifname,
			      vnet_map_name(VNET_MAP_INFO)) &&
	       !stat(path, &sb);
}

int vnet_vm_get(const char *ifname, char *name, struct vnet_err *err)
{
	struct vnet_map m;
	struct vnet_vm v;
	int ret;

	name[0] = '\0';
	/* read only, as status reads every device's pins */
	ret = vnet_map_get_any_ns(ifname, VNET_MAP_VM, VNET_MAP_MMAP, &m, err);
	if (ret == -ENOENT && attached(ifname)) {
		if (err)
			err->msg[0] = '\0';
		return 0; /* attached by a vnet without the vm map: none */
	}
	if (ret)
		return ret;
	ret = vnet_vm_read(m.mem, &v);
	if (!ret)
		memcpy(name, v.name, sizeof(v.name));
	else
		vnet_err_set(err, "%s: the vm map is being written (retry)",
			     ifname);
	vnet_map_put(&m);
	return ret;
}

int vnet_vm_set(const char *ifname, const char *name, struct vnet_err *err)
{
	char ns[NAME_MAX + 8];
	struct vnet_map m;
	int ret;

	ret = vnet_vm_check(name, err);
	if (ret)
		return ret;
	ret = vnet_map_get(ifname, VNET_MAP_VM, VNET_MAP_WRITE, &m, err);
	if (ret == -ENOENT && attached(ifname)) {
		vnet_hint_netns_dev(ifname, ns, sizeof(ns));
		vnet_err_set(err,
			     "%s: attached by a vnet without the vm map, which has no place for a VM's name; detach and attach again ('vnetctl%s detach %s', then 'vnetctl%s attach %s --vm NAME')",
			     ifname, ns, ifname, ns, ifname);
		return -EPROTO;
	}
	if (ret)
		return ret;
	vnet_vm_write(m.mem, name);
	vnet_map_put(&m);
	return 0;
}
