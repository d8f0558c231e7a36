/*
 * The native references of bench/scale.ts (docs/scale.md): what the kernel's own code costs for
 * the operations the lab emulates, where a user-space C equivalent can run here.
 *
 * Build: cc -O2 -pthread -o scale bench/c/scale.c    Run: ./scale, or ./scale cold (only the
 * two rows met cold, blake2s_mix_cold and clock_pair_cold: bench:scale runs it between its own
 * cold rows, round after round, so that both sides meet the host in the same state)
 * Output: one `key=value` per line (ns), parsed by bench/scale.ts. The CPU-bound figures
 * (memcpy, csum, mix) are the best of 101 short runs (on a loaded host the least preempted one;
 * the lab's side takes the same statistic), the futex figures medians:
 *   memcpy_byte     memcpy() of a 64 KiB buffer between two others, per byte (copy_to_user's
 *                   work without the page-fault fixup: both buffers resident)
 *   csum_byte       csum_partial() over 64 KiB, per byte: arch/x86/lib/csum-partial_64.c
 *                   (Linux 6.x, Eric Dumazet's 2021 rewrite: two 40-byte adc chains), ported with
 *                   the same inline asm on x86-64; lib/checksum.c's do_csum() elsewhere
 *   blake2s_mix     mix_pool_bytes() of 16 bytes (sizeof(unsigned long[2]), the 64-bit
 *                   mix_interrupt_randomness): a test-and-set spinlock taken, blake2s_update()
 *                   (lib/crypto/blake2s.c with blake2s_compress_generic, RFC 7693), released
 *   blake2s_mix_cold the same mix once after its thread slept 3 ms in FUTEX_WAIT (a timeout on a
 *                   private word, as a parked kworker and the lab's Atomics.wait sleep), the median
 *                   of 200: what the mix costs when the code and data have gone cold, as a
 *                   kworker woken every few milliseconds meets it
 *   clock_pair_cold two CLOCK_MONOTONIC reads back to back, once after its thread slept 3 ms in
 *                   FUTEX_WAIT as above, the median of 200: the floor under blake2s_mix_cold (the
 *                   same two reads time it), what any timed step met cold costs before its work
 *   futex_oneway    one-way wake between two pthreads pinned to CPU 0 and CPU 1, each sleeping in
 *                   FUTEX_WAIT between turns (the median round trip / 2)
 *   futex_wake_call the waker's FUTEX_WAKE system call when the other thread sleeps (the cost
 *                   try_to_wake_up puts on the waker: queue_work_on's wake of an idle kworker)
 *   tick_gap        Tsafrir's do-nothing loop (ExpCS 2007, "The context-switch overhead inflicted
 *   irq_gap         by hardware interrupts"): a thread reads CLOCK_MONOTONIC in a tight loop for
 *   gaps_per_s      GAP_SECONDS; every gap between two readings longer than GAP_MIN_NS and shorter
 *                   than GAP_MAX_NS is time the kernel took the CPU away: an interrupt's entry, its
 *                   handler, its exit. tick_gap = the median gap (on an otherwise idle CPU mostly
 *                   the timer tick: gaps_per_s ~ HZ), irq_gap = the 10th percentile (the
 *                   interrupts with the least handler work: entry + exit dominate)
 * Every wait is bounded (a stop word); a failure prints one line on stderr and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Many short runs, the best kept: on a loaded host most runs are preempted somewhere; the
 * least preempted one is the operation's cost (the lab's side takes the same statistic). */
#define RUNS 101
static double best(double *v)
{
	qsort(v, RUNS, sizeof(double), cmp_double);
	return v[0];
}

volatile u64 sink;

/* ---- memcpy ---------------------------------------------------------------------------- */

#define BUF (64 * 1024)
static u8 src_buf[BUF] __attribute__((aligned(64)));
static u8 dst_buf[BUF] __attribute__((aligned(64)));

static double bench_memcpy(void)
{
	double r[RUNS];
	int iters = 100;
	for (int k = 0; k < RUNS; k++) {
		double t = now_ns();
		for (int i = 0; i < iters; i++) {
			src_buf[i & (BUF - 1)] = (u8)i;
			memcpy(dst_buf, src_buf, BUF);
			__asm__ volatile("" ::: "memory");
		}
		r[k] = (now_ns() - t) / ((double)iters * BUF);
	}
	sink += dst_buf[7];
	return best(r);
}

/* ---- csum_partial ---------------------------------------------------------------------- */

