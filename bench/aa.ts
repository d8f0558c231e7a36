/**
 * `npm run bench:aa`: the lab's own calibration on the real machine. N runs, each comparing a
 * baseline with its A/A copy (`--control`: a second instance of the same strategy spec,
 * interleaved like any other strategy), exactly as `deferlab run` does. Any difference the 95%
 * interval calls is a false positive; the bench prints the rate per metric (with its 95% Wilson
 * interval) and the Δ-mean interval half-widths as % of the baseline mean, and the load average,
 * since both depend on what else the host runs.
 *
 *   npm run bench:aa -- --runs 20 --trials 5 --duration 1s
 *   npm run bench:aa -- --runs 3 --trials 3 --duration 100ms        # a smoke run (~1 min)
 *   npm run bench:aa -- --strategy workqueue --strategy tasklet      # the pair inside a bigger run
 *
 * Options: --runs N (20), --trials N (5, deferlab run's default), --duration TIME (1s),
 * --warmup TIME (300ms), --slice TIME (100ms, deferlab run's default; 0: whole trials), --baseline SPEC (inline), --strategy SPEC (repeatable: more strategies in
 * each run, as in the issue's four-strategy case), --seed N (first run's seed; run i uses seed+i).
 * The issue's bars: at most 10% false positives over >= 20 runs of the default trial count, and
 * Δ-mean half-widths at most ±5% of the baseline mean on an otherwise idle host.
 *
 * Nothing here asserts: it measures and prints.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../src/config/schema.js';
import { runExperiment } from '../src/harness/run.js';
import { intervalWidths } from '../src/harness/until.js';
import { COMPARABLE_METRICS, type ComparableMetric } from '../src/report/types.js';
import { isMain } from './lib.js';

const BAR_FALSE_POSITIVES = 0.1;
const BAR_WIDTH_PCT = 5;

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

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : Number.NaN;
};

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '20' },
      trials: { type: 'string', default: '5' },
      duration: { type: 'string', default: '1s' },
      warmup: { type: 'string', default: '300ms' },
      slice: { type: 'string', default: '100ms' },
      baseline: { type: 'string', default: 'inline' },
      strategy: { type: 'string', multiple: true, default: [] },
      seed: { type: 'string' },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer (got ${values.runs})`);
  const firstSeed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  const say = (s: string) => void process.stdout.write(`${s}\n`);
  const called: Record<ComparableMetric, number> = { mean: 0, p50: 0, p90: 0, p99: 0, p99_9: 0 };
  const widths: number[] = [];
  const otherWidths: number[] = [];
  let done = 0;
  const load0 = loadavg()[0];
  const t0 = Date.now();
  say(
    `# A/A: ${values.baseline} vs ${values.baseline} (control)${values.strategy.length ? ` among ${values.strategy.join(', ')}` : ''}; ` +
      `${runs} runs × ${values.trials} trials of ${values.duration} (+ ${values.warmup} warm-up; slices of ${values.slice}); load average ${load0.toFixed(2)}`,
  );
  for (let i = 0; i < runs; i++) {
    const config = resolveConfig({
      flags: {
        strategies: [values.baseline, ...values.strategy],
        baseline: values.baseline,
        control: true,
        trials: values.trials,
        trialMs: values.duration,
        warmupMs: values.warmup,
        sliceMs: values.slice,
        seed: (firstSeed + i) >>> 0,
        outDir: null,
      },
      cwd: process.cwd(),
    });
    const r = await runExperiment(config, { command: ['bench:aa'] });
    if (r.status !== 'completed') {
      say(`run ${i + 1}: ${r.status}${r.error ? `: ${r.error.message}` : ''}; not counted`);
      continue;
    }
    const point = r.points[0];
    const control = point.strategies.find((s) => s.label === config.control);
    const stage = control?.comparison?.some((c) => c.stage === 'one_way') ? 'one_way' : 'handoff_to_start';
    const verdicts = COMPARABLE_METRICS.map((m) => {
      const c = control?.comparison?.find((x) => x.stage === stage && x.metric === m);
      if (c && c.verdict !== 'within-noise') called[m]++;
      return `${m} ${c ? (c.verdict === 'within-noise' ? '~' : c.verdict) : '-'}`;
    });
    const w = intervalWidths(point.strategies, r.baseline);
    const cw = w[config.control ?? ''];
    widths.push(cw);
    for (const [label, x] of Object.entries(w)) if (label !== config.control) otherWidths.push(x);
    done++;
    const width = Number.isFinite(cw) ? `±${cw.toFixed(1)}%` : 'none (fewer than 2 pairs with samples)';
    say(`run ${i + 1} (seed ${config.seed}): Δ-mean half-width ${width}; ${verdicts.join(', ')}`);
  }
  say('');
  say(
    `# ${done} completed A/A comparisons in ${((Date.now() - t0) / 1000).toFixed(0)} s; load average ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}`,
  );
  for (const m of COMPARABLE_METRICS) {
    const [lo, hi] = wilson(called[m], done);
    say(
      `false positives ${m.padEnd(5)}: ${called[m]}/${done} = ${pct(done ? called[m] / done : Number.NaN)} (95% CI ${pct(lo)}–${pct(hi)})`,
    );
  }
  const finite = widths.filter(Number.isFinite);
  say(
    `Δ-mean half-width, % of the baseline mean: median ±${median(finite).toFixed(1)}%, max ±${Math.max(...finite).toFixed(1)}%` +
      (otherWidths.length
        ? `; other strategies' median ±${median(otherWidths.filter(Number.isFinite)).toFixed(1)}%`
        : ''),
  );
  const fpMean = done ? called.mean / done : Number.NaN;
  say(
    `bars (issue 15): false positives (mean) ≤ ${pct(BAR_FALSE_POSITIVES)} over ≥ 20 runs: ${done >= 20 ? (fpMean <= BAR_FALSE_POSITIVES ? 'met' : 'NOT met') : `not judged (${done} runs)`}; ` +
      `median half-width ≤ ±${BAR_WIDTH_PCT}%: ${median(finite) <= BAR_WIDTH_PCT ? 'met' : 'NOT met'} (needs an otherwise idle host)`,
  );
}

if (isMain(import.meta.url)) {
  await main();
  process.exit(0);
}
