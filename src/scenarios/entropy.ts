/**
 * entropy (seed 000, Sebastian's question): for each strategy and interrupt rate, how often the
 * fast pool is mixed, how many bits reach the input pool per second, and how soon it holds 256
 * bits. A strategy that is cheap because it rarely mixes must show it here.
 */

import { perKernelText } from '../config/flags.js';
import { type CommandRules, noHogs } from '../config/rules.js';
import type { ResolvedConfig } from '../config/schema.js';
import { type KernelName, type KernelProfile, kernelProfile } from '../kernel/profiles.js';
import type { RunResults, StrategyResult } from '../report/types.js';
import {
  beyondFloor,
  controlOf,
  countText,
  ms,
  NO_TIMELINE,
  noTcpLat,
  pointFloor,
  printResults,
  printVerdicts,
  type Resolution,
  resolutionConfig,
  type ScenarioContext,
  scenarioStatus,
  specs,
  strategy,
  subRun,
  type Verdict,
} from './common.js';

/** The interrupt rates per CPU it compares, unless --sweep irq_rate:... chooses others. */
export const ENTROPY_RATES = [200, 2000, 20000];

/** Honoured: --cpus (2+), --sweep irq_rate:..., --irq-pattern/-burst/-cpus, --trigger, --fastmix, and the rest of the machine's settings. */
const RULES: CommandRules = {
  minCpus: {
    count: 2,
    why: 'whose irq_work(target=next) and unbound strategies need a second CPU to run a mix off its own',
  },
  fixed: {
    ...noHogs(),
    strategies: {
      kind: 'sets',
      why: 'it compares inline, workqueue, tasklet, timer, timer:deferrable=true, unbound, irq_work:target=next and (from kernel 6.9) bh_workqueue',
    },
    baseline: { kind: 'sets', why: "it compares each strategy's entropy with inline's" },
    'workload.kind': { kind: 'sets', why: 'it runs background interrupts only, no application' },
    ...noTcpLat('it runs no tcp_lat, only background interrupts'),
    'irq.rate': {
      kind: 'sets',
      why: `it sweeps the rate: ${ENTROPY_RATES.join(', ')} per CPU per second`,
      instead: 'choose the rates with --sweep irq_rate:V1,V2,...',
    },
    ...NO_TIMELINE,
    sliceMs: {
      kind: 'sets',
      why: 'it times 256 bits from the start of a whole trial, so its trials are not sliced',
      allows: 0,
    },
  },
  sweeps: { params: ['irq_rate'], why: 'which compares the strategies across interrupt rates' },
};

/**
 * An A/A copy of inline (`--control`) measures how far bits/s move between two identical
 * strategies: a shortfall inside that floor is not called. No `--until` by default: its verdicts
 * read counters (bits/s), not Δ-mean intervals; the table's stage without an application is
 * handoff_to_start, whose interval says nothing about entropy and never narrows for a strategy
 * that rarely starts its work (a deferrable timer on an idle CPU), so every point would run to
 * the cap. A user's --until still applies, to that stage.
 */
export const ENTROPY_RESOLUTION: Resolution = { control: true, until: null };

/** Seed 000's kernel (linux-stable 5.15); --kernel runs another. */
const SEED_KERNEL: KernelName = '5.15';
/** Kernels the comparison also runs on, after the scenario's own: 6.1, where the tasklet and timer fixes were written. */
export const ENTROPY_BESIDE: readonly KernelName[] = ['6.1'];

export const ENTROPY_STRATEGIES = [
  'inline',
  'workqueue',
  'tasklet',
  'timer',
  'timer:deferrable=true',
  'unbound',
  'irq_work:target=next',
  'bh_workqueue',
];

/** The strategies it compares on kernel `k`: bh_workqueue only where WQ_BH exists (6.9+). */
const strategiesOn = (k: KernelName, compared: readonly string[] = ENTROPY_STRATEGIES) =>
  compared.filter((s) => kernelProfile(k).wqBh || s !== 'bh_workqueue');

/**
 * What it sweeps at its defaults, for the help: the rates; the kernels (its own, which --kernel
 * replaces, then those beside it, as runEntropy runs them); the strategies per --kernel profile.
 */
function entropySweeps(): string[] {
  const count = (p: KernelProfile) => `${strategiesOn(p.name).length}${p.wqBh ? ' (bh_workqueue too: WQ_BH)' : ''}`;
  return [
    `sweeps irq_rate ${ENTROPY_RATES.map(countText).join(', ')} per CPU (--sweep irq_rate:... replaces them); ` +
      `a sub-run on kernel ${SEED_KERNEL} (--kernel replaces it), then one on ${ENTROPY_BESIDE.join(', ')} ` +
      `(not twice when --kernel names it); strategies against inline per kernel: ${perKernelText(count)}`,
  ];
}