#if defined(__x86_64__)
/* arch/x86/lib/csum-partial_64.c (6.x) */
static inline u64 update_csum_40b(u64 sum, const u64 m[5])
{
	__asm__("addq %1,%0\n\t"
		"adcq %2,%0\n\t"
		"adcq %3,%0\n\t"
		"adcq %4,%0\n\t"
		"adcq %5,%0\n\t"
		"adcq $0,%0"
		: "+r"(sum)
		: "m"(m[0]), "m"(m[1]), "m"(m[2]), "m"(m[3]), "m"(m[4]));
	return sum;
}

static inline u32 csum_finalize_sum(u64 temp64)
{
	return (u32)((temp64 + ((temp64 >> 32) | (temp64 << 32))) >> 32);
}

static u32 csum_partial(const void *buff, int len, u32 sum)
{
	u64 temp64 = sum;
	if (len >= 80) {
		u64 temp64_2 = 0;
		do {
			temp64 = update_csum_40b(temp64, buff);
			temp64_2 = update_csum_40b(temp64_2, (const void *)((const u8 *)buff + 40));
			buff = (const u8 *)buff + 80;
			len -= 80;
		} while (len >= 80);
		__asm__("addq %1,%0\n\tadcq $0,%0" : "+r"(temp64) : "r"(temp64_2));
	}
	if (len >= 40) {
		temp64 = update_csum_40b(temp64, buff);
		len -= 40;
		buff = (const u8 *)buff + 40;
	}
	if (len & 32) {
		const u64 *q = buff;
		__asm__("addq %1,%0\n\tadcq %2,%0\n\tadcq %3,%0\n\tadcq %4,%0\n\tadcq $0,%0"
			: "+r"(temp64) : "m"(q[0]), "m"(q[1]), "m"(q[2]), "m"(q[3]));
		buff = (const u8 *)buff + 32;
	}
	if (len & 16) {
		const u64 *q = buff;
		__asm__("addq %1,%0\n\tadcq %2,%0\n\tadcq $0,%0" : "+r"(temp64) : "m"(q[0]), "m"(q[1]));
		buff = (const u8 *)buff + 16;
	}
	if (len & 8) {
		const u64 *q = buff;
		__asm__("addq %1,%0\n\tadcq $0,%0" : "+r"(temp64) : "m"(q[0]));
		buff = (const u8 *)buff + 8;
	}
	if (len & 7) {
		/* load_unaligned_zeropad(): the tail bytes, zero above them */
		u64 trail = 0;
		memcpy(&trail, buff, len & 7);
		__asm__("addq %1,%0\n\tadcq $0,%0" : "+r"(temp64) : "r"(trail));
	}
	return csum_finalize_sum(temp64);
}
#else
/* lib/checksum.c do_csum(), for a buffer that starts aligned */
static u32 csum_partial(const void *buff, int len, u32 sum)
{
	const u8 *p = buff;
	u64 s = sum;
	for (; len >= 4; len -= 4, p += 4) {
		u32 w;
		memcpy(&w, p, 4);
		s += w;
	}
	if (len & 2) { u16 h; memcpy(&h, p, 2); s += h; p += 2; }
	if (len & 1) s += *p;
	while (s >> 32) s = (s & 0xffffffffu) + (s >> 32);
	return (u32)s;
}
#endif

static double bench_csum(void)
{
	double r[RUNS];
	int iters = 100;
	u32 acc = 0;
	for (int k = 0; k < RUNS; k++) {
		double t = now_ns();
		for (int i = 0; i < iters; i++) {
			src_buf[i & (BUF - 1)] = (u8)i;
			acc += csum_partial(src_buf, BUF, 0);
			__asm__ volatile("" ::: "memory");
		}
		r[k] = (now_ns() - t) / ((double)iters * BUF);
	}
	sink += acc;
	return best(r);
}

/* ---- BLAKE2s (lib/crypto/blake2s.c, blake2s-generic.c; RFC 7693) ------------------------ */

static const u32 blake2s_iv[8] = { 0x6A09E667UL, 0xBB67AE85UL, 0x3C6EF372UL, 0xA54FF53AUL,
				   0x510E527FUL, 0x9B05688CUL, 0x1F83D9ABUL, 0x5BE0CD19UL };
static const u8 blake2s_sigma[10][16] = {
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
	{ 14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3 },
	{ 11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4 },
	{ 7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8 },
	{ 9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13 },
	{ 2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9 },
	{ 12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11 },
	{ 13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10 },
	{ 6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5 },
	{ 10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0 },
};

struct blake2s_state {
	u32 h[8];
	u32 t[2];
	u32 f[2];
	u8 buf[64];
	unsigned int buflen;
};

static inline u32 ror32(u32 w, unsigned int s) { return (w >> s) | (w << (32 - s)); }

