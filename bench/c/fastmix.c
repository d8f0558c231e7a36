/*
 * The kernel's fast_mix() (drivers/char/random.c, Linux 6.x) with SIPHASH_PERMUTATION (CONFIG_64BIT)
 * and HSIPHASH_PERMUTATION (CONFIG_64BIT=n, here on explicit u32 words), timed: the native
 * reference for bench/fastmix.ts.
 *
 * Build: cc -O2 -o fastmix bench/c/fastmix.c    Run: ./fastmix [iterations]
 * Prints one line per variant, "<name> <ns per fast_mix>" (the median of 5 runs).
 *
 * fast_mix() is kept out of line (noinline) so that each call loads and stores the pool from
 * memory, as a call from add_interrupt_randomness() on the per-CPU pool does (the kernel notes
 * that gcc no longer inlines it now that it has two callers); bench/fastmix.ts times the same
 * unit, one call per operation on a pool in shared memory. Results go to a volatile sink.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef uint64_t u64;
typedef uint32_t u32;

static inline u64 rol64(u64 word, unsigned int shift) { return (word << (shift & 63)) | (word >> ((-shift) & 63)); }
static inline u32 rol32(u32 word, unsigned int shift) { return (word << (shift & 31)) | (word >> ((-shift) & 31)); }

/* include/linux/siphash.h */
#define SIPHASH_PERMUTATION(a, b, c, d) ( \
	(a) += (b), (b) = rol64((b), 13), (b) ^= (a), (a) = rol64((a), 32), \
	(c) += (d), (d) = rol64((d), 16), (d) ^= (c), \
	(a) += (d), (d) = rol64((d), 21), (d) ^= (a), \
	(c) += (b), (b) = rol64((b), 17), (b) ^= (c), (c) = rol64((c), 32))

#define SIPHASH_CONST_0 0x736f6d6570736575ULL
#define SIPHASH_CONST_1 0x646f72616e646f6dULL
#define SIPHASH_CONST_2 0x6c7967656e657261ULL
#define SIPHASH_CONST_3 0x7465646279746573ULL

#define HSIPHASH_PERMUTATION(a, b, c, d) ( \
	(a) += (b), (b) = rol32((b), 5), (b) ^= (a), (a) = rol32((a), 16), \
	(c) += (d), (d) = rol32((d), 8), (d) ^= (c), \
	(a) += (d), (d) = rol32((d), 7), (d) ^= (a), \
	(c) += (b), (b) = rol32((b), 13), (b) ^= (c), (c) = rol32((c), 16))

#define HSIPHASH_CONST_0 0U
#define HSIPHASH_CONST_1 0U
#define HSIPHASH_CONST_2 0x6c796765U
#define HSIPHASH_CONST_3 0x74656462U

/* drivers/char/random.c, with FASTMIX_PERM = SIPHASH_PERMUTATION and unsigned long = u64 */
static __attribute__((noinline)) void fast_mix64(u64 s[4], u64 v1, u64 v2)
{
	s[3] ^= v1;
	SIPHASH_PERMUTATION(s[0], s[1], s[2], s[3]);
	s[0] ^= v1;
	s[3] ^= v2;
	SIPHASH_PERMUTATION(s[0], s[1], s[2], s[3]);
	s[0] ^= v2;
}

/* the same with FASTMIX_PERM = HSIPHASH_PERMUTATION and unsigned long = u32 */
static __attribute__((noinline)) void fast_mix32(u32 s[4], u32 v1, u32 v2)
{
	s[3] ^= v1;
	HSIPHASH_PERMUTATION(s[0], s[1], s[2], s[3]);
	s[0] ^= v1;
	s[3] ^= v2;
	HSIPHASH_PERMUTATION(s[0], s[1], s[2], s[3]);
	s[0] ^= v2;
}

static u64 pool64[4] = { SIPHASH_CONST_0, SIPHASH_CONST_1, SIPHASH_CONST_2, SIPHASH_CONST_3 };
static u32 pool32[4] = { HSIPHASH_CONST_0, HSIPHASH_CONST_1, HSIPHASH_CONST_2, HSIPHASH_CONST_3 };
volatile u64 sink;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#define RUNS 5

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000L;
	double r64[RUNS], r32[RUNS];
	if (n <= 0) {
		fprintf(stderr, "iterations must be a positive integer (got %s)\n", argv[1]);
		return 2;
	}
	for (int r = 0; r < RUNS; r++) {
		/* v1 varies like a cycle counter, v2 like ip ^ swab(irq) */
		double t0 = now_ns();
		for (long i = 0; i < n; i++)
			fast_mix64(pool64, (u64)i * 1000, 0xffffffff81000000ULL ^ ((u64)(i & 31) << 56));
		double t1 = now_ns();
		sink = pool64[0] ^ pool64[1] ^ pool64[2] ^ pool64[3];
		r64[r] = (t1 - t0) / (double)n;

		t0 = now_ns();
		for (long i = 0; i < n; i++)
			fast_mix32(pool32, (u32)i * 1000, 0xc1000000U ^ ((u32)(i & 31) << 24));
		t1 = now_ns();
		sink = pool32[0] ^ pool32[1] ^ pool32[2] ^ pool32[3];
		r32[r] = (t1 - t0) / (double)n;
	}
	qsort(r64, RUNS, sizeof(double), cmp_double);
	qsort(r32, RUNS, sizeof(double), cmp_double);
	printf("fastmix64 %.3f\n", r64[RUNS / 2]);
	printf("fastmix32 %.3f\n", r32[RUNS / 2]);
	return 0;
}
