// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A port's rate limits (the "limits" map, struct vnet_limit, one entry
 * per direction): tc's words for rates and sizes, checked once here for
 * vnetctl and vnetd alike, and the entries read and written with the
 * map's sequence count (gen odd while a writer is in the middle), so
 * that vnetd, reading with plain loads, never takes half of a change.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libvnet.h"
#include "maps_int.h"

struct unit {
	const char *name;
	double mult; /* to bytes (sizes) or bytes per second (rates) */
};

/* tc(8)'s rate units: bits by default, "bps" are bytes */
static const struct unit rate_units[] = {
	{ "", 1.0 / 8 },	 { "bit", 1.0 / 8 },
	{ "kbit", 1e3 / 8 },	 { "mbit", 1e6 / 8 },
	{ "gbit", 1e9 / 8 },	 { "tbit", 1e12 / 8 },
	{ "kibit", 1024.0 / 8 }, { "mibit", 1048576.0 / 8 },
	{ "gibit", 1073741824.0 / 8 },
	{ "bps", 1 },		 { "kbps", 1e3 },
	{ "mbps", 1e6 },	 { "gbps", 1e9 },
	{ "tbps", 1e12 },	 { "kibps", 1024 },
	{ "mibps", 1048576 },	 { "gibps", 1073741824 },
};

/* tc(8)'s size units: bytes by default, k/m/g are 1024s */
static const struct unit size_units[] = {
	{ "", 1 },	       { "b", 1 },
	{ "k", 1024 },	       { "kb", 1024 },
	{ "m", 1048576 },      { "mb", 1048576 },
	{ "g", 1073741824 },   { "gb", 1073741824 },
	{ "kbit", 1024.0 / 8 }, { "mbit", 1048576.0 / 8 },
	{ "gbit", 1073741824.0 / 8 },
};

/* packet counts take no unit but k/m (thousands, as tc's pkts_rate) */
static const struct unit count_units[] = {
	{ "", 1 },
	{ "k", 1e3 },
	{ "m", 1e6 },
};

static void units_list(char *buf, size_t len, const struct unit *u,
		       size_t n)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		if (!u[i].name[0])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? ", " : "", u[i].name);
	}
}

static int parse_units(const char *what, const char *s, const struct unit *u,
		       size_t n, __u64 *out, struct vnet_err *err)
{
	char list[256];
	const char *p;
	char *end;
	double v, r;
	size_t i;

	p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-') {
		vnet_err_set(err, "%s '%s': negative; give a positive number",
			     what, s);
		return -ERANGE;
	}
	if (!isdigit((unsigned char)*p) && *p != '.') {
		vnet_err_set(err, "%s '%s': not a number", what, s);
		return -EINVAL;
	}
	errno = 0;
	v = strtod(p, &end);
	if (errno || end == p) {
		vnet_err_set(err, "%s '%s': not a number", what, s);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (strcasecmp(end, u[i].name))
			continue;
		r = v * u[i].mult;
		if (r >= 18446744073709551615.0) {
			vnet_err_set(err, "%s '%s': over 2^64", what, s);
			return -ERANGE;
		}
		if (r < 1) {
			vnet_err_set(err, "%s '%s': 0; to remove a limit use 'vnetctl limit clear DEV DIR' (or leave the key out)",
				     what, s);
			return -ERANGE;
		}
		*out = (__u64)(r + 0.5);
		return 0;
	}
	units_list(list, sizeof(list), u, n);
	vnet_err_set(err, "%s '%s': unknown unit '%s' (units: %s)", what, s,
		     end, list);
	return -EINVAL;
}

int vnet_rate_parse(const char *s, __u64 *bytes_per_sec, struct vnet_err *err)
{
	return parse_units("rate", s, rate_units,
			   sizeof(rate_units) / sizeof(rate_units[0]),
			   bytes_per_sec, err);
}

int vnet_size_parse(const char *what, const char *s, __u64 *bytes,
		    struct vnet_err *err)
{
	return parse_units(what, s, size_units,
			   sizeof(size_units) / sizeof(size_units[0]), bytes,
			   err);
}

int vnet_count_parse(const char *what, const char *s, __u64 *n,
		     struct vnet_err *err)
{
	return parse_units(what, s, count_units,
			   sizeof(count_units) / sizeof(count_units[0]), n,
			   err);
}

