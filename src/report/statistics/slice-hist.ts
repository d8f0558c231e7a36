/**
 * A slice's histogram, kept small enough to store for every slice: counts on logarithmic bins of
 * 2^(1/64) (1.09% wide), sparse (only the bins that hold samples). The tail comparisons resample
 * slice cycles and merge these (tails.ts): the quantiles they give are the merged histogram's,
 * at 1.09% resolution, never an average of per-slice percentiles.
 *
 * Why 64 bins per octave: the tail intervals on a default run are ±5–40% of the baseline's p99
 * (docs/results.md), so a 1.09% bin adds well under a tenth of an interval's width; and a 100 ms
 * slice of tcp_lat (~3,000 samples from 2 µs to ms) fills ~100–250 such bins, against ~1,000
 * HdrHistogram buckets at 3 significant digits: results.json stays a few MB.
 *
 * Which stages: only {@link TAIL_STAGES}, the ones a summary table or a scenario judges (one_way,
 * the fallback handoff_to_start, cpu-hog's request_to_start); the other stages' tails are
 * compared trial by trial (stats.ts) and say so in their `method`.
 */
import type { Histogram } from 'hdr-histogram-js';
import type { StageName } from '../types.js';

/** Bins per doubling of the latency. */
export const BINS_PER_OCTAVE = 64;

/** The stages whose slices keep a binned histogram. */
export const TAIL_STAGES: readonly StageName[] = ['one_way', 'handoff_to_start', 'request_to_start'];

/** The bin of a value (ns, > 0); values below 1 ns go to bin 0. */
export function binOf(valueNs: number): number {
  return valueNs >= 1 ? Math.round(BINS_PER_OCTAVE * Math.log2(valueNs)) : 0;
}

/** A bin's representative value, ns (its centre on the log scale). */
export function binValue(bin: number): number {
  return 2 ** (bin / BINS_PER_OCTAVE);
}

interface CountsAccess {
  countsArrayLength: number;
  countsArrayIndex(value: number): number;
  getCountAtIndex(index: number): number;
  valueFromIndex(index: number): number;
  medianEquivalentValue(value: number): number;
}

/** `1042:3 1:17 2:40`: ascending bins (the first absolute, then steps) with their counts. */
export function encodeBins(bins: readonly number[], counts: readonly number[]): string {
  let out = '';
  for (let i = 0; i < bins.length; i++) {
    out += `${i ? ' ' : ''}${i ? bins[i] - bins[i - 1] : bins[i]}:${counts[i]}`;
  }
  return out;
}

/** The inverse of {@link encodeBins}; undefined for a malformed string. */
export function decodeBins(s: string): { bins: number[]; counts: number[] } | undefined {
  const bins: number[] = [];
  const counts: number[] = [];
  if (s === '') return { bins, counts };
  let prev = 0;
  for (const pair of s.split(' ')) {
    const colon = pair.indexOf(':');
    const b = Number(pair.slice(0, colon));
    const c = Number(pair.slice(colon + 1));
    if (colon < 0 || !Number.isInteger(b) || !Number.isInteger(c) || c < 0) return undefined;
    prev = bins.length ? prev + b : b;
    bins.push(prev);
    counts.push(c);
  }
  return { bins, counts };
}

/** One slice's digest: its mean and, when asked, its binned histogram (ascending bins). */
export interface SliceDigest {
  mean: number;
  bins?: number[];
  counts?: number[];
}

/**
 * The mean of `h` (as histogramMean in stats.ts computes it) and, with `binned`, its sparse
 * log-binned counts, in one pass over the histogram's buckets up to its maximum. Empty: NaN
 * mean. A histogram without counts access (the WASM build): the mean from its getter, no bins.
 * Context: main thread, after each slice (round.ts); allocates the two arrays only.
 */
export function sliceDigest(h: Histogram, binned: boolean): SliceDigest {
  const total = h.totalCount;
  if (total === 0) return { mean: Number.NaN };
  const c = h as unknown as Partial<CountsAccess>;
  if (typeof c.getCountAtIndex !== 'function' || typeof c.countsArrayIndex !== 'function') return { mean: h.mean };
  const a = c as CountsAccess;
  const top = Math.min(a.countsArrayLength - 1, a.countsArrayIndex(h.maxValue));
  let sum = 0;
  const bins: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i <= top; i++) {
    const n = a.getCountAtIndex(i);
    if (n === 0) continue;
    const v = a.medianEquivalentValue(a.valueFromIndex(i));
    sum += n * v;
    if (!binned) continue;
    const b = binOf(v);
    // Buckets ascend, so a bin's buckets are adjacent.
    if (bins.length > 0 && bins[bins.length - 1] === b) counts[counts.length - 1] += n;
    else {
      bins.push(b);
      counts.push(n);
    }
  }
  return binned ? { mean: sum / total, bins, counts } : { mean: sum / total };
}
