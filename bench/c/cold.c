/*
 * How fast this host forgets a working set (docs/twin.md, "(c) in three parts"): a thread spins
 * on the clock for P ms, never sleeping, then reads one cache line in each of N pages, and times
 * the reads; p50 and p90 of 200 such rounds (fewer for long P) for each P. A working set the
 * caches and TLB still hold reads in well under a microsecond; one they have lost costs a miss
 * (and a page walk) per line. The lab's emulated kernel runs its rare paths (an interrupt every
 * 5 ms, a wake-up of an idle CPU) after such a gap.
 *
 *   cc -O2 -o /tmp/cold-c bench/c/cold.c && /tmp/cold-c       # N = 256 pages, then 1 page of 64 lines
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define PAGES 256
#define STRIDE (3 * 4096) /* a page apart and more, so that no two lines share a page */

static volatile char *mem;

/* Read `lines` lines: one per page (spread) or all in the first page. */
static double touch(int lines, int spread) {
  double t0 = now_ns();
  long s = 0;
  for (int i = 0; i < lines; i++) s += mem[spread ? (long)i * STRIDE + (i % 64) * 64 : i * 64];
  double t = now_ns() - t0;
  if (s == 42) puts(""); /* keep the reads */
  return t;
}

int main(void) {
  mem = calloc((size_t)PAGES * STRIDE, 1);
  if (!mem) return 1;
  for (long i = 0; i < (long)PAGES * STRIDE; i += 4096) mem[i] = 1; /* fault every page in */
  const double periods[] = {0.05, 0.5, 2, 5, 20};
  const struct { int lines, spread; const char *what; } sets[] = {
      {PAGES, 1, "256 lines, one per page"},
      {64, 0, "64 lines of one page"},
  };
  static double d[200];
  for (int s = 0; s < 2; s++)
    for (int p = 0; p < 5; p++) {
      int n = periods[p] > 10 ? 100 : 200;
      for (int k = 0; k < n; k++) {
        double end = now_ns() + periods[p] * 1e6;
        while (now_ns() < end) {
        }
        d[k] = touch(sets[s].lines, sets[s].spread);
      }
      qsort(d, n, sizeof d[0], cmp);
      printf("%-24s after %5.2f ms of spinning: p50 %6.2f us, p90 %6.2f us\n", sets[s].what, periods[p],
             d[n / 2] / 1e3, d[n * 9 / 10] / 1e3);
    }
  return 0;
}
