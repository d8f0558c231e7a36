/**
 * A full garbage collection of the main thread's heap, between a sweep's points (never while a
 * machine measures).
 *
 * Why: a sweep boots one machine per point, and the main thread's garbage between points is
 * mostly ArrayBuffers (the threads' histogram encodings, a point's compressed merges) whose
 * backing stores live in glibc's main malloc arena. Left to V8's own pace they pile up to tens
 * of MiB before a collection frees them, and the arena keeps the high-water mark (it gives memory
 * back only from its top). Measured with bench/soak.ts --sweep over nine points, with the
 * machine's buffer already kept out of the arenas (MIN_SHM_BYTES, src/shm/layout.ts): the main
 * arena grew 18.7 → 41 MiB without this and the reused merge histograms (machine.ts
 * takeHistogram), 17.8 → 18.4 MiB with both. Collected after each point, the freed blocks are
 * reused by the next.
 *
 * How: `global.gc` when Node runs with --expose-gc; otherwise V8's flag is set at run time and the
 * collector taken from a fresh context (node:v8 setFlagsFromString + node:vm), a well-worn way to
 * reach it without a command-line flag. Where that fails, nothing is done.
 * Context: main thread.
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
