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
 * How: src/machine/full-gc.ts (the same collector the machine threads use between trials).
 * Context: main thread.
 */
export { collectGarbage } from '../machine/full-gc.js';
