/*
 * The host kernel's context switch, measured from user space at a run's start-up
 * (src/harness/switch-cost.ts compiles and runs it; `--switch-cost host`).
 *
 * lmbench's lat_ctx method (McVoy and Staelin, "lmbench: Portable tools for performance
 * analysis", USENIX 1996, section 6.7): pass a token between two threads on one CPU, and
 * subtract what passing it costs without a switch.
 *   pingpong  two threads pinned to CPU 0 hand a futex word back and forth (FUTEX_WAKE, then
 *             FUTEX_WAIT until the other answers); one-way = a round trip / 2: the wake-up
 *             (try_to_wake_up), the waiter's futex_wait → schedule(), the switch, both system
 *             calls' entries and exits. The 10th percentile of ROUNDS round trips: on a busy host
 *             CPU 0 is shared, and another task's time slice between ping and pong would land in
 *             a median (lmbench takes the least of several runs for the same reason).
 *   syscalls  the same two system calls on one thread with no switch: a FUTEX_WAKE that finds no
 *             waiter and a FUTEX_WAIT whose value differs (it returns EAGAIN at once). The 10th percentile.
 *   switch    pingpong − syscalls: schedule() from the sleeping side to the other thread
 *             running, with the wake-up's enqueue (what the lab's same-thread switch covers:
 *             src/machine/runtime.ts enterCpu).
 *
 * Output, one line: `pingpong_ns=N syscalls_ns=N switch_ns=N cpus=N`. Exit 1 with a line on
 * stderr where CPU 0 cannot be pinned or a thread cannot start.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef long long i64;

enum { ROUNDS = 5000, WARMUP = 500 };

static i64 now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long futex(atomic_int *a, int op, int v)
{
	return syscall(SYS_futex, a, op, v, NULL, NULL, 0);
}

static int pin0(void)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(0, &s);
	return sched_setaffinity(0, sizeof s, &s);
}

static int cmp(const void *a, const void *b)
{
	i64 x = *(const i64 *)a, y = *(const i64 *)b;
	return x < y ? -1 : x > y;
}

static atomic_int turn; /* 0: ping's turn, 1: pong's; the futex word both wait on */

static void *pong(void *p)
{
	(void)p; /* pinned to CPU 0: a thread inherits its creator's affinity */
	for (int k = 0; k < WARMUP + ROUNDS; k++) {
		while (atomic_load(&turn) != 1)
			futex(&turn, FUTEX_WAIT_PRIVATE, 0);
		atomic_store(&turn, 0);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

int main(void)
{
	static i64 v[ROUNDS];
	if (pin0() != 0) {
		perror("switch-cost: sched_setaffinity(CPU 0)");
		return 1;
	}
	atomic_int lone = 0;
	for (int k = 0; k < WARMUP + ROUNDS; k++) {
		i64 t0 = now_ns();
		futex(&lone, FUTEX_WAKE_PRIVATE, 1);
		futex(&lone, FUTEX_WAIT_PRIVATE, 1);
		if (k >= WARMUP)
			v[k - WARMUP] = now_ns() - t0;
	}
	qsort(v, ROUNDS, sizeof v[0], cmp);
	i64 syscalls = v[ROUNDS / 10];

	pthread_t th;
	if (pthread_create(&th, NULL, pong, NULL) != 0) {
		perror("switch-cost: pthread_create");
		return 1;
	}
	for (int k = 0; k < WARMUP + ROUNDS; k++) {
		i64 t0 = now_ns();
		atomic_store(&turn, 1);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
		while (atomic_load(&turn) != 0)
			futex(&turn, FUTEX_WAIT_PRIVATE, 1);
		if (k >= WARMUP)
			v[k - WARMUP] = (now_ns() - t0) / 2;
	}
	pthread_join(th, NULL);
	qsort(v, ROUNDS, sizeof v[0], cmp);
	i64 pingpong = v[ROUNDS / 10];
	printf("pingpong_ns=%lld syscalls_ns=%lld switch_ns=%lld cpus=%ld\n", pingpong, syscalls,
	       pingpong - syscalls, sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}
