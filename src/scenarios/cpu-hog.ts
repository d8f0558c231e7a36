/**
 * cpu-hog (seed 004, idpf): a CPU hog pinned to CPU 0 at nice -20 leaves the bound kworker a
 * sliver of CPU 0; a driver that queues work to CPU 0 through a bound workqueue sees
 * workqueue_queue_work → workqueue_execute_start delays in milliseconds (the seed: up to 30 ms),
 * through a WQ_UNBOUND one in microseconds (the seed: 6 µs at most). Also a real-time variant
 * (the hog SCHED_FIFO: RT throttling alone leaves the kworker 5% of each second).
 *
 * Machine: interrupts only on CPU 0 (the driver's), each queuing a driver work item of 20 µs
 * (the payload is the driver's work, not random.c's mix); strategies `workqueue(wq=system)`
 * (alloc_workqueue(..., 0, 0): bound, nice 0) and `unbound` (scope system: any idle CPU).
 */
import type { CommandRules } from '../config/rules.js';
import type { ResolvedConfig } from '../config/schema.js';
import type { MachineOptions } from '../machine/options.js';
import type { StrategyResult } from '../report/types.js';
import {
  ms,
  NO_SWEEP,
  NO_TIMELINE,
  needsTracing,
  noTcpLat,
  printResults,
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

const NOT_RANDOM = "each interrupt queues the driver's 20 µs work item, not random.c's mix";

/** Honoured: --cpus (2+), --hz, --duration, --warmup, --trials, --irq-rate/-pattern/-burst, --seed and the machine's settings. */
const RULES: CommandRules = {
  minCpus: { count: 2, why: 'whose hog holds CPU 0 while the unbound worker runs on another CPU' },
  fixed: {
    strategies: { kind: 'sets', why: 'it compares workqueue:wq=system with unbound:scope=system' },
    baseline: { kind: 'sets', why: 'it compares unbound:scope=system against workqueue:wq=system' },
    'workload.kind': { kind: 'sets', why: 'its workload is a CPU hog and a driver, both on CPU 0' },
    ...noTcpLat('its workload is a CPU hog and a driver, not tcp_lat'),
    'irq.cpus': { kind: 'sets', why: "the driver's interrupts arrive on CPU 0, the hog's CPU" },
    'fastPool.trigger': { kind: 'unused', why: NOT_RANDOM },
    'fastPool.variant': { kind: 'unused', why: NOT_RANDOM },
    sweep: NO_SWEEP,
    tracing: needsTracing('its verdicts read the traced queue → start delays'),
    ...NO_TIMELINE,
  },
};

export const cpuHogPreset = {
  summary: 'seed 004: a nice -20 CPU hog on CPU 0; bound vs unbound workqueue queue→start delay (ms vs µs)',
  config: {
    trials: 3,
    trialMs: '2s',
    warmupMs: '300ms',
    hz: 1000,
    // Seed 004 is an August 2024 net-next patch (~6.11): the nearest profile is 6.9 (EEVDF).
    kernel: '6.9',
    irq: { rate: 200, cpus: '0' },
    workload: { kind: 'irq_only' },
  },
  rules: RULES,
};

/** The driver's work item, queued by each interrupt. */
const DRIVER_WORK_NS = 20_000;
const BOUND = 'workqueue(wq=system)';
const UNBOUND = 'unbound(scope=system)';
/** Fewer started work items than this cannot show a delay's absence (a max of a few samples). */
const MIN_SAMPLES = 20;

/** Queue → start delays of one strategy's work, and the interrupts that asked for it. */
export interface Delays {
  /** Work items that started in the measured window. */
  started: number;
  /** Interrupts on CPU 0 in the measured window: each queued the work, or found it still queued. */
  interrupts: number;
  p50: number;
  p99: number;
  max: number;
}

function delays(s: StrategyResult | undefined): Delays {
  return {
    started: s?.merged.handoff_to_start?.summary.count ?? 0,
    interrupts: s?.counters.interrupts ?? 0,
    p50: stageValue(s, 'handoff_to_start', 'p50'),
    p99: stageValue(s, 'handoff_to_start', 'p99'),
    max: stageValue(s, 'handoff_to_start', 'max'),
  };
}

/**
 * Starved: most interrupts found the work still queued, so its worker rarely ran; the delays
 * of the few items that started say little, and the one still queued at the end is not in them.
 */
const starved = (d: Delays) => d.interrupts > 0 && d.started < d.interrupts / 2;

const startedOf = (d: Delays) => `${d.started} of ${d.interrupts} interrupts' work started`;

/**
 * Work asked for and never started in the window is the strongest reproduction: the kworker
 * got no CPU at all. Without that, a small max from a few started items decides nothing.
 */
export function boundVerdict(name: string, b: Delays, duration: string): Verdict {
  const expectation = `${name}: bound kworker delayed by milliseconds`;
  const seed = '(the seed: up to 30 ms)';
  if (b.started === 0 && b.interrupts > 0)
    return {
      expectation,
      outcome: 'reproduced',
      detail: `bound work never started in the measured window (${startedOf(b)}: starved) ${seed}`,
    };
  if (b.started === 0)
    return {
      expectation,
      outcome: 'inconclusive',
      detail: 'no interrupt reached CPU 0 in the measured window, so no work was queued (is --irq-rate 0?)',
    };
  const numbers = `bound max ${ms(b.max)}, p99 ${ms(b.p99)}${starved(b) ? `; only ${startedOf(b)}, the others found it still queued` : ''}`;
  if (b.max >= 1e6) return { expectation, outcome: 'reproduced', detail: `${numbers} ${seed}` };
  if (b.started < MIN_SAMPLES)
    return {
      expectation,
      outcome: 'inconclusive',
      detail: `${numbers} from only ${b.started} started work items (too few samples; try --duration ${duration})`,
    };
  return { expectation, outcome: 'not reproduced', detail: `${numbers} ${seed}` };
}

/** Unbound: p50 in microseconds and, unless the bound kworker starved, a p99 below the bound one. */
export function unboundVerdict(name: string, u: Delays, b: Delays, duration: string): Verdict {
  const expectation = `${name}: unbound worker waits microseconds, not milliseconds`;
  const bound = starved(b) ? `a starved bound kworker (${startedOf(b)})` : `bound p50 ${us(b.p50)}, p99 ${us(b.p99)}`;
  const detail = `unbound p50 ${us(u.p50)}, p99 ${us(u.p99)}, max ${us(u.max)} against ${bound} (the seed: 6 µs max; here a wakeup is a futex hand-off, ~10–80 µs, and a 2-core host adds its own scheduling tails)`;
  if (u.started < MIN_SAMPLES || (!starved(b) && b.started < MIN_SAMPLES))
    return {
      expectation,
      outcome: 'inconclusive',
      detail: `${detail}; only ${u.started} unbound and ${b.started} bound work items started (too few samples; try --duration ${duration})`,
    };
  const reproduced = u.p50 < 1e6 && (starved(b) || u.p99 < b.p99);
  return { expectation, outcome: reproduced ? 'reproduced' : 'not reproduced', detail };
}

export async function runCpuHog(ctx: ScenarioContext): Promise<number> {
  const c = ctx.config;
  const base: ResolvedConfig = {
    ...c,
    strategies: specs(['workqueue:wq=system', 'unbound:scope=system']),
    baseline: BOUND,
    sweep: null,
  };
  const variants = [
    { name: 'cpu-hog-nice-20', hog: { policy: 'normal' as const, nice: -20, rtPrio: 0 }, what: 'at nice -20' },
    { name: 'cpu-hog-fifo', hog: { policy: 'fifo' as const, nice: 0, rtPrio: 50 }, what: 'SCHED_FIFO 50' },
  ];
  const pattern = c.irq.pattern === 'bursts' ? `bursts of ${c.irq.burstSize}` : c.irq.pattern;
  const driver = `a driver: ${c.irq.rate} interrupts/s (${pattern}) on CPU 0, each queuing ${DRIVER_WORK_NS / 1000} µs of work`;
  const runs = [];
  const verdicts: Verdict[] = [];
  for (const v of variants) {
    const adjust = (o: MachineOptions): MachineOptions => ({
      ...o,
      workload: { kind: 'custom', tasks: [{ kind: 'hog', cpu: 0, ...v.hog }] },
      payload: { kind: 'driver_work', workNs: DRIVER_WORK_NS },
      irq: { ...o.irq, cpus: [0] },
    });
    const r = await subRun(ctx, v.name, base, adjust, `a CPU hog on CPU 0 ${v.what} and ${driver}`);
    runs.push(r);
    if (r.status !== 'completed') break;
    const p = r.points[0];
    const b = delays(strategy(p, BOUND));
    const u = delays(strategy(p, UNBOUND));
    ctx.io.stdout(
      `${v.name}: queue→start (workqueue_queue_work → workqueue_execute_start): bound p99 ${ms(b.p99)} max ${ms(b.max)}; unbound p99 ${us(u.p99)} max ${us(u.max)}; work started ${b.started} / ${u.started} (interrupts ${b.interrupts} / ${u.interrupts})\n`,
    );
    const longer = `${Math.ceil((c.trialMs * 4) / 1000)}s`;
    verdicts.push(boundVerdict(v.name, b, longer), unboundVerdict(v.name, u, b, longer));
  }
  const status = scenarioStatus(runs);
  printVerdicts(ctx.io, verdicts, status);
  printResults(
    ctx,
    runs.map((_, i) => variants[i].name),
  );
  return status;
}
