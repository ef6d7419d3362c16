// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fuzz_virtq: split ring processing (user/vhost/split.c) over hostile guest
 * memory (user/vhost/mem.c).
 *
 * Guest memory is one to three memfd regions of 64 KiB, adjacent or not,
 * mapped by the library itself (vhost_mem_add()).  The ring lies in region
 * 0 at offsets the input picks; everything the guest writes (descriptors,
 * indirect tables, avail ring, indices, event fields) comes from the input
 * and may change between two bursts, as a guest racing the device would.
 *
 * Input: a fixed header (struct setup), then operations until the input
 * ends: write guest memory, pop a burst (and write into and push back what
 * was popped), rewind, kick suppression on/off, notify.
 *
 * Oracles: every iovec returned lies inside one memory region and its
 * guest address translates to it; an element's lengths add up; no more
 * than VHOST_VQ_MAX_IOV segments; an element with err set carries none;
 * nothing is popped from a broken ring; the dirty log is written only
 * inside the log.  ASan/UBSan catch the rest.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "fuzz.h"
#include "fuzz_mem.h"
#include "log.h"
#include "virtq.h"

#define REGION_SIZE (64 * 1024)
#define MAX_REGIONS 3
#define GPA_BASE 0x100000ULL
#define UVA_BASE 0x7f0000000000ULL
#define BURST 8 /* 1 + (op >> 5) */
#define LOG_SIZE 64 /* bytes of dirty bitmap: 512 pages */

struct setup {
	uint8_t nregions;  /* 1 + n % 3 */
	uint8_t layout;	   /* bit 0..1: region 1 adjacent, gap, below; bit 2 region 2 adjacent */
	uint8_t log2_num;  /* ring size 2^(n % 11) */
	uint8_t features;  /* bit 0 EVENT_IDX, 1 INDIRECT_DESC, 2 NOTIFY_ON_EMPTY, 3 LOG_ALL, 4 log used, 5 RING_PACKED */
	uint16_t desc_off, avail_off, used_off; /* in region 0 (uva) */
	uint16_t base;	   /* SET_VRING_BASE */
} __attribute__((packed));

static int memfd[MAX_REGIONS] = { -1, -1, -1 };
static uint8_t *guest[MAX_REGIONS]; /* the harness's own view (the guest) */
static int log_fd = -1, call_fd = -1;

static void log_quiet(enum vhost_log_level level, const char *msg, void *o)
{
	(void)level;
	(void)msg;
	(void)o;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int i;

	(void)argc;
	(void)argv;
	vhost_log_set_level(VHOST_LOG_DEBUG);
	vhost_log_set_fn(log_quiet, NULL);
	for (i = 0; i < MAX_REGIONS; i++) {
		memfd[i] = memfd_create("vnetfuzz-vq", MFD_CLOEXEC);
		if (memfd[i] < 0 || ftruncate(memfd[i], REGION_SIZE))
			abort();
		guest[i] = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
				MAP_SHARED, memfd[i], 0);
		if (guest[i] == MAP_FAILED)
			abort();
	}
	log_fd = memfd_create("vnetfuzz-log", MFD_CLOEXEC);
	if (log_fd < 0 || ftruncate(log_fd, 4096))
		abort();
	call_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (call_fd < 0)
		abort();
	return 0;
}