static void blake2s_compress(struct blake2s_state *state, const u8 *block, size_t nblocks, u32 inc)
{
	u32 m[16], v[16];
	while (nblocks > 0) {
		state->t[0] += inc;
		state->t[1] += (state->t[0] < inc);
		memcpy(m, block, 64);
		memcpy(v, state->h, 32);
		v[8] = blake2s_iv[0];
		v[9] = blake2s_iv[1];
		v[10] = blake2s_iv[2];
		v[11] = blake2s_iv[3];
		v[12] = blake2s_iv[4] ^ state->t[0];
		v[13] = blake2s_iv[5] ^ state->t[1];
		v[14] = blake2s_iv[6] ^ state->f[0];
		v[15] = blake2s_iv[7] ^ state->f[1];
#define G(r, i, a, b, c, d) do { \
	a += b + m[blake2s_sigma[r][2 * i + 0]]; d = ror32(d ^ a, 16); c += d; b = ror32(b ^ c, 12); \
	a += b + m[blake2s_sigma[r][2 * i + 1]]; d = ror32(d ^ a, 8); c += d; b = ror32(b ^ c, 7); \
} while (0)
#define ROUND(r) do { \
	G(r, 0, v[0], v[4], v[8], v[12]); G(r, 1, v[1], v[5], v[9], v[13]); \
	G(r, 2, v[2], v[6], v[10], v[14]); G(r, 3, v[3], v[7], v[11], v[15]); \
	G(r, 4, v[0], v[5], v[10], v[15]); G(r, 5, v[1], v[6], v[11], v[12]); \
	G(r, 6, v[2], v[7], v[8], v[13]); G(r, 7, v[3], v[4], v[9], v[14]); \
} while (0)
		ROUND(0); ROUND(1); ROUND(2); ROUND(3); ROUND(4);
		ROUND(5); ROUND(6); ROUND(7); ROUND(8); ROUND(9);
#undef G
#undef ROUND
		for (int i = 0; i < 8; i++) state->h[i] ^= v[i] ^ v[i + 8];
		block += 64;
		--nblocks;
	}
}

/* lib/crypto/blake2s.c blake2s_update(): the last block is kept until more arrives */
static void blake2s_update(struct blake2s_state *state, const u8 *in, size_t inlen)
{
	const size_t fill = 64 - state->buflen;
	if (!inlen) return;
	if (inlen > fill) {
		memcpy(state->buf + state->buflen, in, fill);
		blake2s_compress(state, state->buf, 1, 64);
		state->buflen = 0;
		in += fill;
		inlen -= fill;
	}
	if (inlen > 64) {
		const size_t nblocks = (inlen + 63) / 64 - 1;
		blake2s_compress(state, in, nblocks, 64);
		in += 64 * nblocks;
		inlen -= 64 * nblocks;
	}
	memcpy(state->buf + state->buflen, in, inlen);
	state->buflen += inlen;
}

static struct {
	atomic_int lock;
	struct blake2s_state hash;
} input_pool;

static __attribute__((noinline)) void mix_pool_bytes(const void *buf, size_t len)
{
	/* spin_lock_irqsave: an uncontended lock is one atomic exchange; unlock a release store */
	while (atomic_exchange_explicit(&input_pool.lock, 1, memory_order_acquire))
		;
	blake2s_update(&input_pool.hash, buf, len);
	atomic_store_explicit(&input_pool.lock, 0, memory_order_release);
}

static double bench_mix(void)
{
	memcpy(input_pool.hash.h, blake2s_iv, 32);
	input_pool.hash.h[0] ^= 0x01010000 | 32;
	double r[RUNS];
	int iters = 5000;
	u64 pool[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	for (int k = 0; k < RUNS; k++) {
		double t = now_ns();
		for (int i = 0; i < iters; i++) {
			pool[0] += i;
			mix_pool_bytes(pool, sizeof(pool));
		}
		r[k] = (now_ns() - t) / iters;
	}
	sink += input_pool.hash.h[0];
	return best(r);
}

/* The median of 200 timings of op(k), each once after this thread slept 3 ms in FUTEX_WAIT on a
 * word nobody wakes (it sleeps until the timeout), timed by two clock reads: as the lab's
 * afterSleep (bench/scale-lab.ts) times its side. */
static double after_sleep(void (*op)(int k))
{
	enum { N = 200 };
	double r[N];
	int word = 0;
	struct timespec gap = { 0, 3000000 }; /* 3 ms */
	for (int k = 0; k < N; k++) {
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &gap, NULL, 0);
		double t = now_ns();
		op(k);
		r[k] = now_ns() - t;
	}
	qsort(r, N, sizeof(r[0]), cmp_double);
	return r[N / 2];
}

