/*
 * The host kernel's answers to the lab's scheduler questions, asked from user space: the native
 * side of bench/twin.ts (docs/twin.md). Threads are pinned with sched_setaffinity, reniced with
 * setpriority(PRIO_PROCESS, tid, nice) (nice < 0 needs root or CAP_SYS_NICE), and timed with
 * clock_gettime(CLOCK_MONOTONIC).
 *
 * Build: cc -O2 -pthread -o twin bench/c/twin.c
 * Run:   ./twin hogs N NICE PERIOD_US WORK_US ITERS [CPUSEQ_FILE] (a) N busy threads at NICE on CPU 0 and a
 *                                                         nice-0 waker on CPU 0 that sleeps to an
 *                                                         absolute deadline every PERIOD_US, then
 *                                                         works WORK_US: its wake-up lateness, and
 *                                                         its CPU time per wake-up (run=); with
 *                                                         CPUSEQ_FILE, each cycle's CPU written
 *                                                         there (ns, space-separated)
 *        ./twin pingpong ITERS                         (b) two threads on CPU 0 hand a futex word
 *                                                         back and forth: one switch (round trip / 2)
 *        ./twin share NICE_A NICE_B MS                 (b) two busy threads on CPU 0 for MS ms:
 *                                                         their CPU time (CLOCK_THREAD_CPUTIME_ID)
 *        ./twin cross ITERS GAP_US [busy]              (c) a waker on CPU 0 wakes a futex sleeper
 *                                                         on CPU 1 every GAP_US: wake-up latency;
 *                                                         `busy`: the waker spins through the gap
 *                                                         (as the lab's CPU 0, running a hog,
 *                                                         takes the interrupt that wakes CPU 1)
 *                                                         instead of sleeping
 *        ./twin tcp ITERS K WORK_US MODE MSG           (d) a loopback TCP ping-pong of MSG bytes,
 *                                                         client on CPU 0, server on CPU 1; every K
 *                                                         exchanges the client's receive does WORK_US
 *                                                         of work itself (MODE inline) or wakes a
 *                                                         nice -20 thread on CPU 0 to do it (MODE
 *                                                         wake): one-way latency (round trip / 2)
 *
 * Output: one line `key=value ...` (ns), parsed by bench/twin.ts. Any failure prints one line on
 * stderr and exits 1 (2 for bad arguments). Every wait loop is bounded by a stop word or a
 * deadline: nothing spins forever.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int64_t i64;

static i64 now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (i64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static i64 thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (i64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "twin: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Pin the calling thread to `cpu` and give it `nice` (per thread: Linux nice is per task). */
static void place(int cpu, int nice)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		die("sched_setaffinity");
	errno = 0;
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) != 0)
		die("setpriority (nice below 0 needs root or CAP_SYS_NICE)");
}

/* Busy for `ns` of wall time (the work W: the CPU is held, as a kworker's 20 µs would hold it). */
static void busy(i64 ns)
{
	i64 end = now_ns() + ns;
	volatile uint32_t x = 0x9e3779b9u;
	while (now_ns() < end)
		for (int i = 0; i < 64; i++)
			x = x * 1664525u + 1013904223u;
}

static long futex(atomic_int *uaddr, int op, int val)
{
	return syscall(SYS_futex, (int *)uaddr, op, val, NULL, NULL, 0);
}

static int cmp_i64(const void *a, const void *b)
{
	i64 x = *(const i64 *)a, y = *(const i64 *)b;
	return (x > y) - (x < y);
}

/* Prints count, p50, p99 and max of `v` (sorted in place). */
/* A wake-up served within 500 µs is prompt: the wake-up path's own cost (no hog: p99 0.3-2 ms
 * here), not a wait for a scheduler tick (4 ms at HZ 250, 1 ms at HZ 1000). bench/twin.ts PROMPT_NS. */
#define PROMPT_NS 500000LL

