/**
 * random-regression (seeds 000, 001): qperf tcp_lat under random.c's deferral strategies.
 * The seed saw ~10% on qperf's average with queue_work_on(system_highpri_wq), system_wq too,
 * and the tasklet and timer fixes restored it; nobody could explain 10% from one hand-off per
 * 1024 interrupts. This scenario measures, per strategy, the latency distribution and the
 * extra cost per hand-off, then sweeps the interrupt rate (and, as a what-if, the 1024
 * trigger) to find where workqueue's regression against inline reaches 10%.
 */
import type { ResolvedConfig } from '../config/schema.js';
import type { RunResults } from '../report/types.js';
import {
  comparison,
  pct,
  printVerdicts,
  type ScenarioContext,
  scenarioStatus,
  specs,
  stageValue,
  strategy,
  subRun,
  us,
  type Verdict,
} from './common.js';

export const randomRegressionPreset = {
  summary:
    'seeds 000/001: tcp_lat under inline, workqueue (highpri, system_wq), tasklet, timer (plain, deferrable); where does 10% come from?',
  config: { trials: 3, trialMs: '800ms', warmupMs: '200ms', workload: { kind: 'tcp_lat' } },
};

const MAIN = ['inline', 'workqueue', 'workqueue:wq=system', 'tasklet', 'timer', 'timer:deferrable=true'];
const BAD = ['workqueue', 'workqueue(wq=system)'];
const FIXES = ['tasklet', 'timer', 'timer(deferrable=true)'];

export interface RegressionSizes {
  msgSizes: number[];
  rates: number[];
  triggers: number[];
}

export const DEFAULT_SIZES: RegressionSizes = { msgSizes: [4096, 65536], rates: [20000, 200000], triggers: [1024, 16] };
export const FULL_SIZES: RegressionSizes = {
  msgSizes: [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576],
  rates: [1000, 20000, 100000, 300000],
  triggers: [1024, 128, 16],
};

