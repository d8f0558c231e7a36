/**
 * Explained exchanges reduced as they are read, so memory stays bounded over a whole run: per
 * strategy, log-latency buckets (1% wide) each holding a count, the sum of its latencies and the
 * sum of each cause. A bucket's cause sums add up to its latency sum (each exchange's do), so any
 * band of ranks (the slowest 1%, the median) is decomposed exactly, up to the one bucket the
 * band cuts, which is taken pro rata.
 *
 * Context: main thread.
 */
import type { ExplainBucketRow, ExplainSeries } from '../types.js';
import type { Explained } from './attribute.js';

export type { ExplainSeries };

/** Bucket width: a factor of 1.01 (1%). */
export const BUCKET_BASE = 1.01;
const LOG_BASE = Math.log(BUCKET_BASE);

/** One bucket as results.json stores it. */
export type BucketRow = ExplainBucketRow;

/** A band of ranks decomposed. */
export interface Decomposed {
  /** Exchanges in the band (fractional where it cuts a bucket). */
  count: number;
  /** Their mean latency, ns. */
  latencyNs: number;
  /** Mean ns per cause; they add up to latencyNs. */
  causes: Record<string, number>;
}

export class CauseBuckets {
  readonly causes: string[] = [];
  private readonly index = new Map<string, number>();
  private readonly rows = new Map<number, { n: number; lat: number; sums: number[] }>();
  count = 0;
  unexplained = 0;

  constructor(
    readonly label: string,
    readonly kind: 'exchange' | 'handoff',
  ) {}

  add(e: Explained): void {
    const b = e.latencyNs > 1 ? Math.floor(Math.log(e.latencyNs) / LOG_BASE) : 0;
    let row = this.rows.get(b);
    if (!row) {
      row = { n: 0, lat: 0, sums: [] };
      this.rows.set(b, row);
    }
    row.n++;
    row.lat += e.latencyNs;
    for (const [cause, ns] of e.causes) {
      let k = this.index.get(cause);
      if (k === undefined) {
        k = this.causes.length;
        this.causes.push(cause);
        this.index.set(cause, k);
      }
      while (row.sums.length <= k) row.sums.push(0);
      row.sums[k] += ns;
    }
    this.count++;
  }

  series(): ExplainSeries {
    const buckets = [...this.rows.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([i, r]) => [i, r.n, r.lat, ...this.causes.map((_, k) => r.sums[k] ?? 0)]);
    return {
      label: this.label,
      kind: this.kind,
      count: this.count,
      unexplained: this.unexplained,
      causes: [...this.causes],
      buckets,
    };
  }
}

/**
 * The exchanges of ranks [lo·n, hi·n) (fractions of the count, ascending latency) decomposed:
 * `band(s, 0.99, 1)` is the slowest 1%, `band(s, 0.495, 0.505)` the middle 1%.
 */
export function band(s: ExplainSeries, lo: number, hi: number): Decomposed {
  const n = s.buckets.reduce((a, r) => a + r[1], 0);
  const from = lo * n;
  const to = Math.max(hi * n, from + Math.min(1, n));
  let cum = 0;
  let count = 0;
  let lat = 0;
  const sums = s.causes.map(() => 0);
  for (const r of s.buckets) {
    const a = cum;
    const b = cum + r[1];
    cum = b;
    const take = Math.min(b, to) - Math.max(a, from);
    if (take <= 0) continue;
    const f = take / r[1];
    count += take;
    lat += r[2] * f;
    for (let k = 0; k < s.causes.length; k++) sums[k] += (r[3 + k] ?? 0) * f;
  }
  const causes: Record<string, number> = {};
  s.causes.forEach((c, k) => {
    if (count > 0 && sums[k] !== 0) causes[c] = sums[k] / count;
  });
  return { count, latencyNs: count > 0 ? lat / count : Number.NaN, causes };
}

/** `a` − `b`, cause by cause (a cause only one has counts as 0 in the other). */
export function delta(a: Decomposed, b: Decomposed): Decomposed {
  const causes: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a.causes), ...Object.keys(b.causes)]))
    causes[k] = (a.causes[k] ?? 0) - (b.causes[k] ?? 0);
  return { count: a.count, latencyNs: a.latencyNs - b.latencyNs, causes };
}
