/**
 * The main thread's merge histograms, reused across collects (Machine.collect takes them; the
 * harness gives them back when a slice or point is done).
 *
 * Context: main thread only.
 */
import type { Histogram } from 'hdr-histogram-js';
import { newHistogram } from '../hw/trace.js';

/** Merge histograms handed back by {@link releaseHistograms}, kept for the next collect(). */
const spareHistograms: Histogram[] = [];

/**
 * A main-thread merge histogram (JS, 64-bit counts: a 224 KiB counts array): a released one,
 * reset, or a new one. A sweep merges a few hundred per point; allocated anew each time and
 * left to the garbage collector, they fragmented glibc's main malloc arena, which kept ~30 MiB
 * more after a 9-point sweep than after its first point (bench/soak.ts --sweep).
 */
export function takeHistogram(): Histogram {
  return spareHistograms.pop() ?? newHistogram(false); // the encoding is portable: merge as JS
}

/** Hand merge histograms back for reuse; the caller keeps no reference to them. */
export function releaseHistograms(hs: Iterable<Histogram | undefined>): void {
  for (const h of hs) {
    if (!h) continue;
    h.reset();
    spareHistograms.push(h);
  }
}