static void summary(const char *prefix, i64 *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_i64);
	i64 p50 = n ? v[(n - 1) / 2] : -1;
	i64 p99 = n ? v[(int)((n - 1) * 0.99)] : -1;
	i64 max = n ? v[n - 1] : -1;
	i64 p90 = n ? v[(int)((n - 1) * 0.90)] : -1;
	int prompt = 0; /* served within PROMPT_NS (bench/twin.ts: the share of prompt wake-ups) */
	for (int i = 0; i < n; i++)
		if (v[i] <= PROMPT_NS)
			prompt++;
	printf("%scount=%d p50=%lld p90=%lld p99=%lld max=%lld prompt=%d", prefix, n, (long long)p50, (long long)p90,
	       (long long)p99, (long long)max, prompt);
}

/* ---- (a) hogs and a periodic waker on CPU 0 ------------------------------------------------ */

static atomic_int stop_hogs;

struct hog_arg {
	int nice;
	atomic_int ready;
};

static void *hog_main(void *p)
{
	struct hog_arg *a = p;
	place(0, a->nice);
	atomic_store(&a->ready, 1);
	volatile uint32_t x = 1;
	while (!atomic_load_explicit(&stop_hogs, memory_order_relaxed))
		for (int i = 0; i < 1024; i++)
			x = x * 1664525u + 1013904223u;
	return NULL;
}

