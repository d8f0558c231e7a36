/**
 * ipi-storm (seed 002, Tempesta FW "Reduce raised IPIs"): producers on CPU 0 queue items for a
 * consumer on CPU 1 through a cross-CPU ring; the consumer drains in NET_TX softirq with a
 * budget. IPI policy 'always' (irq_work_queue_on after every item) against 'if-idle'
 * (Tempesta's fix: a flag cleared by the IPI handler, set by the consumer once drained, a full
 * barrier and a re-check). The seed saw 1.8–2.4 times fewer IPIs for the same work.
 *
 * Both policies run on one machine, trials interleaved (always, if-idle, always, ...): the
 * policy is a word the main thread switches between trials.
 */

import { join } from 'node:path';
import { sayStopped } from '../cli/main.js';
import { type CommandRules, type FixedSetting, noHogs } from '../config/rules.js';
import { Interrupted, MachineFaultError } from '../errors.js';
import { machineOptions } from '../harness/options.js';
import { Phase } from '../hw/layout.js';
import { Machine } from '../machine/machine.js';
import { makeDirs } from '../report/run/outdir.js';
import { TRACING_OFF_NOTE } from '../report/run/table.js';
import { writeFileAtomic } from '../report/run/write.js';
import { compare } from '../report/statistics/interval.js';
import { median } from '../report/statistics/order.js';
import type { NotifyPolicy } from '../shm/doorbell.js';
import { setCrossCpuPolicy } from '../workloads/cross-cpu.js';
import {
  effect,
  NO_SWEEP,
  NO_TIMELINE,
  noTcpLat,
  printVerdicts,
  type ScenarioContext,
  tooFewTrials,
  us,
  type Verdict,
} from './common.js';

const NO_IRQS: FixedSetting = { kind: 'unused', why: 'it raises no device interrupts: IPIs carry its work' };
const NO_FAST_POOL: FixedSetting = {
  kind: 'unused',
  why: "it raises no device interrupts, so random.c's fast pool never runs",
};

/** Honoured: --cpus (2+), --hz, --duration, --warmup, --trials, --seed, --no-tracing and the machine's settings. */
const RULES: CommandRules = {
  minCpus: { count: 2, why: 'whose producer runs on CPU 0 and consumer on CPU 1' },
  fixed: {
    ...noHogs(),
    strategies: {
      kind: 'unused',
      why: 'it compares two IPI policies, always and if-idle, not deferral strategies',
    },
    baseline: { kind: 'unused', why: 'it compares the IPI policies always and if-idle' },
    'workload.kind': { kind: 'sets', why: 'its workload is a producer on CPU 0 queuing items for a consumer on CPU 1' },
    ...noTcpLat('its workload is a cross-CPU queue, not tcp_lat'),
    'irq.rate': NO_IRQS,
    'irq.pattern': NO_IRQS,
    'irq.burstSize': NO_IRQS,
    'irq.cpus': NO_IRQS,
    'fastPool.trigger': NO_FAST_POOL,
    'fastPool.variant': NO_FAST_POOL,
    notify: {
      kind: 'sets',
      why: 'it runs both IPI policies, always and if-idle, on one machine; the doorbell policy stays if-idle so that only the IPI policy differs',
      allows: 'if-idle',
    },
    sweep: NO_SWEEP,
    control: { kind: 'unused', why: 'it compares two IPI policies, not deferral strategies', allows: false },
    until: { kind: 'unused', why: 'it runs --trials rounds of its own', allows: null },
    maxTimeMs: { kind: 'unused', why: 'it runs --trials rounds of its own' },
    sliceMs: { kind: 'unused', why: 'it runs --trials rounds of whole trials of its own' },
    wide: { kind: 'unused', why: 'it prints its own table, which has no hidden columns', allows: false },
    ...NO_TIMELINE,
  },
};

export const ipiStormPreset = {
  summary: "seed 002: cross-CPU work queues; IPIs with 'always' vs 'if-idle' (Tempesta's fix) for the same work",
  // Seed 002 is Tempesta FW on a 2018 4.x kernel: the nearest profile is 5.15 (CFS, ksoftirqd rule).
  config: {
    trials: 5,
    trialMs: '1s',
    warmupMs: '300ms',
    kernel: '5.15',
    irq: { rate: 0 },
    workload: { kind: 'irq_only' },
  },
  rules: RULES,
};

