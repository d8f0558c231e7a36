/**
 * `npm run bench:aa`: the lab's verdicts on the real machine when nothing differs. Each run
 * compares the built-in `inline` (the baseline) with several A/A copies of it written as a user
 * would from docs/strategies.md (bench/strategies/my-inline.ts, one instance per `copy=N`),
 * interleaved and sliced exactly as `deferlab run` does, and adjusted as one family (Holm over the
 * Δ means, Benjamini-Hochberg over the tails, the --threshold band: family.ts). Every call is a
 * false call. It prints:
 *
 * - the family-wise false-call rate: runs with any call in the table's stage (Δ mean or tail);
 * - the per-test rate, per statistic (mean, p50, p90, p99, p99.9), with the adjustment and, for
 *   comparison, unadjusted (the p-value below 0.05);
 * - a Kolmogorov-Smirnov test that each statistic's unadjusted p-values are uniform (as they are
 *   under the null when the method is calibrated). The copies of one run share the baseline, so
 *   their p-values are correlated: the KS p-value is then approximate (the D statistic is not).
 * - what the comparisons cost: withComparisons's time on each run's results;
 * - the runs' stalls (src/report/statistics/stall-profile.ts): how many slices stalled, how deep,
 *   per run and per position in the cycle, as tables the realistic model's stalls are drawn from.
 *
 *   npm run bench:aa -- --runs 100                  # the issue's bar: ≥ 100 runs (~1 min each)
 *   npm run bench:aa -- --runs 3 --duration 200ms   # a smoke run
 *
 * Options: --runs N (100), --copies N (4 A/A copies per run), --trials N (5), --duration TIME
 * (1s), --warmup TIME (300ms), --slice TIME (100ms), --threshold PCT (deferlab run's default),
 * --seed N (first run's; run i uses seed+i), --max-minutes M (start no run after M minutes: on a
 * busy host, as many runs as the time allows; the summary says how many ran), --save DIR (each
 * completed run's results as DIR/run-N.json, readable by readResultsFile, so a method can be
 * tried again on the same runs without running them again), --from DIR (judge the runs a --save
 * left in DIR again with this build's statistics: the figures below for those runs, nothing run).
 * The issue's bars: family-wise ≤ 10% of runs; each per-test rate 2–8% (unadjusted: a test that
 * never fires has no power either).
 *
 * Nothing here asserts: it measures and prints.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../src/config/schema.js';
import { runExperiment } from '../src/harness/run.js';
import { readResultsFile } from '../src/report/run/write.js';
import { addRun, newStallTally, stallLines } from '../src/report/statistics/stall-profile.js';
import { withComparisons } from '../src/report/statistics/stats.js';
import { COMPARABLE_METRICS, type ComparableMetric, type RunResults } from '../src/report/types.js';
import { type BenchUsage, benchArgs, refuse as refuseBench } from './cli.js';
import { isMain } from './lib.js';

/**
 * Why a saved run is not one bench:aa judges, or undefined: it must have completed, with inline as
 * its baseline and only A/A copies of it (bench/strategies/my-inline.ts) beside it, as bench:aa
 * runs them; anything else would count a real difference as a false call.
 */
export function notAnAaRun(r: RunResults): string | undefined {
  if (r.status !== 'completed') return `its status is ${r.status}, not completed`;
  if (r.baseline !== 'inline') return `its baseline is ${r.baseline}, not inline`;
  const point = r.points[0];
  const others = (point?.strategies ?? []).filter((s) => s.label !== 'inline');
  if (others.length === 0) return 'it holds no A/A copy of inline';
  const notCopy = others.find((s) => !/^my-inline\.ts\b/.test(s.label));
  if (notCopy) return `${notCopy.label} is not an A/A copy of inline (bench/strategies/my-inline.ts)`;
  return undefined;
}

/** The run-N.json files a --save left in `dir`, in N's order; [] when it cannot be read. */
export function savedRuns(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const n = (f: string) => Number(/^run-(\d+)\.json$/.exec(f)?.[1]);
  return names.filter((f) => Number.isInteger(n(f))).sort((a, b) => n(a) - n(b));
}

/** 95% Wilson score interval of a proportion k/n. */
export function wilson(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959963984540054;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - h), Math.min(1, c + h)];
}