export const entropyPreset = {
  summary: 'seed 000: mixes/s, entropy bits/s and time to 256 bits per strategy and interrupt rate',
  config: {
    trials: 2,
    trialMs: '1s',
    warmupMs: '200ms',
    // Whole trials: time to 256 bits runs from a trial's start (src/harness/round.ts).
    sliceMs: 0,
    kernel: SEED_KERNEL,
    workload: { kind: 'irq_only' },
    sweep: `irq_rate:${ENTROPY_RATES.join(',')}`,
    ...resolutionConfig(ENTROPY_RESOLUTION),
  },
  rules: RULES,
  sweeps: entropySweeps(),
};

/** The kernels it runs a sub-run on, in order: `kernel` (the scenario's, or --kernel's), then those `beside` it not already run. Pure. */
export function entropyKernels(kernel: KernelName, beside: readonly KernelName[] = ENTROPY_BESIDE): KernelName[] {
  return [kernel, ...beside.filter((k) => k !== kernel)];
}

/**
 * `rates` overrides the config's irq_rate sweep (the preset's, or the user's --sweep irq_rate:...);
 * `beside`: kernel profiles the comparison also runs on, after the scenario's own (5.15 by
 * default): 6.1, where the tasklet and timer fixes were written; `compared`: the strategies
 * (inline first; tests run a few).
 */
export async function runEntropy(
  ctx: ScenarioContext,
  rates?: number[],
  beside: readonly KernelName[] = ENTROPY_BESIDE,
  compared: readonly string[] = ENTROPY_STRATEGIES,
): Promise<number> {
  const c = ctx.config;
  rates ??= c.sweep?.param === 'irq_rate' ? [...c.sweep.values] : ENTROPY_RATES;
  const verdicts: Verdict[] = [];
  const runs: RunResults[] = [];
  const names: string[] = [];
  for (const kernel of entropyKernels(c.kernel, beside)) {
    if (runs.length && (ctx.signal.aborted || runs[runs.length - 1].status !== 'completed')) break;
    const base: ResolvedConfig = {
      ...c,
      kernel,
      // WQ_BH exists from 6.9 on: older profiles compare the others.
      strategies: specs(strategiesOn(kernel, compared)),
      baseline: 'inline',
      sweep: { param: 'irq_rate', values: rates },
    };
    const name = kernel === c.kernel ? 'entropy' : `entropy-${kernel}`;
    names.push(name);
    const r = await subRun(ctx, name, base);
    runs.push(r);
    verdicts.push(...judge(ctx, r, ` (kernel ${kernel})`, base.fastPool.trigger));
  }
  const status = scenarioStatus(runs);
  printVerdicts(ctx.io, verdicts, status);
  printResults(ctx, names);
  return status;
}

/**
 * One-sided exact binomial test that `cand` of `cand + base` events came from a process no
 * slower than the other's, under equal exposure (both sides ran the same interleaved trials):
 * P(X ≤ cand) for X ~ Binomial(cand + base, 1/2). Small p: the candidate's count is lower than
 * chance allows. Counts of credited mixes are Poisson-like (a mix every 1024 interrupts or second
 * per CPU), and two Poisson counts given their sum split binomially. Pure.
 */
export function fewerEventsP(cand: number, base: number): number {
  const n = Math.round(cand) + Math.round(base);
  const k = Math.round(cand);
  if (n <= 0) return 1;
  // Sum the pmf in log space: C(n, i) / 2^n, i = 0..k.
  let logC = 0; // log C(n, 0)
  let p = 0;
  for (let i = 0; i <= k; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    p += Math.exp(logC - n * Math.LN2);
  }
  return Math.min(1, p);
}

const fmtP = (p: number) => (p < 0.001 ? '< 0.001' : p.toFixed(3));

/**
 * The mixes that credited entropy, summed over the strategy's trials: mixes run, less those
 * random.c refused because they ran off the fast pool's CPU and those inline_trylock skipped (both
 * are counted in `mixes` too). Mixes, not bits, are the counted events: one mix credits many bits
 * at once (5.15: one per 64 interrupts the pool gathered), so bits are not Poisson counts.
 */
export function creditedMixes(s: Pick<StrategyResult, 'counters'> | undefined): number {
  const c = s?.counters ?? {};
  return Math.max(0, (c.mixes ?? 0) - (c.mixes_remote ?? 0) - (c.mixes_trylock_skipped ?? 0));
}

/** The level at which a shortfall of counted mixes must be unlikely by chance to be called. */
export const STARVE_ALPHA = 0.05;

/**
 * Whether `bits` (a strategy's bits/s) starves the input pool against inline's `inlineBits`: less
 * than half of them, by a shortfall beyond the noise floor (`floor`: how far the A/A copy of
 * inline moved; NaN without a control) and, given the mixes that credited on each side over its
 * trials (`counts`, {@link creditedMixes}), one that chance does not explain ({@link fewerEventsP} below {@link STARVE_ALPHA}).
 * `inside floor`: less than half, but within the floor or within chance (too few mixes to tell).
 */
