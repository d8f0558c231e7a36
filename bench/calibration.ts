/**
 * `npm run bench:calibration`: the run's comparison methods on the realistic model
 * (src/report/statistics/realistic.ts), at as many simulated runs as it takes to tell a method's
 * bias from the noise of the count: docs/results.md's "Tested coverage on realistic data" tables.
 * Per statistic (mean, p50, p90, p99, p99.9), for A/A runs (seed S) and runs shifted by SHIFT ns
 * on every sample (seed S + 1):
 *
 * - coverage: the share of 95% intervals that held the true difference (0, or the shift), with its
 *   binomial sd; "called": the share that excluded 0;
 * - why a coverage is off, as three figures: the estimate's bias (mean of diff − truth, ns); the
 *   interval's standard error against the estimate's real spread, rms(se) / sd(diff) (1 when the
 *   method sizes its standard errors right; the t it multiplies them by is the df's affair); and
 *   the misses on each side (a skewed statistic misses more on one side).
 *
 * Pure simulation, seeded: the same figures on any machine; 10,000 runs take ~1.5 min a side here.
 *
 *   npm run bench:calibration                       # 10,000 runs a side, seeds 51/52, shift 2 µs
 *   npm run bench:calibration -- --runs 1000 --seed 21
 *
 * Nothing here asserts: test/report/calibration-realistic.test.ts holds the bars at 500 runs.
 */
import { parseArgs } from 'node:util';
import { calibrateRealistic, MODEL_DEFAULTS, type StatCalibration } from '../src/report/statistics/realistic.js';
import { TAIL_METHOD, type TailMethod } from '../src/report/statistics/tails.js';
import { type BenchUsage, benchArgs, refuse } from './cli.js';
import { isMain, table } from './lib.js';

export const USAGE: BenchUsage = {
  script: 'bench:calibration',
  about:
    'The comparison methods on the realistic model (simulated runs drawn from a real one: docs/results.md, "Tested coverage on realistic data"): per statistic, coverage of the truth, the share called, and why a coverage is off (bias, rms(se)/sd(diff), misses low and high), for A/A runs and runs shifted by a known amount. Pure and seeded; 10,000 runs a side take about 1.5 min on this 2-core VM.',
  flags: [
    { flag: '--runs', value: 'N', help: 'simulated runs per side (10000; binomial sd of a 95% coverage: 0.22 points)' },
    { flag: '--seed', value: 'N', help: 'the A/A side’s seed; the shifted side uses N + 1 (51)' },
    { flag: '--shift', value: 'NS', help: 'the candidate’s shift on every sample, ns (2000: 8.5% of the model’s p50)' },
    {
      flag: '--stall',
      value: 'P',
      help: "a slice's stall probability, 0 to 0.5, fixed for every run (default: each run's drawn from the real batch's per-run shares, realistic.ts STALLS)",
    },
    {
      flag: '--tail-df',
      value: 'M',
      help: `the tails' degrees of freedom: kurtosis (the run's since 2026-12-06) or cycles (N − 1, before) (${TAIL_METHOD.df})`,
    },
    {
      flag: '--tail-density',
      value: 'M',
      help: `the density at a tail quantile: log or linear (before 2026-12-06) secant (${TAIL_METHOD.density})`,
    },
  ],
};

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** One statistic's figures: the table's row. */
export function diagnose(c: StatCalibration, truth: number): string[] {
  const n = c.diff.length;
  let sum = 0;
  for (const d of c.diff) sum += d;
  const mean = sum / n;
  let ss = 0;
  let se2 = 0;
  let low = 0;
  let high = 0;
  for (let i = 0; i < n; i++) {
    ss += (c.diff[i] - mean) ** 2;
    se2 += c.se[i] ** 2;
    if (c.diff[i] + c.half[i] < truth) low++;
    else if (c.diff[i] - c.half[i] > truth) high++;
  }
  const sd = Math.sqrt(ss / (n - 1));
  const cov = c.covered / c.n;
  return [
    `${pct(cov)} ± ${(100 * Math.sqrt((cov * (1 - cov)) / c.n)).toFixed(2)}`,
    pct(c.called / c.n),
    `${(mean - truth).toFixed(0)}`,
    `${sd.toFixed(0)}`,
    (Math.sqrt(se2 / n) / sd).toFixed(3),
    pct(low / n),
    pct(high / n),
  ];
}

export function main(argv: string[]): void {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      seed: { type: 'string' },
      shift: { type: 'string' },
      stall: { type: 'string' },
      'tail-df': { type: 'string' },
      'tail-density': { type: 'string' },
    },
  });
  const bad = (line: string): never => refuse('bench:calibration', line);
  const oneOf = <T extends string>(name: string, v: string | undefined, dflt: T, allowed: readonly T[]): T =>
    v === undefined
      ? dflt
      : allowed.includes(v as T)
        ? (v as T)
        : bad(`--${name} must be ${allowed.join(' or ')} (got ${v})`);
  const method: TailMethod = {
    df: oneOf('tail-df', values['tail-df'], TAIL_METHOD.df, ['kurtosis', 'cycles']),
    density: oneOf('tail-density', values['tail-density'], TAIL_METHOD.density, ['log', 'linear']),
  };
  const stall = values.stall === undefined ? MODEL_DEFAULTS.stall : Number(values.stall);
  if (values.stall !== undefined && !(stall >= 0 && stall <= 0.5))
    bad(`--stall must be a probability from 0 to 0.5 (got ${values.stall})`);
  const num = (name: string, v: string | undefined, dflt: number, min: number): number => {
    if (v === undefined) return dflt;
    const x = Number(v);
    if (!Number.isInteger(x) || x < min) bad(`--${name} must be an integer of at least ${min} (got ${v})`);
    return x;
  };
  const runs = num('runs', values.runs, 10_000, 10);
  const seed = num('seed', values.seed, 51, 0);
  const shift = num('shift', values.shift, 2000, 0);
  console.log(
    `model: stalls ${stall >= 0 ? `fixed at ${stall}` : 'drawn per run from a real batch'}; tails: ${method.df === 'kurtosis' ? 'kurtosis-matched df' : 'N − 1 df'}, ${method.density} density secant`,
  );
  const header = ['statistic', 'coverage', 'called', 'bias ns', 'sd(diff) ns', 'rms(se)/sd', 'miss low', 'miss high'];
  for (const [label, s, truth] of [
    [`A/A, seed ${seed}`, seed, 0],
    [`shifted by ${shift} ns, seed ${seed + 1}`, seed + 1, shift],
  ] as const) {
    const t0 = performance.now();
    const r = calibrateRealistic({ runs, shiftNs: truth, seed: s, stall }, method);
    const rows = Object.entries(r).map(([m, c]) => [m, ...diagnose(c, truth)]);
    console.log(`${label}: ${runs} runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (const line of table(header, rows)) console.log(line);
    console.log('');
  }
  console.log('coverage bar (issue 27): 93–97% for the mean and each tail');
}

if (isMain(import.meta.url)) main(benchArgs(USAGE));
