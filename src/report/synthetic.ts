/**
 * Synthetic but realistic-looking results, built from seeded random values recorded into real
 * HDR histograms: for the report's tests, the docs' screenshot, and for trying the report without
 * running the machine. Nothing here is a measurement.
 *
 * Each trial has a machine-noise factor shared by every strategy in that trial (as on a noisy
 * host, where interleaving makes neighbours suffer alike), so paired comparisons behave as they
 * would on real runs.
 */

import { build, encodeIntoCompressedBase64, type Histogram } from 'hdr-histogram-js';
import { summarize, withComparisons } from './stats.js';
import type { PointResult, RunResults, StageName, StrategyResult, Summary, TrialResult } from './types.js';
import { SCHEMA_VERSION } from './types.js';

/** mulberry32: a small, fast, seedable 32-bit PRNG (uniform in [0, 1)). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Latency model of one stage: log-normal body (median, sigma) plus a rare uniform tail up to `tailNs`. */
export interface StageModel {
  medianNs: number;
  sigma: number;
  tailProb: number;
  tailNs: number;
}

export interface SyntheticStrategy {
  label: string;
  name: string;
  kind?: 'builtin' | 'file';
  file?: string;
  stages: Partial<Record<StageName, StageModel>>;
  /** Counter name → events per second of measured time. */
  ratesPerSec: Record<string, number>;
}

const m = (medianNs: number, sigma = 0.25, tailProb = 0.002, tailNs = medianNs * 8): StageModel => ({
  medianNs,
  sigma,
  tailProb,
  tailNs,
});

/** A plausible tcp_lat run: the built-ins with costs in the ranges measured on this kind of host. */
export const DEFAULT_STRATEGIES: SyntheticStrategy[] = [
  {
    label: 'inline',
    name: 'inline',
    stages: { one_way: m(14_000), irq_entry: m(1_300, 0.4), hardirq: m(2_600), handoff_call: m(1_800), work: m(1_700) },
    ratesPerSec: {
      interrupts: 70_000,
      handoffs: 68,
      mixes: 68,
      wakeups: 35_000,
      ctx_switches: 36_000,
      entropy_bits: 1_100,
    },
  },
  {
    label: 'workqueue',
    name: 'workqueue',
    stages: {
      one_way: m(16_500, 0.3, 0.004),
      irq_entry: m(1_300, 0.4),
      hardirq: m(900),
      handoff_call: m(350),
      handoff_to_start: m(29_000, 0.45, 0.01, 400_000),
      work: m(1_800),
      ctx_switch: m(14_000, 0.35),
    },
    ratesPerSec: {
      interrupts: 68_000,
      handoffs: 66,
      mixes: 66,
      wakeups: 35_100,
      ctx_switches: 36_200,
      entropy_bits: 1_050,
    },
  },
  {
    label: 'tasklet',
    name: 'tasklet',
    stages: {
      one_way: m(14_300),
      irq_entry: m(1_300, 0.4),
      hardirq: m(850),
      handoff_call: m(120),
      handoff_to_start: m(900, 0.3),
      work: m(1_700),
      softirq: m(2_200),
    },
    ratesPerSec: {
      interrupts: 69_500,
      handoffs: 68,
      mixes: 68,
      wakeups: 35_000,
      ctx_switches: 36_000,
      entropy_bits: 1_090,
    },
  },
  {
    label: 'timer',
    name: 'timer',
    stages: {
      one_way: m(14_200),
      irq_entry: m(1_300, 0.4),
      hardirq: m(860),
      handoff_call: m(200),
      handoff_to_start: m(480_000, 0.5, 0.001, 1_000_000),
      work: m(1_700),
      softirq: m(2_100),
    },
    ratesPerSec: {
      interrupts: 69_800,
      handoffs: 68,
      mixes: 68,
      wakeups: 35_000,
      ctx_switches: 36_000,
      timer_expiries: 68,
      entropy_bits: 1_090,
    },
  },
  {
    label: 'irq_work',
    name: 'irq_work',
    stages: {
      one_way: m(14_600),
      irq_entry: m(1_300, 0.4),
      hardirq: m(870),
      handoff_call: m(260),
      handoff_to_start: m(3_200, 0.5),
      work: m(1_750),
    },
    ratesPerSec: {
      interrupts: 69_000,
      handoffs: 67,
      mixes: 67,
      wakeups: 35_000,
      ipis: 67,
      ctx_switches: 36_000,
      entropy_bits: 1_070,
    },
  },
];