export function starves(
  bits: number,
  inlineBits: number,
  floor: number,
  counts?: { cand: number; inline: number },
): 'starves' | 'inside floor' | 'no' {
  if (!(inlineBits > 0) || !(bits < 0.5 * inlineBits)) return 'no';
  if (counts && !(fewerEventsP(counts.cand, counts.inline) < STARVE_ALPHA)) return 'inside floor';
  return beyondFloor(inlineBits - bits, floor) ? 'starves' : 'inside floor';
}

/**
 * Mixes a CPU's fast pool is due in one trial of `trialNs` at `ratePerCpu` interrupts/s, for a
 * strategy that mixes at once: add_interrupt_randomness() hands off when the pool's count reaches
 * `trigger` or one second (HZ jiffies) after its last mix, whichever comes first (fastpool.ts), so
 * a pool mixes max(rate / trigger, 1) times a second (no more often than its interrupts). Pure.
 */
export function mixesDuePerCpuTrial(ratePerCpu: number, trialNs: number, trigger: number): number {
  return (trialNs / 1e9) * Math.max(ratePerCpu / trigger, Math.min(ratePerCpu, 1));
}

/**
 * Mixes due per CPU per trial ({@link mixesDuePerCpuTrial}) below which a trial's count of mixes
 * tells nothing about the strategy. Where a trial's window cuts the pool's cycle is not the
 * strategy's doing: the count is zeroed at each trial's start but `last`, the one-second timer's
 * base, is whatever the previous strategy's trial left, and the window ends wherever it ends. So
 * each CPU's count moves by one mix per trial by phase alone. Below 2 a mix more or less is half
 * or more of what is due (600 interrupts against a trigger of 1024: a CPU mixes once or never,
 * by phase), and a strategy exactly like inline can fall below half of inline's bits/s, this
 * scenario's call; from 2 on, one mix less leaves at least 2 of 3, above half.
 */
export const MIN_MIXES_DUE_PER_CPU_TRIAL = 2;

/** Whether a point's trials are too short or its rate too low for its mix counts to judge a strategy. */
export function tooFewMixesDue(ratePerCpu: number, trialNs: number, trigger: number): boolean {
  return mixesDuePerCpuTrial(ratePerCpu, trialNs, trigger) < MIN_MIXES_DUE_PER_CPU_TRIAL;
}

/**
 * The reason a too-short point is inconclusive, and how to get a verdict: the --duration that
 * makes the rate enough, and the rate that makes the duration enough.
 */
function tooFewText(ratePerCpu: number, trialNs: number, trigger: number): string {
  const due = mixesDuePerCpuTrial(ratePerCpu, trialNs, trigger);
  const perSecond = Math.max(ratePerCpu / trigger, Math.min(ratePerCpu, 1));
  const needMs = Math.ceil((MIN_MIXES_DUE_PER_CPU_TRIAL / perSecond) * 1000);
  const needRate = Math.ceil((MIN_MIXES_DUE_PER_CPU_TRIAL * trigger) / (trialNs / 1e9));
  return (
    `too few interrupts to tell: ${Math.round((ratePerCpu * trialNs) / 1e9)} per CPU in a ${ms(trialNs)} trial is ` +
    `${due.toFixed(2)} mixes due (trigger ${trigger}, or 1 s since the last mix), under ${MIN_MIXES_DUE_PER_CPU_TRIAL}, ` +
    "so where the trial cut the fast pool's cycle, not the strategy, sets its count of mixes; " +
    `for a verdict, --duration ${needMs}ms or more, or --sweep irq_rate:${countText(needRate)} or higher`
  );
}

/** The measured length of a strategy's shortest trial, ns (Infinity with none). */
const shortestTrialNs = (s: StrategyResult | undefined) => Math.min(...(s?.trials ?? []).map((t) => t.durationNs));

/**
 * One run's table (a row per rate and strategy) and its verdicts: which strategies starve the
 * input pool against inline (`starves`), inconclusive at a point whose trials are due too few
 * mixes per CPU ({@link tooFewMixesDue}) for its counts to say. `on`: the kernel, for the lines;
 * `trigger`: the fast pool's trigger the run used. Context: main thread; pure.
 */