/**
 * One-sample Kolmogorov-Smirnov test of `xs` against U(0, 1): D = sup |F_n − F|, and its
 * asymptotic p-value (Kolmogorov's distribution at (√n + 0.12 + 0.11/√n)·D, Stephens 1970).
 */
export function ksUniform(xs: readonly number[]): { d: number; p: number; n: number } {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return { d: Number.NaN, p: Number.NaN, n };
  let d = 0;
  for (let i = 0; i < n; i++) d = Math.max(d, (i + 1) / n - s[i], s[i] - i / n);
  const t = (Math.sqrt(n) + 0.12 + 0.11 / Math.sqrt(n)) * d;
  let p = 0;
  for (let k = 1; k <= 100; k++) p += 2 * (-1) ** (k - 1) * Math.exp(-2 * k * k * t * t);
  return { d, p: Math.min(1, Math.max(0, p)), n };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const COPY_FILE = fileURLToPath(new URL('../../bench/strategies/my-inline.ts', import.meta.url));

/** The table's stage of a run: one_way when measured, else the hand-off delay. */
function stageOf(r: RunResults): 'one_way' | 'handoff_to_start' {
  return r.points[0].strategies.some((s) => s.comparison?.some((c) => c.stage === 'one_way'))
    ? 'one_way'
    : 'handoff_to_start';
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '100' },
      copies: { type: 'string', default: '4' },
      trials: { type: 'string', default: '5' },
      duration: { type: 'string', default: '1s' },
      warmup: { type: 'string', default: '300ms' },
      slice: { type: 'string', default: '100ms' },
      threshold: { type: 'string' },
      seed: { type: 'string' },
      'max-minutes': { type: 'string' },
      save: { type: 'string' },
      from: { type: 'string' },
    },
  });
  const maxMs = values['max-minutes'] !== undefined ? Number(values['max-minutes']) * 60_000 : Number.POSITIVE_INFINITY;
  const runs = Number(values.runs);
  const copies = Number(values.copies);
  const say = (s: string) => void process.stdout.write(`${s}\n`);
  /** Bad input: one line on stderr, exit 2, before anything runs. */
  const refuse = (s: string): never => refuseBench('bench:aa', s);
  const fromDir = values.from;
  // With --from nothing runs: the run options are not read, so they are not checked either.
  if (fromDir === undefined) {
    if (!Number.isInteger(runs) || runs < 1) refuse(`--runs must be a positive integer (got ${values.runs})`);
    if (!Number.isInteger(copies) || copies < 1 || copies > 16)
      refuse(`--copies must be an integer from 1 to 16 (got ${values.copies})`);
    if (values.seed !== undefined && !/^\d+$/.test(values.seed))
      refuse(`--seed must be a whole number from 0 (got ${values.seed})`);
  }
  const firstSeed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  const strategies = ['inline', ...Array.from({ length: copies }, (_, i) => `${COPY_FILE}:copy=${i + 1}`)];
  /** A run's config, or one line and exit 2 for a bad --trials, --duration, --threshold, ... */
  const configOf = (seed: number) => {
    try {
      return resolveConfig({
        flags: {
          strategies,
          baseline: 'inline',
          trials: values.trials,
          trialMs: values.duration,
          warmupMs: values.warmup,
          sliceMs: values.slice,
          seed,
          outDir: null,
          ...(values.threshold !== undefined ? { threshold: values.threshold } : {}),
        },
        cwd: process.cwd(),
      });
    } catch (e) {
      return refuse((e as Error).message.split('\n')[0]);
    }
  };
  if (fromDir === undefined) configOf(firstSeed >>> 0); // checked before the first run's header
  let fromFiles: string[] = [];
  if (fromDir !== undefined) {
    let isDir = false;
    try {
      isDir = statSync(fromDir).isDirectory();
    } catch {
      refuse(`--from ${fromDir} does not exist; give the directory a --save DIR wrote`);
    }
    if (!isDir) refuse(`--from ${fromDir} is not a directory; give the directory a --save DIR wrote`);
    fromFiles = savedRuns(fromDir);
    if (fromFiles.length === 0) refuse(`--from ${fromDir} holds no run-N.json; make them with --save DIR`);
  }
  const called: Record<ComparableMetric, number> = { mean: 0, p50: 0, p90: 0, p99: 0, p99_9: 0 };
  const raw: Record<ComparableMetric, number> = { mean: 0, p50: 0, p90: 0, p99: 0, p99_9: 0 };
  const tests: Record<ComparableMetric, number> = { mean: 0, p50: 0, p90: 0, p99: 0, p99_9: 0 };
  const ps: Record<ComparableMetric, number[]> = { mean: [], p50: [], p90: [], p99: [], p99_9: [] };
  const relDiffs: number[] = [];
  const costs: number[] = [];
  let anyCall = 0;
  let done = 0;
  const stalls = newStallTally();
  const load0 = loadavg()[0];
  const t0 = Date.now();
  if (values.from !== undefined) say(`# A/A runs saved in ${values.from}, judged again with this build's statistics`);
  else
    say(
      `# A/A: inline vs ${copies} copies (bench/strategies/my-inline.ts); ${runs} runs × ${values.trials} trials of ` +
        `${values.duration} (+ ${values.warmup} warm-up; slices of ${values.slice}); load average ${load0.toFixed(2)}`,
    );
  const summary = (): void => {
    say('');
    say(
      `# ${done} completed A/A runs (${values.from !== undefined ? 'as saved' : `${copies} copies each`}) in ${((Date.now() - t0) / 1000).toFixed(0)} s; ` +
        `load average ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)} (2-core host shared with other jobs)`,
    );
    const [flo, fhi] = wilson(anyCall, done);
    say(
      `family-wise: runs with any call ${anyCall}/${done} = ${pct(done ? anyCall / done : Number.NaN)} (95% CI ${pct(flo)}–${pct(fhi)})`,
    );
    say('statistic  tests  called (adjusted, band)  p < 0.05 (unadjusted)     KS uniform p-values');
    for (const m of COMPARABLE_METRICS) {
      const n = tests[m];
      const ks = ksUniform(ps[m]);
      say(
        `${m.padEnd(9)}  ${String(n).padStart(5)}  ${`${called[m]} = ${pct(n ? called[m] / n : Number.NaN)}`.padEnd(23)}  ` +
          `${`${raw[m]} = ${pct(ps[m].length ? raw[m] / ps[m].length : Number.NaN)}`.padEnd(24)}  D=${ks.d.toFixed(3)} p=${ks.p.toFixed(3)} (n=${ks.n})`,
      );
    }
    const sorted = [...relDiffs].sort((a, b) => a - b);
    const q = (f: number) => sorted[Math.min(sorted.length - 1, Math.floor(f * sorted.length))];
    if (sorted.length)
      say(
        `|Δ mean| of the A/A copies, % of the baseline: median ${(100 * q(0.5)).toFixed(2)}%, p90 ${(100 * q(0.9)).toFixed(2)}%`,
      );
    if (costs.length) {
      const cs = [...costs].sort((a, b) => a - b);
      say(
        `comparisons (withComparisons, all stages, the tails included) per run: median ${cs[Math.floor(cs.length / 2)].toFixed(0)} ms, max ${cs[cs.length - 1].toFixed(0)} ms`,
      );
    }
    for (const line of stallLines(stalls)) say(line);
    say(
      `bars (issue 27): family-wise ≤ 10%: ${done >= 100 ? (anyCall / done <= 0.1 ? 'met' : 'NOT met') : `not judged (${done} runs < 100)`}`,
    );
  };
  /** Judges one run's comparisons (made again with this build's statistics) into the tallies. */
  const judge = (saved: RunResults): string => {
    const c0 = performance.now();
    const r = withComparisons(saved); // what the run's comparisons cost, timed again on its data
    costs.push(performance.now() - c0);
    addRun(stalls, saved);
    const stage = stageOf(r);
    const cells: string[] = [];
    let any = false;
    for (const s of r.points[0].strategies) {
      if (s.label === 'inline') continue;
      for (const m of COMPARABLE_METRICS) {
        const c = s.comparison?.find((x) => x.stage === stage && x.metric === m);
        if (!c || !Number.isFinite(c.ciLow)) continue;
        tests[m]++;
        if (c.verdict !== 'within-noise') {
          called[m]++;
          any = true;
          cells.push(`${s.label.replace(/^my-inline\.ts/, '')} ${m} ${c.verdict}`);
        }
        if (c.p !== undefined && Number.isFinite(c.p)) {
          ps[m].push(c.p);
          if (c.p < 0.05) raw[m]++;
        }
        if (m === 'mean') relDiffs.push(Math.abs(c.diff / c.baseline));
      }
    }
    if (any) anyCall++;
    done++;
    return any ? `called: ${cells.join(', ')}` : 'nothing called';
  };
  if (fromDir !== undefined) {
    // Saved runs judged again: the same data under this build's statistics, nothing run.
    for (const f of fromFiles) {
      let r: RunResults;
      try {
        r = await readResultsFile(join(fromDir, f));
      } catch (e) {
        say(`${f}: not read: ${(e as Error).message.split('\n')[0]}; not counted`);
        continue;
      }
      const problem = notAnAaRun(r);
      if (problem) {
        say(`${f}: ${problem}; not counted`);
        continue;
      }
      say(`${f}: ${judge(r)}`);
    }
    if (done === 0)
      refuse(`--from ${fromDir}: none of its ${fromFiles.length} run-N.json could be judged (above: why)`);
    summary();
    return;
  }
  let calibration: RunResults['meta']['calibration'] | undefined;
  for (let i = 0; i < runs; i++) {
    if (Date.now() - t0 > maxMs) {
      say(`--max-minutes ${values['max-minutes']} reached: stopping after ${i} of ${runs} runs`);
      break;
    }
    const config = configOf((firstSeed + i) >>> 0);
    let r: RunResults;
    try {
      // The host calibration of the first run is reused (as bench:twin does): it only describes the
      // host in each run's report, and measuring it again would cost every run seconds.
      r = await runExperiment(config, { command: ['bench:aa'], ...(calibration ? { calibration } : {}) });
      calibration ??= r.meta.calibration;
    } catch (e) {
      say(`run ${i + 1}: failed: ${(e as Error).message}; not counted`);
      continue;
    }
    if (r.status !== 'completed') {
      say(`run ${i + 1}: ${r.status}${r.error ? `: ${r.error.message}` : ''}; not counted`);
      continue;
    }
    if (values.save !== undefined) {
      mkdirSync(values.save, { recursive: true });
      writeFileSync(join(values.save, `run-${i + 1}.json`), `${JSON.stringify(r)}\n`);
    }
    const line = judge(r);
    if (done % 10 === 0 && i < runs - 1) summary(); // a crash or a kill still leaves the figures so far
    say(`run ${i + 1} (seed ${config.seed}): ${line}; load ${loadavg()[0].toFixed(1)}`);
  }
  summary();
}