export interface SyntheticOptions {
  seed?: number;
  trials?: number;
  /** Samples per stage per trial. */
  samples?: number;
  strategies?: SyntheticStrategy[];
  /** One point per value of `msg_size`; without it, one point and no sweep. */
  msgSizes?: number[];
  /** Measured time of each trial, ns. */
  trialNs?: number;
  status?: RunResults['status'];
}

function newHistogram(): Histogram {
  return build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

/**
 * Build a complete, valid RunResults (comparisons filled in) from seeded random values.
 * Context: main thread; deterministic for a given seed and options.
 */
export function syntheticResults(opts: SyntheticOptions = {}): RunResults {
  const seed = opts.seed ?? 1;
  const rnd = mulberry32(seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const trials = opts.trials ?? 5;
  const samples = opts.samples ?? 2000;
  const strategies = opts.strategies ?? DEFAULT_STRATEGIES;
  const trialNs = opts.trialNs ?? 2_000_000_000;
  const sizes = opts.msgSizes ?? [];

  const point = (params: Record<string, number>, sizeFactor: number): PointResult => {
    // One noise factor per trial, shared by all strategies: the drift interleaving cancels.
    const drift = Array.from({ length: trials }, () => Math.exp(0.05 * normal()));
    const out: StrategyResult[] = strategies.map((st, si) => {
      const merged: StrategyResult['merged'] = {};
      const mergedH = new Map<StageName, Histogram>();
      const trialResults: TrialResult[] = [];
      const counters: Record<string, number> = {};
      for (let t = 0; t < trials; t++) {
        const stages: Partial<Record<StageName, Summary>> = {};
        for (const [stage, model] of Object.entries(st.stages) as Array<[StageName, StageModel]>) {
          const h = newHistogram();
          const own = Math.exp(0.02 * normal()); // this trial's own noise
          const scale = drift[t] * own * (stage === 'one_way' ? sizeFactor : 1);
          for (let i = 0; i < samples; i++) {
            const v =
              rnd() < model.tailProb
                ? model.medianNs + rnd() * (model.tailNs - model.medianNs)
                : model.medianNs * Math.exp(model.sigma * normal());
            h.recordValue(Math.max(1, Math.round(v * scale)));
          }
          stages[stage] = summarize(h);
          let mh = mergedH.get(stage);
          if (!mh) {
            mh = newHistogram();
            mergedH.set(stage, mh);
          }
          mh.add(h);
        }
        const trialCounters: Record<string, number> = {};
        for (const [name, perSec] of Object.entries(st.ratesPerSec)) {
          const v = Math.round(perSec * (trialNs / 1e9) * (0.97 + 0.06 * rnd()));
          trialCounters[name] = v;
          counters[name] = (counters[name] ?? 0) + v;
        }
        trialResults.push({
          index: t,
          order: t * strategies.length + si,
          durationNs: trialNs,
          stages,
          counters: trialCounters,
        });
      }
      for (const [stage, h] of mergedH)
        merged[stage] = { summary: summarize(h), histogram: encodeIntoCompressedBase64(h) };
      const seconds = (trials * trialNs) / 1e9;
      const rates = Object.fromEntries(Object.entries(counters).map(([k, v]) => [k, v / seconds]));
      return {
        label: st.label,
        name: st.name,
        kind: st.kind ?? 'builtin',
        ...(st.file ? { file: st.file } : {}),
        options: {},
        description: `synthetic ${st.name}`,
        trials: trialResults,
        merged,
        counters,
        rates,
      };
    });
    return { params, strategies: out };
  };

  const points = sizes.length ? sizes.map((s) => point({ msg_size: s }, 1 + s / 65536)) : [point({}, 1)];
  const results: RunResults = {
    schemaVersion: SCHEMA_VERSION,
    status: opts.status ?? 'completed',
    meta: {
      deferlab: '0.1.0',
      node: process.version,
      v8: process.versions.v8,
      platform: process.platform,
      arch: process.arch,
      cpuModel: 'synthetic CPU',
      hostCores: 2,
      threads: 7,
      startedAt: '2025-01-01T00:00:00.000Z',
      finishedAt: '2025-01-01T00:01:00.000Z',
      seed,
      command: ['deferlab', 'run', '--synthetic'],
      topology: { cpus: 2 },
      options: { trials, samples, workload: 'tcp_lat' },
    },
    baseline: strategies[0].label,
    sweep: sizes.length ? { param: 'msg_size', values: sizes } : null,
    points,
  };
  return withComparisons(results);
}
