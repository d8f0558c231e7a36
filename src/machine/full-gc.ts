/**
 * A full garbage collection of this thread's heap, where nothing is measured.
 *
 * How: `global.gc` when Node runs with --expose-gc; otherwise V8's flag is set at run time and the
 * collector taken from a fresh context (node:v8 setFlagsFromString + node:vm), a well-worn way to
 * reach it without a command-line flag. Where that fails, nothing is done.
 *
 * Used by the main thread between a sweep's points (src/harness/gc.ts says why) and, through
 * {@link GrowthCollector}, by every machine thread at a trial's end when the process's resident
 * memory has grown: v8.GCProfiler, which the host-stall detector stops and starts at every stall
 * (host-stall.ts, GcProbe), makes a new native profiler at each start; the old one, holding its
 * records, is freed only when V8 collects its JS wrapper, which a machine thread's small heap
 * (under 16 MB) seldom makes it do. At TDF 8 on ed03e62 a default comparison's process grew
 * 60–100 MB per second and was killed by the OOM killer at 24 GB; a loop that stops and starts a
 * GCProfiler every 50 ms while allocating grew to 1 GB in 15 s, and to 66 MB with a full
 * collection every second (docs/architecture.md, "Time dilation").
 *
 * Why not at every trial's end (ebc43fc did that): a forced full collection leaves V8's heap at
 * its smallest, and the next trial paid for it. On a 16-CPU machine (seed-machine's IPoIB CM
 * sub-run, 3 trials, two runs each way, 2026-12-06) the measured phases then held 140–210 GCs of
 * 8.6–13 s in all per strategy, against 20–35 of 11–340 ms without, one-way p99 0.8–1.9 ms
 * against 0.35–0.6 ms, and Δ-mean intervals ±25–35 µs against ±5–10 µs (docs/architecture.md).
 * Context: any thread, between measurements.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

export function collectGarbage(): void {
  if (gc === undefined) {
    const own = (globalThis as { gc?: unknown }).gc;
    if (typeof own === 'function') gc = own as () => void;
    else {
      try {
        setFlagsFromString('--expose-gc');
        const fn = runInNewContext('gc');
        gc = typeof fn === 'function' ? (fn as () => void) : null;
      } catch {
        gc = null;
      }
    }
  }
  gc?.();
}

/**
 * Growth of the process's resident memory (bytes) since a machine thread's last collection, or its
 * start, past which it collects at a trial's end. Why it grows: Node's GCProfiler::Stop
 * (src/node_v8.cc) leaves the profiler's GC callbacks registered, and they do not check its state,
 * so a stopped profiler goes on appending each GC's heap statistics as JSON until its JS wrapper is
 * collected; one per stall look, each recording every later GC. Measured on the child process of a
 * default comparison at TDF 1 with no collection at all (2026-12-06): 144 MB to 4.1 GB in 80 s with
 * a 4 MiB young generation, where a wrapper promoted to the old generation is collected only by a
 * full GC; 147 to 489 MB in 70 s with 16 MiB (`WORKER_YOUNG_MB`, machine.ts: most wrappers then die in a
 * scavenge); flat at ~245 MB with the GC profile off. 256 MiB is then about a minute of growth,
 * far above what a run's own memory moves between trials, and small beside the watchdog's net
 * (75% of the host's memory, src/harness/watchdog.ts).
 */
export const COLLECT_GROWTH_BYTES = 256 * 1024 * 1024;

/**
 * A machine thread's collection at a trial's end, only when resident memory grew past
 * {@link COLLECT_GROWTH_BYTES} since its last one. `rss` and `collect` are the process's and
 * {@link collectGarbage} (tests give fakes). Context: its own thread, between measurements.
 */
export class GrowthCollector {
  private base: number;
  /** Collections made. */
  collections = 0;
  constructor(
    private readonly rss: () => number = process.memoryUsage.rss,
    private readonly collect: () => void = collectGarbage,
    private readonly growth: number = COLLECT_GROWTH_BYTES,
  ) {
    this.base = rss();
  }
  /** A trial ended: collect if resident memory grew past the bound; true when it did. */
  atPause(): boolean {
    if (!(this.rss() >= this.base + this.growth)) return false;
    this.collect();
    this.collections++;
    this.base = this.rss();
    return true;
  }
}