int vnet_limit_word(struct vnet_limit *l, const char *word, const char *val,
		    struct vnet_err *err)
{
	if (!strcmp(word, "rate"))
		return vnet_rate_parse(val, &l->bytes_per_sec, err);
	if (!strcmp(word, "burst"))
		return vnet_size_parse("burst", val, &l->bytes_burst, err);
	if (!strcmp(word, "initial"))
		return vnet_size_parse("initial", val, &l->bytes_one_time, err);
	if (!strcmp(word, "pkts-rate"))
		return vnet_count_parse("pkts-rate", val, &l->frames_per_sec,
					err);
	if (!strcmp(word, "pkts-burst"))
		return vnet_count_parse("pkts-burst", val, &l->frames_burst, err);
	if (!strcmp(word, "pkts-initial"))
		return vnet_count_parse("pkts-initial", val, &l->frames_one_time,
					err);
	vnet_err_set(err, "unknown parameter '%s' (rate, burst, initial, pkts-rate, pkts-burst, pkts-initial)",
		     word);
	return -ENOENT;
}

int vnet_limit_check(struct vnet_limit *l, const char *dir,
		     struct vnet_err *err)
{
	if (!l->bytes_per_sec && (l->bytes_burst || l->bytes_one_time)) {
		vnet_err_set(err, "%s: a burst without a rate: give 'rate' too",
			     dir);
		return -EINVAL;
	}
	if (!l->frames_per_sec && (l->frames_burst || l->frames_one_time)) {
		vnet_err_set(err, "%s: pkts-burst without pkts-rate: give 'pkts-rate' too",
			     dir);
		return -EINVAL;
	}
	if (l->bytes_per_sec && !l->bytes_burst) {
		/* 10 ms of the rate, at least a GSO frame's 64 KiB */
		l->bytes_burst = l->bytes_per_sec / 100;
		if (l->bytes_burst < VNET_LIMIT_BURST_DEFAULT)
			l->bytes_burst = VNET_LIMIT_BURST_DEFAULT;
	}
	if (l->bytes_per_sec && l->bytes_burst < VNET_LIMIT_BURST_MIN) {
		vnet_err_set(err, "%s: burst %" PRIu64 " is smaller than one %u-byte frame: the bucket would never pass a full-sized frame (give at least 'burst %u', better 64k)",
			     dir, (uint64_t)l->bytes_burst, VNET_LIMIT_BURST_MIN,
			     VNET_LIMIT_BURST_MIN);
		return -EINVAL;
	}
	if (l->frames_per_sec && !l->frames_burst) {
		l->frames_burst = l->frames_per_sec / 100;
		if (l->frames_burst < 64)
			l->frames_burst = 64;
	}
	return 0;
}

int vnet_limit_get(const char *ifname, struct vnet_limit out[VNET_DIR_MAX],
		   struct vnet_err *err)
{
	struct vnet_map m = VNET_MAP_INIT;
	int ret;

	ret = vnet_map_get(ifname, VNET_MAP_LIMITS, VNET_MAP_MMAP, &m, err);
	if (ret)
		return ret;
	ret = vnet_limit_read(m.mem, out);
	vnet_map_put(&m);
	if (ret)
		vnet_err_set(err, "%s: the limits map is being written (retry)",
			     ifname);
	return ret;
}

int vnet_limit_read(const struct vnet_limit *mem,
		    struct vnet_limit out[VNET_DIR_MAX])
{
	unsigned int d;

	for (d = 0; d < VNET_DIR_MAX; d++)
		if (vnet_seq_read(&mem[d].gen, &mem[d], &out[d], sizeof(out[d]),
				  NULL))
			return -EAGAIN;
	return 0;
}

void vnet_limit_write(struct vnet_limit *e, const struct vnet_limit *l)
{
	__u32 g = vnet_seq_begin(&e->gen);

	__atomic_store_n(&e->bytes_per_sec, l->bytes_per_sec, __ATOMIC_RELAXED);
	__atomic_store_n(&e->bytes_burst, l->bytes_burst, __ATOMIC_RELAXED);
	__atomic_store_n(&e->bytes_one_time, l->bytes_one_time,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&e->frames_per_sec, l->frames_per_sec,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&e->frames_burst, l->frames_burst, __ATOMIC_RELAXED);
	__atomic_store_n(&e->frames_one_time, l->frames_one_time,
			 __ATOMIC_RELAXED);
	vnet_seq_end(&e->gen, g);
}

int vnet_limit_set(const char *ifname, int dir, const struct vnet_limit *l,
		   struct vnet_err *err)
{
	struct vnet_map m = VNET_MAP_INIT;
	struct vnet_limit c = *l;
	int ret;

	if (dir < 0 || dir >= VNET_DIR_MAX) {
		vnet_err_set(err, "direction %d: tx or rx", dir);
		return -EINVAL;
	}
	ret = vnet_limit_check(&c, dir == VNET_DIR_TX ? "tx" : "rx", err);
	if (ret)
		return ret;
	ret = vnet_map_get(ifname, VNET_MAP_LIMITS, VNET_MAP_WRITE, &m, err);
	if (ret)
		return ret;
	vnet_limit_write(&((struct vnet_limit *)m.mem)[dir], &c);
	vnet_map_put(&m);
	return 0;
}