/** Sleeps `ms`, or less when `signal` aborts first (Ctrl-C stops a trial at once). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

interface Trial {
  policy: NotifyPolicy;
  items: number;
  ipis: number;
  seconds: number;
  p50: number;
  p99: number;
}

/** `[lo, hi]` with `digits` decimals, or `[no CI: n<2]` without an interval (one trial), as the tables say. */
export function intervalText(lo: number, hi: number, digits: number): string {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return '[no CI: n<2]';
  return `[${lo.toFixed(digits)}, ${hi.toFixed(digits)}]`;
}

/**
 * IPIs per item with 'if-idle' against 'always', in words: `2.41x fewer IPIs per item`, or
 * `1.41x more IPIs per item` when if-idle raised more.
 */
export function ipiRatioText(alwaysPerK: number, ifIdlePerK: number): string {
  if (!Number.isFinite(alwaysPerK) || !Number.isFinite(ifIdlePerK)) return 'IPIs per item not measured';
  if (ifIdlePerK === 0 && alwaysPerK === 0) return 'no IPIs with either policy';
  if (ifIdlePerK === 0) return `no IPIs with if-idle against ${alwaysPerK.toFixed(1)} per 1000 items with always`;
  const ratio = alwaysPerK / ifIdlePerK;
  return ratio >= 1 ? `${ratio.toFixed(2)}x fewer IPIs per item` : `${(1 / ratio).toFixed(2)}x more IPIs per item`;
}

