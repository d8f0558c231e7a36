/**
 * entropy (seed 000, Sebastian's question): for each strategy and interrupt rate, how often the
 * fast pool is mixed, how many bits reach the input pool per second, and how soon it holds 256
 * bits. A strategy that is cheap because it rarely mixes must show it here.
 */
import type { CommandRules } from '../config/rules.js';
import type { ResolvedConfig } from '../config/schema.js';
import { KERNEL_NAMES, type KernelName, kernelProfile } from '../kernel/profiles.js';
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

/** What it sweeps at its defaults, for the help: rates, kernels, strategies. */
function entropySweeps(): string[] {
  const kernels = [SEED_KERNEL, ...ENTROPY_BESIDE];
  const run = (k: KernelName) => ENTROPY_STRATEGIES.filter((s) => kernelProfile(k).wqBh || s !== 'bh_workqueue');
  const counts = [...new Set(kernels.map((k) => run(k).length))].join(' or ');
  // The oldest profile with WQ_BH (KERNEL_NAMES is not in version order).
  const version = (k: string) => k.split('.').reduce((v, part) => v * 1000 + Number(part), 0);
  const bhFrom = KERNEL_NAMES.filter((k) => kernelProfile(k).wqBh).sort((a, b) => version(a) - version(b))[0];
  const none = kernels.every((k) => !kernelProfile(k).wqBh);
  const bh = !bhFrom
    ? ''
    : none
      ? ` (not bh_workqueue: WQ_BH is ${bhFrom}+, none of these kernels)`
      : kernels.some((k) => !kernelProfile(k).wqBh)
        ? ` (bh_workqueue on ${bhFrom}+ only)`
        : '';
  return [
    `sweeps irq_rate ${ENTROPY_RATES.map(countText).join(', ')} per CPU (--sweep irq_rate:... replaces them), a sub-run per kernel ${kernels.join(', ')}: ${counts} strategies against inline${bh}`,
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
  for (const kernel of [c.kernel, ...beside.filter((k) => k !== c.kernel)]) {
    if (runs.length && (ctx.signal.aborted || runs[runs.length - 1].status !== 'completed')) break;
    const base: ResolvedConfig = {
      ...c,
      kernel,
      // WQ_BH exists from 6.9 on: older profiles compare the others.
      strategies: specs(compared.filter((s) => kernelProfile(kernel).wqBh || s !== 'bh_workqueue')),
      baseline: 'inline',
      sweep: { param: 'irq_rate', values: rates },
    };
    const name = kernel === c.kernel ? 'entropy' : `entropy-${kernel}`;
    names.push(name);
    const r = await subRun(ctx, name, base);
    runs.push(r);
    verdicts.push(...judge(ctx, r, ` (kernel ${kernel})`));
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

/** The rows of one run's table, and its verdicts: which strategies starve the input pool. */
function judge(ctx: ScenarioContext, r: RunResults, on: string): Verdict[] {
  const lines: string[] = [
    '',
    'rate/CPU   strategy                      mixes/s   bits/s   time to 256 bits   mixes off-CPU',
  ];
  const verdicts: Verdict[] = [];
  const bitsOf = (s: StrategyResult | undefined) => s?.rates.entropy_bits ?? 0;
  for (const p of r.points) {
    const inline = strategy(p, 'inline');
    const ib = bitsOf(inline);
    const control = controlOf(r, p);
    const floor = control ? pointFloor(ib, bitsOf(control)) : Number.NaN;
    const floorText = control ? `; noise floor (A/A inline): ±${floor.toFixed(0)} bits/s` : '';
    for (const s of p.strategies) {
      lines.push(
        `${String(p.params.irq_rate).padStart(8)}   ${s.label.padEnd(28)}  ${(s.rates.mixes ?? 0).toFixed(1).padStart(7)}  ${bitsOf(s).toFixed(0).padStart(7)}   ${ms(s.counters.time_to_256_bits_ns).padStart(16)}   ${String(s.counters.mixes_remote ?? 0).padStart(13)}`,
      );
      if (s === inline || s === control) continue;
      const counted = { cand: creditedMixes(s), inline: creditedMixes(inline) };
      const says = starves(bitsOf(s), ib, floor, counted);
      if (says === 'no') continue;
      verdicts.push({
        expectation: `${s.label} at ${p.params.irq_rate}/s delivers less entropy than inline${on}`,
        outcome: says === 'starves' ? 'reproduced' : 'inconclusive',
        detail: `${bitsOf(s).toFixed(0)} bits/s vs inline ${ib.toFixed(0)} (${counted.cand} mix${counted.cand === 1 ? '' : 'es'} credited against ${counted.inline}, p ${fmtP(fewerEventsP(counted.cand, counted.inline))} by chance; ${s.counters.mixes_remote ?? 0} mixes ran off their CPU and were refused)${floorText}${says === 'inside floor' ? ': the shortfall is within chance or the noise floor (too few mixes at this rate; try a longer --duration)' : ''}`,
      });
    }
  }
  ctx.io.stdout(`${lines.join('\n')}\n`);
  if (verdicts.length === 0)
    verdicts.push(
      r.points.some((p) => bitsOf(strategy(p, 'inline')) > 0)
        ? {
            expectation: `a strategy starves the input pool${on}`,
            outcome: 'not reproduced',
            detail: "every strategy delivered at least half of inline's bits/s",
          }
        : {
            expectation: `a strategy starves the input pool${on}`,
            outcome: 'inconclusive',
            detail: `inline credited no entropy at any rate, so there is nothing to fall short of (too few interrupts: try a higher rate, --sweep irq_rate:20k, or a longer --duration)`,
          },
    );
  return verdicts;
}