static void check_elem(const struct vhost_mem *m, const struct vhost_vq_elem *e,
		       uint16_t num)
{
	uint64_t out = 0, in = 0;
	unsigned int i;

	FUZZ_ASSERT(e->head < num, "head %u of a %u entry ring", e->head, num);
	FUZZ_ASSERT(e->out_num + e->in_num <= VHOST_VQ_MAX_IOV,
		    "%u + %u segments", e->out_num, e->in_num);
	if (e->err) {
		FUZZ_ASSERT(e->err == -E2BIG, "err %d", e->err);
		FUZZ_ASSERT(!e->out_num && !e->in_num,
			    "an element with err carries %u + %u segments",
			    e->out_num, e->in_num);
		return;
	}
	for (i = 0; i < (unsigned int)e->out_num + e->in_num; i++) {
		int r = fuzz_region_of(m, e->iov[i].iov_base,
				       e->iov[i].iov_len);
		const struct vhost_mem_region *reg;

		FUZZ_ASSERT(e->iov[i].iov_len, "empty segment %u", i);
		FUZZ_ASSERT(r >= 0,
			    "segment %u (%p+%zu, gpa 0x%llx) outside every region",
			    i, e->iov[i].iov_base, e->iov[i].iov_len,
			    (unsigned long long)e->gpa[i]);
		reg = &m->regions[r];
		FUZZ_ASSERT(e->gpa[i] - reg->gpa ==
				    (uint64_t)((uint8_t *)e->iov[i].iov_base -
					       reg->host),
			    "segment %u: gpa 0x%llx does not map to its iovec", i,
			    (unsigned long long)e->gpa[i]);
		if (i < e->out_num)
			out += e->iov[i].iov_len;
		else
			in += e->iov[i].iov_len;
	}
	FUZZ_ASSERT(out == e->out_len, "readable %llu bytes, out_len %llu",
		    (unsigned long long)out, (unsigned long long)e->out_len);
	FUZZ_ASSERT(in == e->in_len, "writable %llu bytes, in_len %llu",
		    (unsigned long long)in, (unsigned long long)e->in_len);
}

