// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Token buckets (limit.h), as Firecracker's rate limiter and the kernel's
 * tbf: refilled from the clock when used, the one-time extra spent first,
 * and the caller told how long until enough tokens, which it waits for
 * with a timer instead of polling.
 */
#include <string.h>

#include "limit.h"
#include "base/util.h"

#define NSEC 1000000000ull
/* the shortest wait a throttled ring arms: no timer storm below it */
#define LIMIT_WAIT_MIN_NS 20000ull
/*
 * ... and the wait it prefers: a throttled ring comes back for a batch,
 * not for every token (each return is a thread wake-up on a CPU the
 * host's other guests share); never longer than half the bucket takes to
 * fill, so that no token is lost to a full bucket
 */
#define LIMIT_WAIT_BATCH_NS 1000000ull

static void bucket_set(struct vnetd_bucket *b, uint64_t rate, uint64_t size,
		       uint64_t one_time, uint64_t now)
{
	b->rate = rate;
	b->size = size;
	b->tokens = (int64_t)size;
	b->one_time = one_time;
	b->last_ns = now;
}

/* the tokens earned since last_ns; last_ns moves by what they are worth */
static void bucket_refill(struct vnetd_bucket *b, uint64_t now)
{
	unsigned __int128 add;
	uint64_t dt;

	if (!b->rate || now <= b->last_ns)
		return;
	if (b->tokens >= (int64_t)b->size) {
		b->last_ns = now;
		return;
	}
	dt = now - b->last_ns;
	add = (unsigned __int128)dt * b->rate / NSEC;
	if (!add)
		return;
	if (add >= (unsigned __int128)((int64_t)b->size - b->tokens)) {
		b->tokens = (int64_t)b->size;
		b->last_ns = now;
		return;
	}
	b->tokens += (int64_t)add;
	b->last_ns += (uint64_t)(add * NSEC / b->rate);
}

/* NEED passes now: tokens enough, or a full bucket for a bigger one */
static bool bucket_fits(const struct vnetd_bucket *b, uint64_t need)
{
	if (!b->rate)
		return true;
	if (b->tokens + (int64_t)b->one_time >= (int64_t)need)
		return true;
	return b->tokens >= (int64_t)b->size;
}

static void bucket_take(struct vnetd_bucket *b, uint64_t need)
{
	uint64_t o;

	if (!b->rate)
		return;
	o = need < b->one_time ? need : b->one_time;
	b->one_time -= o;
	b->tokens -= (int64_t)(need - o);
}

/* ns until NEED fits (0: it does) */
static uint64_t bucket_wait(const struct vnetd_bucket *b, uint64_t need,
			    uint64_t now)
{
	int64_t want, deficit;
	uint64_t ns, since, batch;

	if (bucket_fits(b, need))
		return 0;
	want = (int64_t)(need < b->size ? need : b->size);
	deficit = want - b->tokens - (int64_t)b->one_time;
	ns = (uint64_t)((unsigned __int128)deficit * NSEC / b->rate) + 1;
	since = now > b->last_ns ? now - b->last_ns : 0;
	ns = ns > since ? ns - since : 1;
	batch = (uint64_t)((unsigned __int128)(b->size / 2) * NSEC / b->rate);
	if (batch > LIMIT_WAIT_BATCH_NS)
		batch = LIMIT_WAIT_BATCH_NS;
	if (ns < batch)
		ns = batch;
	return ns < LIMIT_WAIT_MIN_NS ? LIMIT_WAIT_MIN_NS : ns;
}

/* follow the map's entry: a new gen starts the buckets over, full */
static void limit_sync(struct vnetd_limit *l, uint64_t now)
{
	struct vnet_limit c;
	uint32_t g1, g2;

	g1 = __atomic_load_n(&l->cfg->gen, __ATOMIC_ACQUIRE);
	if ((l->started && g1 == l->gen) || (g1 & 1))
		return;
	memcpy(&c, (const void *)l->cfg, sizeof(c));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	g2 = __atomic_load_n(&l->cfg->gen, __ATOMIC_RELAXED);
	if (g1 != g2)
		return; /* being written: the next burst takes it */
	bucket_set(&l->bytes, c.bytes_per_sec, c.bytes_burst,
		   c.bytes_one_time, now);
	bucket_set(&l->frames, c.frames_per_sec, c.frames_burst,
		   c.frames_one_time, now);
	l->gen = g1;
	l->started = true;
}

static uint64_t limit_begin(struct vnetd_limit *l)
{
	uint64_t now = vnetd_now_ns();

	pthread_spin_lock(&l->lock);
	limit_sync(l, now);
	bucket_refill(&l->bytes, now);
	bucket_refill(&l->frames, now);
	return now;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

unsigned int vnetd_limit_take(struct vnetd_limit *l, const uint32_t *len,
			      unsigned int n, uint64_t *wait_ns)
{
	uint64_t now = limit_begin(l);
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!bucket_fits(&l->bytes, len[i]) ||
		    !bucket_fits(&l->frames, 1))
			break;
		bucket_take(&l->bytes, len[i]);
		bucket_take(&l->frames, 1);
	}
	if (!i)
		*wait_ns = max_u64(bucket_wait(&l->bytes, len[0], now),
				   bucket_wait(&l->frames, 1, now));
	pthread_spin_unlock(&l->lock);
	return i;
}

unsigned int vnetd_limit_allow(struct vnetd_limit *l, uint32_t mean,
			       unsigned int n, uint64_t *wait_ns)
{
	uint64_t now = limit_begin(l), k = n;
	int64_t b;

	if (l->frames.rate) {
		b = l->frames.tokens + (int64_t)l->frames.one_time;
		k = b > 0 ? (uint64_t)b : 0;
	}
	if (l->bytes.rate && k) {
		b = l->bytes.tokens + (int64_t)l->bytes.one_time;
		if (b <= 0)
			k = 0;
		else if ((uint64_t)b / (mean ? mean : 1) < k)
			k = (uint64_t)b / (mean ? mean : 1);
		/* some bytes left: one read, the rest paid back later */
		if (b > 0 && !k)
			k = 1;
	}
	if (k > n)
		k = n;
	if (!k)
		*wait_ns = max_u64(bucket_wait(&l->bytes, 1, now),
				   bucket_wait(&l->frames, 1, now));
	pthread_spin_unlock(&l->lock);
	return (unsigned int)k;
}

void vnetd_limit_charge(struct vnetd_limit *l, uint64_t frames,
			uint64_t bytes)
{
	if (!frames && !bytes)
		return;
	pthread_spin_lock(&l->lock);
	bucket_take(&l->bytes, bytes);
	bucket_take(&l->frames, frames);
	pthread_spin_unlock(&l->lock);
}

void vnetd_limit_init(struct vnetd_limit *l, const struct vnet_limit *cfg)
{
	memset(l, 0, sizeof(*l));
	l->cfg = cfg;
	pthread_spin_init(&l->lock, PTHREAD_PROCESS_PRIVATE);
}

void vnetd_limit_exit(struct vnetd_limit *l)
{
	pthread_spin_destroy(&l->lock);
}