export async function runIpiStorm(
  ctx: ScenarioContext,
  load = { produceNs: 2000, consumeNs: 1000, budget: 64 },
): Promise<number> {
  const { config: c, io } = ctx;
  const opts = {
    ...machineOptions(c),
    irq: { rate: 0, pattern: 'constant' as const, burstSize: 8, cpus: [] },
    workload: { kind: 'cross_cpu' as const, producers: [0], consumers: [1], policy: 'always' as const, ...load },
  };
  const warm = c.warmupMs ? ` (+ ${c.warmupMs} ms warm-up)` : '';
  io.stdout(
    `\n== ipi-storm ==\nproducer CPU 0 → consumer CPU 1; ${load.produceNs} ns of work per item produced, ${load.consumeNs} ns per item consumed, NET_TX budget ${load.budget}; ${c.cpus} CPUs, HZ ${c.hz}, kernel ${c.kernel}; ${c.trials} ${c.trials === 1 ? 'trial' : 'trials'} of ${c.trialMs} ms${warm} per policy, interleaved\n`,
  );
  const m = await Machine.boot(opts);
  const w = opts.workload;
  if (w.kind !== 'cross_cpu') throw new Error('ipi-storm: the workload is not cross_cpu');
  const setPolicy = (p: NotifyPolicy) => setCrossCpuPolicy(m.i32, m.R.workload, w, p);
  const trials: Trial[] = [];
  let status = 0;
  let error: string | undefined;
  const check = () => {
    if (ctx.signal.aborted) throw new Interrupted();
  };
  try {
    const policies = ['always', 'if-idle'] as const;
    for (const p of policies) {
      check();
      setPolicy(p);
      m.setPhase(Phase.Warmup);
      await sleep(c.warmupMs, ctx.signal);
      await settle(m);
    }
    for (let r = 0; r < c.trials; r++) {
      for (const p of policies) {
        check();
        setPolicy(p);
        m.setPhase(Phase.Warmup);
        await sleep(c.warmupMs * (opts.tdf ?? 1), ctx.signal); // emulated ms, × TDF on the host
        check();
        const c0 = m.counters();
        const t0 = m.nowNs();
        m.setPhase(Phase.Measure);
        await sleep(c.trialMs * (opts.tdf ?? 1), ctx.signal);
        check(); // a trial cut short by Ctrl-C is not kept
        const c1 = m.counters();
        const t1 = m.nowNs();
        const h = await settle(m);
        if (m.fault) throw new MachineFaultError(m.fault);
        const oneWay = h.one_way && h.one_way.totalCount > 0 ? h.one_way : undefined;
        trials.push({
          policy: p,
          items: c1.items_consumed - c0.items_consumed,
          ipis: c1.ipis_sent - c0.ipis_sent,
          seconds: (t1 - t0) / 1e9,
          p50: oneWay?.getValueAtPercentile(50) ?? Number.NaN,
          p99: oneWay?.getValueAtPercentile(99) ?? Number.NaN,
        });
      }
    }
  } catch (e) {
    if (e instanceof Interrupted || ctx.signal.aborted) status = 130;
    else {
      status = 1;
      error = e instanceof Error ? e.message : String(e);
      sayStopped(io, 'failed', `ipi-storm failed: ${error}`);
    }
  } finally {
    await m.stop();
  }
  const of = (p: Trial['policy']) => trials.filter((t) => t.policy === p);
  const perK = (t: Trial) => (t.items > 0 ? (1000 * t.ipis) / t.items : Number.NaN);
  const rate = (t: Trial) => t.items / t.seconds;
  const a = of('always');
  const b = of('if-idle');
  // The trials' median (the mean of the middle two for an even count: with 2 trials it is their
  // mean, as the verdict's paired difference is; the upper one made the two disagree).
  const med = (xs: number[]) => {
    const s = xs.filter(Number.isFinite);
    return s.length ? median(s) : Number.NaN;
  };
  const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
  io.stdout(
    '\nmedians over the trials\npolicy    trials   items/s   IPIs/s   IPIs per 1000 items   item latency p50   p99\n',
  );
  for (const [p, ts] of [
    ['always', a],
    ['if-idle', b],
  ] as const) {
    io.stdout(
      `${p.padEnd(8)}  ${String(ts.length).padStart(6)}  ${fixed(med(ts.map(rate)), 0).padStart(8)}  ${fixed(
        med(ts.map((t) => t.ipis / t.seconds)),
        0,
      ).padStart(
        7,
      )}  ${fixed(med(ts.map(perK)), 1).padStart(20)}  ${us(med(ts.map((t) => t.p50))).padStart(17)}  ${us(med(ts.map((t) => t.p99)))}\n`,
    );
  }
  if (!c.tracing) io.stdout(`${TRACING_OFF_NOTE}\n`);
  io.stdout(`seed ${c.seed} (replay: --seed ${c.seed})\n`);
  const n = Math.min(a.length, b.length);
  const cmp = compare(a.slice(0, n).map(perK), b.slice(0, n).map(perK));
  const thr = compare(a.slice(0, n).map(rate), b.slice(0, n).map(rate), { better: 'higher' });
  // Fewer IPIs: shown when the interval excludes 0 below; ruled out when it excludes a 10% cut.
  const fewer = effect(cmp, 'down');
  // Throughput lost: shown when the interval excludes 0 below; ruled out when it excludes a 10% loss.
  const lost = effect(thr, 'down');
  const inconclusive = ` (${tooFewTrials(n)})`;
  const verdicts: Verdict[] = [
    {
      expectation: "'if-idle' raises fewer IPIs than 'always' for the same work",
      outcome: fewer === 'shown' ? 'reproduced' : fewer === 'ruled out' ? 'not reproduced' : 'inconclusive',
      detail: `${ipiRatioText(med(a.map(perK)), med(b.map(perK)))} (the seed: 1.8–2.4x fewer); difference ${fixed(cmp.diff, 1)} per 1000 items ${intervalText(cmp.ciLow, cmp.ciHigh, 1)}${fewer === 'open' ? inconclusive : ''}`,
    },
    {
      expectation: 'throughput is not lost',
      outcome: lost === 'ruled out' ? 'reproduced' : lost === 'shown' ? 'not reproduced' : 'inconclusive',
      detail: `items/s if-idle vs always: ${fixed(med(b.map(rate)) / med(a.map(rate)), 2)}x, difference ${fixed(thr.diff, 0)} items/s ${intervalText(thr.ciLow, thr.ciHigh, 0)}${lost === 'open' ? inconclusive : ''}`,
    },
  ];
  printVerdicts(io, verdicts, status);
  const file = c.outDir ? join(c.outDir, 'ipi-storm.json') : undefined;
  if (c.outDir && file) {
    await makeDirs(c.outDir); // never mkdir -p: Node 20's recursive mkdir loops under /proc
    const record = {
      seed: c.seed,
      command: ['deferlab', ...ctx.argv],
      status: status === 0 ? 'completed' : status === 130 ? 'interrupted' : 'failed',
      ...(error ? { error } : {}),
      load,
      trials,
    };
    await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`);
    io.stdout(`\nresults: ${file}\n`);
  }
  if (status === 130)
    sayStopped(
      io,
      'interrupted',
      `interrupted; the trials finished so far are in the table above${file ? ` and in ${file}` : ''}`,
    );
  return status;
}

async function settle(m: Machine) {
  m.setPhase(Phase.Drain);
  const busy = await m.drain(5000);
  if (busy) throw new Error(`did not drain: ${busy}`);
  const h = await m.collect();
  m.setPhase(Phase.Pause);
  return h;
}