/* The device's use of a popped element: read, write, log. */
static uint32_t use_elem(struct vhost_vq *vq, const struct vhost_vq_elem *e,
			 uint32_t want)
{
	volatile uint8_t sink = 0;
	unsigned int i;
	uint32_t done = 0;

	for (i = 0; i < e->out_num; i++) {
		const uint8_t *b = e->iov[i].iov_base;

		sink ^= b[0] ^ b[e->iov[i].iov_len - 1];
	}
	(void)sink;
	for (i = e->out_num; i < (unsigned int)e->out_num + e->in_num &&
			     done < want; i++) {
		size_t n = e->iov[i].iov_len;

		if (n > want - done)
			n = want - done;
		memset(e->iov[i].iov_base, 0xa5, n);
		done += (uint32_t)n;
	}
	vhost_vq_log_write(vq, e, done);
	return done;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vhost_vq_elem elems[BURST];
	struct fuzz_in in = { data, size };
	struct vhost_mem_region_desc d;
	struct vhost_vq_used used[BURST];
	uint64_t gpa[MAX_REGIONS], features = 0;
	unsigned int nr, i, ops = 0;
	struct vhost_mem mem;
	struct vhost_vq vq;
	struct setup s;
	uint64_t v;

	fuzz_bytes(&in, &s, sizeof(s));
	nr = 1 + s.nregions % MAX_REGIONS;
	gpa[0] = GPA_BASE;
	/* region 1 right after region 0, after a gap, or below it */
	gpa[1] = (s.layout & 3) == 0 ? GPA_BASE + REGION_SIZE :
		 (s.layout & 3) == 1 ? GPA_BASE + 4 * REGION_SIZE :
				       GPA_BASE - REGION_SIZE;
	gpa[2] = s.layout & 4 ? gpa[1] + REGION_SIZE : GPA_BASE + 8 * REGION_SIZE;
	for (i = 0; i < nr; i++)
		memset(guest[i], 0, REGION_SIZE);

	vhost_mem_init(&mem);
	for (i = 0; i < nr; i++) {
		d = (struct vhost_mem_region_desc){
			.guest_phys_addr = gpa[i],
			.memory_size = REGION_SIZE,
			.userspace_addr = UVA_BASE + gpa[i],
		};
		/* vhost_mem_add() consumes the fd */
		if (vhost_mem_add(&mem, &d, dup(memfd[i])))
			abort();
	}
	if (s.features & 8) {
		if (vhost_mem_set_log(&mem, dup(log_fd), LOG_SIZE, 0))
			abort();
		features |= 1ULL << VHOST_F_LOG_ALL;
	}
	if (s.features & 1)
		features |= 1ULL << VIRTIO_RING_F_EVENT_IDX;
	if (s.features & 2)
		features |= 1ULL << VIRTIO_RING_F_INDIRECT_DESC;
	if (s.features & 4)
		features |= 1ULL << VIRTIO_F_NOTIFY_ON_EMPTY;

	vhost_vq_init(&vq, 0, "fuzz", &mem);
	vq.num = (uint16_t)(1u << (s.log2_num % 11));
	vq.desc_uva = UVA_BASE + GPA_BASE + s.desc_off;
	vq.avail_uva = UVA_BASE + GPA_BASE + s.avail_off;
	vq.used_uva = UVA_BASE + GPA_BASE + s.used_off;
	vq.addr_flags = s.features & 16 ? 1u << VHOST_VRING_F_LOG : 0;
	vq.log_guest_addr = GPA_BASE + s.used_off;
	vq.addr_set = true;
	vhost_vq_set_base(&vq, s.base, false);
	if (s.features & 32) {
		/* packed: sizes 1..1024, the base's avail half (used = avail) */
		features |= 1ULL << VIRTIO_F_RING_PACKED;
		vq.num = (uint16_t)(1 + (s.log2_num * 37u + s.layout) % 1024);
		vhost_vq_set_base(&vq, (s.base & 0x8000) |
					       (s.base & 0x7fff) % vq.num,
				  true);
	}
	vq.call_fd = dup(call_fd);
	/* the guest's memory as it is when the ring starts */
	while (fuzz_left(&in) && ops < 4) {
		uint8_t r = fuzz_u8(&in) % nr, len = fuzz_u8(&in);
		uint16_t off = fuzz_u16(&in);

		if ((size_t)off + len > REGION_SIZE)
			off = (uint16_t)(REGION_SIZE - len);
		fuzz_bytes(&in, guest[r] + off, len);
		ops++;
	}
	if (vhost_vq_start(&vq, features))
		goto out;

	while (fuzz_left(&in) && ops++ < 512) {
		uint8_t op = fuzz_u8(&in);
		int n;

		/* bits 0-2: what; 3: notify, 4: rewind, 5-7: burst - 1 */
		switch ((op & 7) % 6) {
		case 0: { /* the guest writes */
			uint8_t r = fuzz_u8(&in) % nr, len = fuzz_u8(&in);
			uint16_t off = fuzz_u16(&in);

			if ((size_t)off + len > REGION_SIZE)
				off = (uint16_t)(REGION_SIZE - len);
			fuzz_bytes(&in, guest[r] + off, len);
			break;
		}
		case 1: /* a burst, used and pushed back */
		case 2:
			n = vhost_vq_pop_burst(&vq, elems, 1 + (op >> 5));
			if (n < 0) {
				FUZZ_ASSERT(n == -EIO && vhost_vq_broken(&vq),
					    "pop: %d on a ring not broken", n);
				break;
			}
			FUZZ_ASSERT(n <= BURST, "pop returned %d", n);
			for (i = 0; i < (unsigned int)n; i++) {
				check_elem(&mem, &elems[i], vq.num);
				used[i].id = elems[i].head;
				used[i].len = use_elem(&vq, &elems[i],
						       fuzz_u16(&in));
			}
			if (op & 0x10 && n) {
				/* frame did not fit: back to the ring */
				vhost_vq_rewind(&vq, (unsigned int)n);
				break;
			}
			if (n)
				vhost_vq_push_burst(&vq, used, (unsigned int)n);
			if (op & 0x08)
				vhost_vq_notify(&vq);
			break;
		case 3:
			vhost_vq_notify_disable(&vq);
			break;
		case 4:
			vhost_vq_notify_enable(&vq);
			vhost_vq_avail_count(&vq);
			break;
		default:
			/* a push of an arbitrary id: refused unless a head */
			used[0].id = fuzz_u16(&in);
			used[0].len = fuzz_u16(&in);
			n = vhost_vq_push_burst(&vq, used, 1);
			FUZZ_ASSERT(n || used[0].id < vq.num,
				    "push of id %u accepted (ring size %u)",
				    used[0].id, vq.num);
			break;
		}
	}
	if (vhost_vq_broken(&vq))
		FUZZ_ASSERT(vhost_vq_pop_burst(&vq, elems, 1) == -EIO,
			    "a broken ring still pops");
out:
	vhost_vq_stop(&vq);
	vhost_vq_reset(&vq);
	vhost_mem_cleanup(&mem);
	while (read(call_fd, &v, sizeof(v)) > 0)
		;
	return 0;
}