export async function runRandomRegression(
  ctx: ScenarioContext,
  sizes: RegressionSizes = DEFAULT_SIZES,
): Promise<number> {
  const c = ctx.config;
  const wl =
    c.workload.kind === 'tcp_lat'
      ? c.workload
      : { kind: 'tcp_lat' as const, msgSize: 64, clientCpu: 0, serverCpu: 1, ringBytes: 4 << 20 };
  const sweep = c.sweep ?? { param: 'msg_size' as const, values: sizes.msgSizes };
  const maxMsg = Math.max(...sweep.values, wl.msgSize);
  const ringBytes = Math.max(wl.ringBytes, 2 ** Math.ceil(Math.log2(maxMsg * 4 + 64)));
  const main: ResolvedConfig = {
    ...c,
    strategies: specs(MAIN),
    baseline: 'inline',
    workload: { ...wl, ringBytes },
    sweep,
  };
  const runs: RunResults[] = [];
  const r1 = await subRun(ctx, 'random-regression', main);
  runs.push(r1);
  const verdicts: Verdict[] = [];
  // Extra cost per hand-off, per point.
  const lines = [
    '',
    'point        strategy                  hand-offs/s  +ctx switches per hand-off  hand-off call p50  lock wait p99  hand-off→start p50',
  ];
  for (const p of r1.points) {
    const base = strategy(p, 'inline');
    for (const s of p.strategies) {
      const hs = s.rates.handoffs ?? 0;
      // Context switches per message differ with the message rate; normalise by it, then
      // charge the excess over inline to the hand-offs (a kworker: in and out, 2 each).
      const perMsg = (x: typeof s | undefined) =>
        (x?.rates.ctx_switches ?? 0) / Math.max(1, x?.rates.app_messages ?? 0);
      const extraCtx = hs > 0 ? ((perMsg(s) - perMsg(base)) * (s.rates.app_messages ?? 0)) / hs : Number.NaN;
      lines.push(
        `${String(p.params.msg_size ?? wl.msgSize).padEnd(11)}  ${s.label.padEnd(24)}  ${hs.toFixed(1).padStart(11)}  ${extraCtx.toFixed(1).padStart(26)}  ${us(stageValue(s, 'handoff_call', 'p50')).padStart(17)}  ${us(stageValue(s, 'lock_wait', 'p99')).padStart(13)}  ${us(stageValue(s, 'handoff_to_start', 'p50')).padStart(18)}`,
      );
    }
  }
  ctx.io.stdout(`${lines.join('\n')}\n`);
  for (const label of BAD) {
    const hits = r1.points.flatMap((p) =>
      (['p99', 'p99_9', 'mean', 'p50'] as const)
        .filter((m) => comparison(strategy(p, label), 'one_way', m)?.verdict === 'regression')
        .map((m) => `${m}@${p.params.msg_size ?? wl.msgSize}`),
    );
    verdicts.push({
      expectation: `${label} measurably worse than inline (at least in the tail)`,
      reproduced: hits.length > 0,
      detail: hits.length
        ? `regressions (interval excludes 0): ${hits.join(', ')}`
        : 'no one-way metric cleared its 95% interval at any message size',
    });
  }
  for (const label of FIXES) {
    const worse = r1.points.filter((p) => comparison(strategy(p, label), 'one_way', 'mean')?.verdict === 'regression');
    const deltas = r1.points.map((p) => {
      const cmp = comparison(strategy(p, label), 'one_way', 'mean');
      return cmp ? `${pct(cmp.ratio - 1)}@${p.params.msg_size ?? wl.msgSize}` : 'n/a';
    });
    verdicts.push({
      expectation: `${label} within noise of inline (mean)`,
      reproduced: worse.length === 0,
      detail: `mean vs inline: ${deltas.join(', ')}`,
    });
  }
  // Where does the regression reach 10%? Interrupt rate × trigger (what-if).
  let best = { reg: Number.NEGATIVE_INFINITY, p50: Number.NaN, rate: 0, trigger: 0 };
  const regime: string[] = ['', 'rate/CPU  trigger  workqueue vs inline: mean      p50        hand-offs/s'];
  for (const trigger of sizes.triggers) {
    if (ctx.signal.aborted || r1.status !== 'completed') break;
    const cfg: ResolvedConfig = {
      ...c,
      strategies: specs(['inline', 'workqueue']),
      baseline: 'inline',
      workload: { ...wl, msgSize: 64 },
      fastPool: { ...c.fastPool, trigger },
      sweep: { param: 'irq_rate', values: sizes.rates },
    };
    const r = await subRun(ctx, `random-regression-trigger-${trigger}`, cfg);
    runs.push(r);
    for (const p of r.points) {
      const wq = strategy(p, 'workqueue');
      const mean = comparison(wq, 'one_way', 'mean');
      const p50 = comparison(wq, 'one_way', 'p50');
      const reg = mean ? mean.ratio - 1 : Number.NaN;
      regime.push(
        `${String(p.params.irq_rate).padStart(8)}  ${String(trigger).padStart(7)}  ${pct(reg).padStart(27)}  ${pct(p50 ? p50.ratio - 1 : Number.NaN).padStart(9)}  ${(wq?.rates.handoffs ?? 0).toFixed(0).padStart(13)}`,
      );
      if (Number.isFinite(reg) && reg > best.reg)
        best = { reg, p50: p50 ? p50.ratio - 1 : Number.NaN, rate: Number(p.params.irq_rate), trigger };
    }
    if (r.status !== 'completed') break;
  }
  ctx.io.stdout(`${regime.join('\n')}\n`);
  verdicts.push({
    expectation: "workqueue's mean regression against inline reaches the seed's 10% in some regime",
    reproduced: best.reg >= 0.1,
    detail: Number.isFinite(best.reg)
      ? `largest: mean ${pct(best.reg)}, p50 ${pct(best.p50)} at ${best.rate} interrupts/s per CPU with trigger ${best.trigger}${best.reg < 0.1 ? "; the direct costs of a hand-off (a wakeup and two context switches per mix) are too rare at 1 per 1024 interrupts to reach 10% — it takes far more hand-offs per second (a lower trigger) or a kworker that competes with the softirq work itself (Tejun's theory)" : ''}`
      : 'no measurement',
  });
  printVerdicts(ctx.io, verdicts);
  return scenarioStatus(runs);
}
