/**
 * entropy (seed 000, Sebastian's question): for each strategy and interrupt rate, how often the
 * fast pool is mixed, how many bits reach the input pool per second, and how soon it holds 256
 * bits. A strategy that is cheap because it rarely mixes must show it here.
 */
import type { CommandRules } from '../config/rules.js';
import type { ResolvedConfig } from '../config/schema.js';
import { type KernelName, kernelProfile } from '../kernel/profiles.js';
import type { RunResults } from '../report/types.js';
import {
  ms,
  NO_TIMELINE,
  noTcpLat,
  printResults,
  printVerdicts,
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
  },
  sweeps: { params: ['irq_rate'], why: 'which compares the strategies across interrupt rates' },
};

export const entropyPreset = {
  summary: 'seed 000: mixes/s, entropy bits/s and time to 256 bits per strategy and interrupt rate',
  config: {
    trials: 2,
    trialMs: '1.5s',
    warmupMs: '200ms',
    // Seed 000's kernel (linux-stable 5.15); --kernel runs another.
    kernel: '5.15',
    workload: { kind: 'irq_only' },
    sweep: `irq_rate:${ENTROPY_RATES.join(',')}`,
  },
  rules: RULES,
};

const STRATEGIES = [
  'inline',
  'workqueue',
  'tasklet',
  'timer',
  'timer:deferrable=true',
  'unbound',
  'irq_work:target=next',
  'bh_workqueue',
];

/**
 * `rates` overrides the config's irq_rate sweep (the preset's, or the user's --sweep irq_rate:...);
 * `beside`: kernel profiles the comparison also runs on, after the scenario's own (5.15 by
 * default): 6.1, where the tasklet and timer fixes were written.
 */
export async function runEntropy(
  ctx: ScenarioContext,
  rates?: number[],
  beside: readonly KernelName[] = ['6.1'],
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
      strategies: specs(STRATEGIES.filter((s) => kernelProfile(kernel).wqBh || s !== 'bh_workqueue')),
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

/** The rows of one run's table, and its verdicts: which strategies starve the input pool. */
function judge(ctx: ScenarioContext, r: RunResults, on: string): Verdict[] {
  const lines: string[] = [
    '',
    'rate/CPU   strategy                      mixes/s   bits/s   time to 256 bits   mixes off-CPU',
  ];
  const verdicts: Verdict[] = [];
  for (const p of r.points) {
    const inline = strategy(p, 'inline');
    const ib = inline?.rates.entropy_bits ?? 0;
    for (const s of p.strategies) {
      lines.push(
        `${String(p.params.irq_rate).padStart(8)}   ${s.label.padEnd(28)}  ${(s.rates.mixes ?? 0).toFixed(1).padStart(7)}  ${(s.rates.entropy_bits ?? 0).toFixed(0).padStart(7)}   ${ms(s.counters.time_to_256_bits_ns).padStart(16)}   ${String(s.counters.mixes_remote ?? 0).padStart(13)}`,
      );
      if (s.label !== 'inline') {
        const starved = ib > 0 && (s.rates.entropy_bits ?? 0) < 0.5 * ib;
        if (starved) {
          verdicts.push({
            expectation: `${s.label} at ${p.params.irq_rate}/s delivers less entropy than inline${on}`,
            outcome: 'reproduced',
            detail: `${(s.rates.entropy_bits ?? 0).toFixed(0)} bits/s vs inline ${ib.toFixed(0)} (${s.counters.mixes_remote ?? 0} mixes ran off their CPU and were refused)`,
          });
        }
      }
    }
  }
  ctx.io.stdout(`${lines.join('\n')}\n`);
  if (verdicts.length === 0)
    verdicts.push(
      r.points.some((p) => (strategy(p, 'inline')?.rates.entropy_bits ?? 0) > 0)
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