static int cmd_hogs(int n, int nice, i64 period, i64 work, int iters, const char *cpuseq)
{
	pthread_t th[64];
	struct hog_arg args[64];
	if (n < 0 || n > 64 || period <= 0 || work < 0 || iters <= 0) {
		fprintf(stderr, "twin hogs: N must be 0-64, PERIOD_US > 0, WORK_US >= 0, ITERS > 0\n");
		return 2;
	}
	/* Timer slack 1 ns: the lateness measured is the scheduler's, not the default 50 µs slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	place(0, 0);
	for (int i = 0; i < n; i++) {
		args[i].nice = nice;
		atomic_store(&args[i].ready, 0);
		if (pthread_create(&th[i], NULL, hog_main, &args[i]) != 0)
			die("pthread_create");
	}
	/* The hogs start on whatever CPU; wait (bounded) until each has pinned and reniced itself. */
	for (int i = 0; i < n; i++) {
		i64 give_up = now_ns() + 5000000000LL;
		while (!atomic_load(&args[i].ready)) {
			if (now_ns() > give_up) {
				fprintf(stderr, "twin hogs: hog %d did not start within 5 s\n", i);
				return 1;
			}
			struct timespec ms = {0, 1000000};
			nanosleep(&ms, NULL);
		}
	}
	/* Let the hogs settle for 100 ms (the lab's warm-up plays the same role). */
	struct timespec settle = {0, 100000000};
	nanosleep(&settle, NULL);

	i64 *late = malloc(sizeof(i64) * (size_t)iters);
	/* The waker's CPU in each cycle, wake-up to wake-up (CPUSEQ_FILE): it varies (cache, the
	 * VM's exits on timer programming) around the mean `run`, and near where every wake-up
	 * beside a nice -20 hog waits, the variation decides the share (docs/twin.md). */
	i64 *cycle = malloc(sizeof(i64) * (size_t)iters);
	if (!late || !cycle)
		die("malloc");
	int missed = 0;
	/* The waker's own CPU time over the loop (CLOCK_THREAD_CPUTIME_ID: its work and its system
	 * calls' kernel time, clock_nanosleep's entry and return): what one wake-up costs the CPU. */
	i64 cpu_start = thread_cpu_ns();
	i64 cpu_prev = cpu_start;
	i64 deadline = now_ns() + period;
	for (int k = 0; k < iters; k++) {
		struct timespec ts = {deadline / 1000000000LL, deadline % 1000000000LL};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		i64 t = now_ns();
		late[k] = t - deadline;
		if (cpuseq) {
			i64 c = thread_cpu_ns();
			cycle[k] = c - cpu_prev;
			cpu_prev = c;
		}
		busy(work);
		deadline += period;
		/* A wake-up later than a whole period: its next deadline has passed; skip to the next
		 * one ahead (the lab's driver counts such requests as served by the same run). */
		i64 after = now_ns();
		while (deadline <= after) {
			deadline += period;
			missed++;
		}
	}
	i64 run = (thread_cpu_ns() - cpu_start) / iters;
	atomic_store(&stop_hogs, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	summary("", late, iters);
	printf(" missed=%d run=%lld\n", missed, (long long)run);
	if (cpuseq) {
		/* cycle[0] runs from before the first sleep: the first whole cycle is cycle[1]. */
		FILE *f = fopen(cpuseq, "w");
		if (!f)
			die("fopen CPUSEQ_FILE");
		for (int k = 1; k < iters; k++)
			fprintf(f, "%lld%c", (long long)cycle[k], k + 1 < iters ? ' ' : '\n');
		fclose(f);
	}
	free(late);
	free(cycle);
	return 0;
}

/* ---- (b) ping-pong and shares on CPU 0 ----------------------------------------------------- */

static atomic_int turn; /* 0: ping's turn, 1: pong's; a futex word */
static int pp_iters;

static void *pong_main(void *p)
{
	(void)p;
	place(0, 0);
	for (int k = 0; k < pp_iters; k++) {
		while (atomic_load(&turn) != 1)
			futex(&turn, FUTEX_WAIT_PRIVATE, 0);
		atomic_store(&turn, 0);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static int cmd_pingpong(int iters)
{
	if (iters <= 0) {
		fprintf(stderr, "twin pingpong: ITERS > 0\n");
		return 2;
	}
	pp_iters = iters;
	place(0, 0);
	pthread_t th;
	if (pthread_create(&th, NULL, pong_main, NULL) != 0)
		die("pthread_create");
	i64 *rt = malloc(sizeof(i64) * (size_t)iters);
	if (!rt)
		die("malloc");
	for (int k = 0; k < iters; k++) {
		i64 t0 = now_ns();
		atomic_store(&turn, 1);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
		while (atomic_load(&turn) != 0)
			futex(&turn, FUTEX_WAIT_PRIVATE, 1);
		/* One round trip is two switches on one CPU (ping → pong → ping). */
		rt[k] = (now_ns() - t0) / 2;
	}
	pthread_join(th, NULL);
	summary("", rt, iters);
	printf("\n");
	free(rt);
	return 0;
}

struct share_arg {
	int nice;
	i64 cpu_ns;
};
static atomic_int share_go;

static void *share_main(void *p)
{
	struct share_arg *a = p;
	place(0, a->nice);
	while (!atomic_load(&share_go))
		sched_yield();
	i64 c0 = thread_cpu_ns();
	volatile uint32_t x = 1;
	while (atomic_load_explicit(&share_go, memory_order_relaxed) == 1)
		for (int i = 0; i < 1024; i++)
			x = x * 1664525u + 1013904223u;
	a->cpu_ns = thread_cpu_ns() - c0;
	return NULL;
}

static int cmd_share(int nice_a, int nice_b, int ms)
{
	if (ms <= 0) {
		fprintf(stderr, "twin share: MS > 0\n");
		return 2;
	}
	/* The controller sleeps on CPU 1 (or 0 on a 1-CPU host): it must not take CPU 0's time. */
	place(sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0, 0);
	struct share_arg a = {nice_a, 0}, b = {nice_b, 0};
	pthread_t ta, tb;
	if (pthread_create(&ta, NULL, share_main, &a) != 0 || pthread_create(&tb, NULL, share_main, &b) != 0)
		die("pthread_create");
	struct timespec settle = {0, 50000000};
	nanosleep(&settle, NULL);
	atomic_store(&share_go, 1);
	struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&d, NULL);
	atomic_store(&share_go, 2);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("a_ns=%lld b_ns=%lld\n", (long long)a.cpu_ns, (long long)b.cpu_ns);
	return 0;
}

/* ---- (c) a waker on CPU 0, a futex sleeper on CPU 1 ---------------------------------------- */

static atomic_int cross_word;      /* futex word: the sleeper waits while it is 0 */
static _Atomic i64 cross_woken_at; /* the sleeper's clock when it ran; -1 until then */
static atomic_int cross_done;

static void *sleeper_main(void *p)
{
	(void)p;
	place(1, 0);
	while (!atomic_load(&cross_done)) {
		while (atomic_load(&cross_word) == 0 && !atomic_load(&cross_done))
			futex(&cross_word, FUTEX_WAIT_PRIVATE, 0);
		i64 t = now_ns();
		atomic_store(&cross_word, 0);
		atomic_store(&cross_woken_at, t);
	}
	return NULL;
}

static int cmd_cross(int iters, i64 gap, int busy_gap)
{
	if (iters <= 0 || gap <= 0) {
		fprintf(stderr, "twin cross: ITERS > 0, GAP_US > 0\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "twin cross: needs 2 CPUs\n");
		return 1;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	place(0, 0);
	pthread_t th;
	if (pthread_create(&th, NULL, sleeper_main, NULL) != 0)
		die("pthread_create");
	i64 *lat = malloc(sizeof(i64) * (size_t)iters);
	if (!lat)
		die("malloc");
	int n = 0;
	for (int k = 0; k < iters; k++) {
		/* A gap: the sleeper is back in FUTEX_WAIT and CPU 1 idle when the wake comes. The
		 * waker sleeps through it, or spins (busy: CPU 0 never idles). */
		if (busy_gap) {
			busy(gap);
		} else {
			struct timespec g = {gap / 1000000000LL, gap % 1000000000LL};
			nanosleep(&g, NULL);
		}
		atomic_store(&cross_woken_at, -1);
		i64 t0 = now_ns();
		atomic_store(&cross_word, 1);
		futex(&cross_word, FUTEX_WAKE_PRIVATE, 1);
		i64 give_up = t0 + 1000000000LL;
		i64 t;
		while ((t = atomic_load(&cross_woken_at)) < 0 && now_ns() < give_up)
			;
		if (t >= 0)
			lat[n++] = t - t0;
	}
	atomic_store(&cross_done, 1);
	atomic_store(&cross_word, 1);
	futex(&cross_word, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(th, NULL);
	summary("", lat, n);
	printf(" lost=%d\n", iters - n);
	free(lat);
	return 0;
}

/* ---- (d) loopback TCP with a nice -20 thread woken on the client's CPU ------------------- */

static atomic_int kt_word; /* futex word: the kthread sleeps while it is 0 */
static atomic_int kt_stop;
static atomic_int kt_runs;
static i64 kt_work;

/* The kworker's twin: nice -20 on CPU 0 (system_highpri_wq's workers are nice -20). */
static void *kthread_main(void *p)
{
	(void)p;
	place(0, -20);
	for (;;) {
		while (atomic_load(&kt_word) == 0)
			futex(&kt_word, FUTEX_WAIT_PRIVATE, 0);
		if (atomic_load(&kt_stop))
			return NULL;
		atomic_store(&kt_word, 0);
		busy(kt_work);
		atomic_fetch_add(&kt_runs, 1);
	}
}

/* Read or write exactly `n` bytes; 0 on EOF or error. */
static int full(int fd, char *buf, int n, int wr)
{
	for (int got = 0; got < n;) {
		ssize_t r = wr ? write(fd, buf + got, (size_t)(n - got)) : read(fd, buf + got, (size_t)(n - got));
		if (r <= 0)
			return 0;
		got += (int)r;
	}
	return 1;
}

static int tcp_listen_fd;
static int tcp_msg;

/* qperf's tcp_lat server: echo each message, on CPU 1. */
static void *server_main(void *p)
{
	(void)p;
	place(sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0, 0);
	int fd = accept(tcp_listen_fd, NULL, NULL);
	if (fd < 0)
		die("accept");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	char *buf = malloc((size_t)tcp_msg);
	while (buf && full(fd, buf, tcp_msg, 0) && full(fd, buf, tcp_msg, 1))
		;
	free(buf);
	close(fd);
	return NULL;
}

static int cmd_tcp(int iters, int k, i64 work, const char *mode, int msg)
{
	int wake = strcmp(mode, "wake") == 0;
	if (iters <= 0 || k < 0 || work < 0 || msg <= 0 || msg > (1 << 20) || (!wake && strcmp(mode, "inline") != 0)) {
		fprintf(stderr, "twin tcp: ITERS > 0, K >= 0, WORK_US >= 0, MODE inline|wake, MSG 1..1048576\n");
		return 2;
	}
	tcp_msg = msg;
	kt_work = work;
	tcp_listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t alen = sizeof(a);
	if (tcp_listen_fd < 0 || bind(tcp_listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(tcp_listen_fd, 1) != 0 || getsockname(tcp_listen_fd, (struct sockaddr *)&a, &alen) != 0)
		die("loopback listen");
	place(0, 0);
	pthread_t srv, kt;
	if (pthread_create(&srv, NULL, server_main, NULL) != 0 || pthread_create(&kt, NULL, kthread_main, NULL) != 0)
		die("pthread_create");
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	char *buf = calloc(1, (size_t)msg);
	i64 *lat = malloc(sizeof(i64) * (size_t)iters);
	if (!buf || !lat)
		die("malloc");
	int warm = iters / 10 + 100;
	double sum = 0;
	for (int i = -warm; i < iters; i++) {
		i64 t0 = now_ns();
		if (!full(fd, buf, msg, 1) || !full(fd, buf, msg, 0))
			die("loopback exchange");
		/* The deferred work's trigger, on the client's receive path (the kernel's is its IRQ). */
		if (k > 0 && ((i + warm) % k) == 0) {
			if (wake) {
				atomic_store(&kt_word, 1);
				futex(&kt_word, FUTEX_WAKE_PRIVATE, 1);
			} else {
				busy(work);
			}
		}
		i64 t1 = now_ns();
		if (i >= 0) {
			lat[i] = (t1 - t0) / 2;
			sum += (double)lat[i];
		}
	}
	close(fd);
	pthread_join(srv, NULL);
	atomic_store(&kt_stop, 1);
	atomic_store(&kt_word, 1);
	futex(&kt_word, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(kt, NULL);
	printf("mean=%.0f ", sum / iters);
	summary("", lat, iters);
	printf(" kthread_runs=%d\n", atomic_load(&kt_runs));
	free(lat);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 7 && strcmp(argv[1], "hogs") == 0)
		return cmd_hogs(atoi(argv[2]), atoi(argv[3]), atoll(argv[4]) * 1000, atoll(argv[5]) * 1000, atoi(argv[6]),
				argc >= 8 ? argv[7] : NULL);
	if (argc >= 3 && strcmp(argv[1], "pingpong") == 0)
		return cmd_pingpong(atoi(argv[2]));
	if (argc >= 5 && strcmp(argv[1], "share") == 0)
		return cmd_share(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc >= 4 && strcmp(argv[1], "cross") == 0)
		return cmd_cross(atoi(argv[2]), atoll(argv[3]) * 1000, argc >= 5 && strcmp(argv[4], "busy") == 0);
	if (argc >= 7 && strcmp(argv[1], "tcp") == 0)
		return cmd_tcp(atoi(argv[2]), atoi(argv[3]), atoll(argv[4]) * 1000, argv[5], atoi(argv[6]));
	fprintf(stderr, "usage: twin hogs N NICE PERIOD_US WORK_US ITERS [CPUSEQ_FILE] | pingpong ITERS | share NICE_A NICE_B MS | cross ITERS GAP_US [busy] | tcp ITERS K WORK_US inline|wake MSG\n");
	return 2;
}