static u64 cold_pool[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };

static void mix_op(int k)
{
	cold_pool[0] += k;
	mix_pool_bytes(cold_pool, sizeof(cold_pool));
}

static void nothing_op(int k) { (void)k; }

static double bench_mix_cold(void)
{
	double m = after_sleep(mix_op);
	sink += input_pool.hash.h[0];
	return m;
}

static double bench_clock_cold(void) { return after_sleep(nothing_op); }

/* ---- futex between two pinned pthreads ------------------------------------------------- */

static atomic_int turn; /* 0: ping's turn, 1: pong's */
static atomic_int stop;
static int ROUNDS = 20000;
static double wake_call[20000];
static double round_trip[20000];

static long futex(atomic_int *w, int op, int val)
{
	return syscall(SYS_futex, (int *)w, op, val, NULL, NULL, 0);
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s); /* best effort: one CPU machines still run */
}

static void wait_for(int want)
{
	while (atomic_load(&turn) != want && !atomic_load(&stop))
		futex(&turn, FUTEX_WAIT_PRIVATE, !want);
}

static void *pong(void *arg)
{
	(void)arg;
	pin(1);
	for (int i = 0; i < ROUNDS && !atomic_load(&stop); i++) {
		wait_for(1);
		atomic_store(&turn, 0);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static void bench_futex(double *oneway, double *wakecall)
{
	pthread_t th;
	pin(0);
	atomic_store(&turn, 0);
	if (pthread_create(&th, NULL, pong, NULL) != 0) {
		fprintf(stderr, "scale: pthread_create: %s\n", strerror(errno));
		exit(1);
	}
	double t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++) {
		atomic_store(&turn, 1);
		double a = now_ns();
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
		wake_call[i] = now_ns() - a;
		wait_for(0);
		round_trip[i] = now_ns() - a;
		if (now_ns() - t0 > 30e9) { /* bound: never hang */
			atomic_store(&stop, 1);
			futex(&turn, FUTEX_WAKE_PRIVATE, 1);
			fprintf(stderr, "scale: futex ping-pong took over 30 s\n");
			exit(1);
		}
	}
	pthread_join(th, NULL);
	qsort(round_trip, ROUNDS, sizeof(double), cmp_double);
	*oneway = round_trip[ROUNDS / 2] / 2;
	qsort(wake_call, ROUNDS, sizeof(double), cmp_double);
	*wakecall = wake_call[ROUNDS / 2];
}

#define GAP_SECONDS 2.0
#define GAP_MIN_NS 300.0
#define GAP_MAX_NS 100000.0
#define MAX_GAPS 200000
static double gaps[MAX_GAPS];

static int cmp_plain(const void *a, const void *b) { return cmp_double(a, b); }

static void bench_gaps(double *tick, double *irq, double *per_s)
{
	pin(0);
	int n = 0;
	double start = now_ns(), prev = start, t = start;
	while (t - start < GAP_SECONDS * 1e9) {
		t = now_ns();
		double d = t - prev;
		if (d > GAP_MIN_NS && d < GAP_MAX_NS && n < MAX_GAPS) gaps[n++] = d;
		prev = t;
	}
	if (n == 0) { *tick = *irq = *per_s = 0; return; }
	qsort(gaps, n, sizeof(double), cmp_plain);
	*tick = gaps[n / 2];
	*irq = gaps[n / 10];
	*per_s = n / GAP_SECONDS;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "cold") == 0) {
		/* Only the two rows met cold, for bench:scale to interleave with the lab's own. */
		memcpy(input_pool.hash.h, blake2s_iv, 32);
		input_pool.hash.h[0] ^= 0x01010000 | 32;
		printf("blake2s_mix_cold=%.1f\n", bench_mix_cold());
		printf("clock_pair_cold=%.1f\n", bench_clock_cold());
		return 0;
	}
	memset(src_buf, 0x5a, BUF);
	printf("memcpy_byte=%.5f\n", bench_memcpy());
	printf("csum_byte=%.5f\n", bench_csum());
	printf("blake2s_mix=%.2f\n", bench_mix());
	printf("blake2s_mix_cold=%.1f\n", bench_mix_cold());
	printf("clock_pair_cold=%.1f\n", bench_clock_cold());
	double oneway, wakecall;
	bench_futex(&oneway, &wakecall);
	printf("futex_oneway=%.1f\n", oneway);
	printf("futex_wake_call=%.1f\n", wakecall);
	double tick, irq, per_s;
	bench_gaps(&tick, &irq, &per_s);
	printf("tick_gap=%.1f\nirq_gap=%.1f\ngaps_per_s=%.0f\n", tick, irq, per_s);
	return 0;
}
