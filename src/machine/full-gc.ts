/**
 * A full garbage collection of this thread's heap, where nothing is measured.
 *
 * How: `global.gc` when Node runs with --expose-gc; otherwise V8's flag is set at run time and the
 * collector taken from a fresh context (node:v8 setFlagsFromString + node:vm), a well-worn way to
 * reach it without a command-line flag. Where that fails, nothing is done.
 *
 * Used by the main thread between a sweep's points (src/harness/gc.ts says why) and by every
 * machine thread when a trial ends (runtime.ts, checkControl at Phase.Pause): v8.GCProfiler, which
 * the host-stall detector stops and starts at every stall (host-stall.ts, GcProbe), makes a new
 * native profiler at each start; the old one, holding its records, is freed only when V8 collects
 * its JS wrapper, which a machine thread's small heap (under 16 MB) seldom makes it do. At TDF 8 a
 * default comparison's process grew 60–100 MB per second and was killed by the OOM killer at 24 GB;
 * a loop that stops and starts a GCProfiler every 50 ms while allocating grew to 1 GB in 15 s, and
 * to 66 MB with a full collection every second (docs/architecture.md, "Time dilation").
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