export const USAGE: BenchUsage = {
  script: 'bench:aa',
  about:
    "The lab's verdicts when nothing differs: each run compares inline with A/A copies of itself written from docs/strategies.md, interleaved, sliced and adjusted as `deferlab run` does, so every call is a false call. Prints the family-wise false-call rate (runs with any call), the per-test rate per statistic, a Kolmogorov-Smirnov check of the p-values and what the comparisons cost. About 1 minute a run at the defaults (35 minutes for 100 runs). A smoke run: --runs 3 --duration 200ms.",
  flags: [
    { flag: '--runs', value: 'N', help: 'A/A runs (default 100)' },
    { flag: '--copies', value: 'N', help: 'A/A copies of inline per run (default 4)' },
    { flag: '--trials', value: 'N', help: 'trials per strategy (default 5)' },
    { flag: '--duration', value: 'TIME', help: 'a trial (default 1s)' },
    { flag: '--warmup', value: 'TIME', help: "a trial's warm-up (default 300ms)" },
    { flag: '--slice', value: 'TIME', help: 'slice length (default 100ms)' },
    { flag: '--threshold', value: 'PCT', help: "the practical-significance band (default: deferlab run's)" },
    { flag: '--seed', value: 'N', help: "the first run's seed; run i uses seed+i" },
    { flag: '--max-minutes', value: 'M', help: 'start no run after M minutes (the summary says how many ran)' },
    { flag: '--save', value: 'DIR', help: "each completed run's results as DIR/run-N.json" },
    {
      flag: '--from',
      value: 'DIR',
      help: "judge the runs a --save left in DIR again with this build's statistics, running nothing (the run options are ignored)",
    },
  ],
};

if (isMain(import.meta.url)) {
  await main(benchArgs(USAGE));
  process.exit(0);
}
