/**
 * entropy (seed 000, Sebastian's question): for each strategy and interrupt rate, how often the
 * fast pool is mixed, how many bits reach the input pool per second, and how soon it holds 256
 * bits. A strategy that is cheap because it rarely mixes must show it here.
 */
import type { ResolvedConfig } from '../config/schema.js';
import {
  ms,
  printVerdicts,
  type ScenarioContext,
  scenarioStatus,
  specs,
  strategy,
  subRun,
  type Verdict,
} from './common.js';

export const entropyPreset = {
  summary: 'seed 000: mixes/s, entropy bits/s and time to 256 bits per strategy and interrupt rate',
  config: { trials: 2, trialMs: '1.5s', warmupMs: '200ms', workload: { kind: 'irq_only' } },
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

export async function runEntropy(ctx: ScenarioContext, rates: number[] = [200, 2000, 20000]): Promise<number> {
  const c = ctx.config;
  const base: ResolvedConfig = {
    ...c,
    strategies: specs(STRATEGIES),
    baseline: 'inline',
    sweep: { param: 'irq_rate', values: rates },
  };
  const r = await subRun(ctx, 'entropy', base);
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
            expectation: `${s.label} at ${p.params.irq_rate}/s delivers less entropy than inline`,
            reproduced: true,
            detail: `${(s.rates.entropy_bits ?? 0).toFixed(0)} bits/s vs inline ${ib.toFixed(0)} (${s.counters.mixes_remote ?? 0} mixes ran off their CPU and were refused)`,
          });
        }
      }
    }
  }
  ctx.io.stdout(`${lines.join('\n')}\n`);
  if (verdicts.length === 0)
    verdicts.push({
      expectation: 'a strategy starves the input pool',
      reproduced: false,
      detail: "every strategy delivered at least half of inline's bits/s",
    });
  printVerdicts(ctx.io, verdicts);
  return scenarioStatus([r]);
}
