/**
 * The realistic model (realistic.ts) for a whole run's family: a baseline and `candidates` A/A
 * copies in every slice cycle (a random order per cycle, each run's stall probability drawn as
 * realistic.ts draws it, the host's speed flipping between any two sides), judged as
 * `deferlab run` judges them: Holm over the Δ means, Benjamini-Hochberg over the tails, the
 * --threshold band (family.ts). Counts the runs with any call (the family-wise false-call rate)
 * and the calls per statistic. Pure and seeded; for bench/aa-model.ts and docs/results.md.
 */
import type { ComparableMetric, Comparison } from '../types.js';
import { adjustPoint } from './family.js';
import { intervalOf } from './interval.js';
import { mulberry32 } from './prng.js';
import { cycleStalls, MODEL_DEFAULTS, modelPairs, runStall, type SideSlice, sampler, sideSlice } from './realistic.js';
import { BINS_PER_OCTAVE } from './slice-hist.js';
import { compareSlices } from './slices.js';
import { binRange, bootQuantiles, type CycleHists, TAIL_METRICS, woodruffSe } from './tails.js';

export interface FamilyCalibration {
  runs: number;
  /** Runs with any call, Δ mean or tail. */
  anyCall: number;
  /** Runs in which any unadjusted 95% interval excluded 0 (no family, no band: the old rule). */
  anyRaw: number;
  /** Calls per statistic, over runs × candidates. */
  called: Record<ComparableMetric, number>;
  tests: Record<ComparableMetric, number>;
}

/** `runs` simulated A/A runs of `candidates` copies against the baseline. */
export function calibrateFamily(
  runs: number,
  candidates: number,
  seed: number,
  thresholdPct: number,
): FamilyCalibration {
  const rnd = mulberry32(seed);
  const { normal, quantile } = sampler(rnd);
  const o = MODEL_DEFAULTS;
  const scratch = new Int32Array(BINS_PER_OCTAVE * 48);
  const slice = (factor: number, stall: number): SideSlice => sideSlice(rnd, quantile, scratch, o, factor, stall, 0);
  const zero = () => ({ mean: 0, p50: 0, p90: 0, p99: 0, p99_9: 0 });
  const out: FamilyCalibration = { runs, anyCall: 0, anyRaw: 0, called: zero(), tests: zero() };
  const k = candidates + 1;
  for (let r = 0; r < runs; r++) {
    const sides: SideSlice[][] = Array.from({ length: k }, () => []);
    let level = rnd() < 0.5 ? 1 : 1.16;
    const stall = runStall(rnd, o.stall);
    for (let j = 0; j < o.trials * o.slices; j++) {
      const shared = Math.exp(0.25 * normal());
      const order = Array.from({ length: k }, (_, i) => i);
      for (let i = k - 1; i > 0; i--) {
        const x = Math.floor(rnd() * (i + 1));
        [order[i], order[x]] = [order[x], order[i]];
      }
      const flip = rnd() < 0.1 ? Math.floor(rnd() * k) : -1; // before the side at that position
      const stalls = cycleStalls(rnd, normal, stall, k);
      for (let pos = 0; pos < k; pos++) {
        if (pos === flip) level = level === 1 ? 1.16 : 1;
        sides[order[pos]].push(slice(level * shared * Math.exp(0.2 * normal()), stalls[pos]));
      }
    }
    const base = sides[0];
    const hb: CycleHists = base;
    const all = [Int32Array.from(hb.keys())];
    const pb = bootQuantiles(hb, all, binRange([hb]));
    const family = sides.slice(1).map((cand, ci) => {
      const comparison: Comparison[] = [];
      const { n: _n, ...mean } = compareSlices(modelPairs(base, cand));
      comparison.push({ stage: 'one_way', metric: 'mean', ...mean });
      const pc = bootQuantiles(cand, all, binRange([cand]));
      const se = woodruffSe(hb, cand);
      for (const [m] of TAIL_METRICS) {
        const { n: _m, ...t } = intervalOf(
          { n: hb.length, baseline: pb[m][0], value: pc[m][0], diff: pc[m][0] - pb[m][0], df: se[m].df },
          se[m].se,
          'lower',
          () => '',
        );
        comparison.push({ stage: 'one_way', metric: m, ...t });
      }
      return { label: `copy${ci}`, comparison };
    });
    if (family.some((c) => c.comparison.some((x) => x.verdict !== 'within-noise'))) out.anyRaw++;
    let any = false;
    for (const c of adjustPoint(family, thresholdPct)) {
      for (const x of c.comparison) {
        if (!Number.isFinite(x.ciLow)) continue;
        out.tests[x.metric]++;
        if (x.verdict !== 'within-noise') {
          out.called[x.metric]++;
          any = true;
        }
      }
    }
    if (any) out.anyCall++;
  }
  return out;
}