export function judgeEntropy(r: RunResults, on: string, trigger: number): { table: string; verdicts: Verdict[] } {
  const lines: string[] = [
    '',
    'rate/CPU   strategy                      mixes/s   bits/s   time to 256 bits   mixes off-CPU',
  ];
  const verdicts: Verdict[] = [];
  const bitsOf = (s: StrategyResult | undefined) => s?.rates.entropy_bits ?? 0;
  let judged = 0;
  for (const p of r.points) {
    const rate = Number(p.params.irq_rate);
    const inline = strategy(p, 'inline');
    const ib = bitsOf(inline);
    const control = controlOf(r, p);
    const floor = control ? pointFloor(ib, bitsOf(control)) : Number.NaN;
    const floorText = control ? `; noise floor (A/A inline): ±${floor.toFixed(0)} bits/s` : '';
    const inlineNs = shortestTrialNs(inline);
    if (!tooFewMixesDue(rate, inlineNs, trigger)) judged++;
    for (const s of p.strategies) {
      lines.push(
        `${String(p.params.irq_rate).padStart(8)}   ${s.label.padEnd(28)}  ${(s.rates.mixes ?? 0).toFixed(1).padStart(7)}  ${bitsOf(s).toFixed(0).padStart(7)}   ${ms(s.counters.time_to_256_bits_ns).padStart(16)}   ${String(s.counters.mixes_remote ?? 0).padStart(13)}`,
      );
      if (s === inline || s === control) continue;
      const counted = { cand: creditedMixes(s), inline: creditedMixes(inline) };
      const says = starves(bitsOf(s), ib, floor, counted);
      if (says === 'no') continue;
      // The shorter of the two sides' trials: its counts are the ones that may follow the phase.
      const trialNs = Math.min(inlineNs, shortestTrialNs(s));
      const tooFew = tooFewMixesDue(rate, trialNs, trigger);
      const why = tooFew
        ? `: ${tooFewText(rate, trialNs, trigger)}`
        : says === 'inside floor'
          ? ': the shortfall is within chance or the noise floor (too few mixes at this rate; try a longer --duration)'
          : '';
      verdicts.push({
        expectation: `${s.label} at ${p.params.irq_rate}/s delivers less entropy than inline${on}`,
        outcome: says === 'starves' && !tooFew ? 'reproduced' : 'inconclusive',
        detail: `${bitsOf(s).toFixed(0)} bits/s vs inline ${ib.toFixed(0)} (${counted.cand} mix${counted.cand === 1 ? '' : 'es'} credited against ${counted.inline}, p ${fmtP(fewerEventsP(counted.cand, counted.inline))} by chance; ${s.counters.mixes_remote ?? 0} mixes ran off their CPU and were refused)${floorText}${why}`,
      });
    }
  }
  if (verdicts.length === 0) {
    const expectation = `a strategy starves the input pool${on}`;
    const first = r.points[0];
    if (!r.points.some((p) => bitsOf(strategy(p, 'inline')) > 0))
      verdicts.push({
        expectation,
        outcome: 'inconclusive',
        detail: `inline credited no entropy at any rate, so there is nothing to fall short of (too few interrupts: try a higher rate, --sweep irq_rate:20k, or a longer --duration)`,
      });
    else if (judged === 0 && first)
      verdicts.push({
        expectation,
        outcome: 'inconclusive',
        detail: `every strategy delivered at least half of inline's bits/s, but at every rate ${tooFewText(Number(first.params.irq_rate), shortestTrialNs(strategy(first, 'inline')), trigger)} (at ${first.params.irq_rate}/s)`,
      });
    else
      verdicts.push({
        expectation,
        outcome: 'not reproduced',
        detail: `every strategy delivered at least half of inline's bits/s${judged < r.points.length ? ` (judged at the ${judged} of ${r.points.length} rates whose trials are due at least ${MIN_MIXES_DUE_PER_CPU_TRIAL} mixes per CPU)` : ''}`,
      });
  }
  // A rate at which inline itself credited nothing has nothing to fall short of; say so there,
  // after the run's own verdict (when another rate has credited some).
  if (r.points.some((p) => bitsOf(strategy(p, 'inline')) > 0))
    for (const p of r.points) {
      const inl = strategy(p, 'inline');
      if (!inl || bitsOf(inl) > 0) continue;
      const rate = Number(p.params.irq_rate);
      const trialNs = shortestTrialNs(inl);
      verdicts.push({
        expectation: `a strategy at ${p.params.irq_rate}/s delivers less entropy than inline${on}`,
        outcome: 'inconclusive',
        detail: `inline credited no entropy at this rate in its trials, so there is nothing to fall short of: ${tooFewMixesDue(rate, trialNs, trigger) ? tooFewText(rate, trialNs, trigger) : 'try a longer --duration'}`,
      });
    }
  return { table: `${lines.join('\n')}\n`, verdicts };
}

/** Print one run's table ({@link judgeEntropy}); return its verdicts. */
function judge(ctx: ScenarioContext, r: RunResults, on: string, trigger: number): Verdict[] {
  const { table, verdicts } = judgeEntropy(r, on, trigger);
  ctx.io.stdout(table);
  return verdicts;
}
