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
 *
 * The verdicts read every request's wait (`request_to_start`: each interrupt, including those that
 * found the work still pending, until the run that served it started), not the delays of the work
 * items that started: a starved kworker runs few items, and their delays alone can look short.
 */
import type { CommandRules } from '../config/rules.js';
import type { ResolvedConfig } from '../config/schema.js';
import { RT_PERIOD_NS } from '../kernel/sched/rt.js';
import type { MachineOptions } from '../machine/options.js';
import { DEFAULT_SLOW_REQUEST_NS } from '../random/driver.js';
import { interval } from '../report/statistics/meta.js';
import type { StrategyResult } from '../report/types.js';
import {
  beyondFloor,
  controlOf,
  dur,
  ms,
  NO_SWEEP,
  NO_TIMELINE,
  needsTracing,
  noTcpLat,
  type Outcome,
  pct,
  pointFloor,
  printResults,
  printVerdicts,
  type Resolution,
  resolutionConfig,
  type ScenarioContext,
  scenarioStatus,
  specs,
  stageValue,
  strategy,
  subRun,
  tooFewTrials,
  untilOn,
  type Verdict,
} from './common.js';
import { type PooledEffect, pooledDifference, pooledEffect } from './effects.js';

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

/**
 * Its verdicts decide at the defaults: an A/A copy of the bound kworker (`--control`) is the noise
 * floor of the share of slow requests, and `--until` adds rounds until the Δ-mean intervals of
 * request_to_start (unbound and the control against the bound kworker) are within ±20% of the
 * bound mean, for at most 60 s per variant (two variants: about 2 minutes at most).
 */
export const CPU_HOG_RESOLUTION: Resolution = { control: true, until: { pct: 20, maxTime: '60s' } };

/** The hog's two variants, by sub-run name. */
export const CPU_HOG_VARIANTS = ['cpu-hog-nice-20', 'cpu-hog-fifo'] as const;

/** RT throttling's period (sched_rt_period_us), in ms: the FIFO variant's shortest trial. */
const RT_PERIOD_MS = RT_PERIOD_NS / 1e6;

/**
 * A variant's config: under SCHED_FIFO, trials of at least one RT period. RT throttling holds the
 * bound kworker off CPU 0 for 950 ms of each 1 s period and releases it for the rest; a trial
 * shorter than the period holds a release in some rounds and not in others (which one is the
 * phase of the period, not the strategy), so in many the bound kworker and its A/A copy start no
 * work at all, and the table's Δ, which pairs the rounds in which both sides did, had no pair left
 * (a probe's 300 ms trials: `? [no CI: n<2]` on the noise floor's row with 4 trials a side).
 */
export function variantConfig(config: ResolvedConfig, policy: 'normal' | 'fifo'): ResolvedConfig {
  return policy === 'fifo' && config.trialMs < RT_PERIOD_MS ? { ...config, trialMs: RT_PERIOD_MS } : config;
}

/** One sub-run per variant: the hog's scheduling policy on CPU 0. */
const HOG_VARIANTS: readonly {
  name: (typeof CPU_HOG_VARIANTS)[number];
  hog: { policy: 'normal' | 'fifo'; nice: number; rtPrio: number };
  what: string;
}[] = [
  { name: 'cpu-hog-nice-20', hog: { policy: 'normal', nice: -20, rtPrio: 0 }, what: 'at nice -20' },
  { name: 'cpu-hog-fifo', hog: { policy: 'fifo', nice: 0, rtPrio: 50 }, what: 'SCHED_FIFO 50' },
];

export const cpuHogPreset = {
  summary:
    "seed 004: a nice -20 CPU hog on CPU 0; bound vs unbound workqueue: every interrupt's wait until its work ran (ms vs µs)",
  config: {
    trials: 3,
    trialMs: '2s',
    warmupMs: '300ms',
    // Whole trials: a bound kworker starved by the hog waits up to a host time slice and more,
    // and a slice's drain would end such waits early (the request's wait is recorded only when
    // its work starts in the measured phase), taking the longest ones out of every 100 ms slice.
    sliceMs: 0,
    hz: 1000,
    // Seed 004 is an August 2024 net-next patch (~6.11): the nearest profile is 6.9 (EEVDF).
    kernel: '6.9',
    // Idle CPUs halt: the hog spins (on CPU 0's thread by default, --hogs; measured below when it
    // was a thread of its own), so with idle CPUs polling too the
    // spinning threads fill a 2-core host (--idle auto counts emulated CPUs, not the hog) and the
    // unbound worker's thread waits for a host time slice. Measured here (2 trials of 1 s, host
    // load ~8 from others): the unbound worker's requests over 1 ms were 9.7% (nice -20) and 45.3%
    // (FIFO) under poll, 13.7% and 16.0% under halt; in 100 ms trials under poll, up to 93%.
    // --idle still chooses another.
    idle: 'halt',
    // V8's helper threads under SCHED_IDLE (src/machine/host-threads.ts HOST_HELPER_IDLE): with
    // the hog's thread spinning on one host core, the unbound worker's CPU thread is woken on the
    // other, where a nice-10 helper kept it waiting past 0.5 ms on 0.9–2.3% of wake-ups (0.3–0.9%
    // under SCHED_IDLE; ftrace, docs/twin.md). CPU 1 halts, so the compiler keeps a core's room.
    hostHelpers: 'idle',
    irq: { rate: 200, cpus: '0' },
    workload: { kind: 'irq_only' },
    ...resolutionConfig(CPU_HOG_RESOLUTION),
  },
  rules: RULES,
  sweeps: [`the hog, a sub-run each: ${HOG_VARIANTS.map((v) => `${v.what} (${v.name})`).join(', ')}`],
};

/** The driver's work item, queued by each interrupt. */
const DRIVER_WORK_NS = 20_000;
const BOUND = 'workqueue(wq=system)';
const UNBOUND = 'unbound(scope=system)';
/** Fewer timed requests than this cannot show a delay's absence (a max of a few samples). */
const MIN_SAMPLES = 20;

/** A request that waits longer than this is slow: the seed's bound delays were milliseconds. */
export const SLOW_NS = DEFAULT_SLOW_REQUEST_NS;

/**
 * Every request for one strategy's work in the measured window, and how long each waited until
 * the run that served it started (`request_to_start`): an interrupt that found the work pending
 * waits for that run too, so a starved kworker shows as long waits of many requests, not as a
 * few items that started.
 */
export interface Requests {
  /** Interrupts on CPU 0 in the measured window: each one is a request for the work. */
  interrupts: number;
  /** Requests whose wait was timed: served by a run that started in the window. */
  timed: number;
  /** Of those, the ones that waited longer than {@link SLOW_NS}. */
  slow: number;
  /** Requests that found the work pending while the request ring was full: not timed. */
  untimed: number;
  /** Runs of the work that started in the window (work items). */
  started: number;
  /** Of all runs, those on another CPU than the one that queued the work (mixes_remote). */
  remote: number;
  p50: number;
  p99: number;
  max: number;
}

export function requests(s: StrategyResult | undefined): Requests {
  return {
    interrupts: s?.counters.interrupts ?? 0,
    timed: s?.merged.request_to_start?.summary.count ?? 0,
    slow: s?.counters.requests_slow ?? 0,
    untimed: s?.counters.requests_untimed ?? 0,
    started: s?.merged.handoff_to_start?.summary.count ?? 0,
    remote: s?.counters.mixes_remote ?? 0,
    p50: stageValue(s, 'request_to_start', 'p50'),
    p99: stageValue(s, 'request_to_start', 'p99'),
    max: stageValue(s, 'request_to_start', 'max'),
  };
}

/** The share of timed requests that waited longer than {@link SLOW_NS}; NaN with none timed. */
export const slowShare = (q: Requests): number => (q.timed > 0 ? q.slow / q.timed : Number.NaN);

/**
 * Starved: most requests of the window were not served in it (still waiting at its end), so the
 * waits timed say little, and the longest ones are not among them.
 */
const starved = (q: Requests) => q.interrupts > 0 && q.timed < q.interrupts / 2;

/** Requests served in the window and raised in it: a request raised just before it counts where it is served. */
const servedOf = (q: Requests) => `${q.timed} requests served in the window, ${q.interrupts} raised in it`;

const waits = (q: Requests) =>
  `requests waited up to ${dur(q.max)}, p99 ${dur(q.p99)}, p50 ${dur(q.p50)}; ${pct(slowShare(q))} over 1 ms (${q.slow} of ${q.timed} timed, ${q.started} runs${q.untimed > 0 ? `, ${q.untimed} untimed: request ring full` : ''})`;

/**
 * One trial's requests for the delay share ({@link delayed}): per-trial counters and the timed
 * count of `request_to_start`, with the trial's round (`index`) and machine boot.
 */
export interface TrialRequests {
  index: number;
  boot: number;
  interrupts: number;
  timed: number;
  slow: number;
  untimed: number;
}

export function trialRequests(s: StrategyResult | undefined): TrialRequests[] {
  return (s?.trials ?? []).map((t) => ({
    index: t.index,
    boot: t.boot ?? 0,
    interrupts: t.counters.interrupts ?? 0,
    timed: t.stages.request_to_start?.count ?? 0,
    slow: t.counters.requests_slow ?? 0,
    untimed: t.counters.requests_untimed ?? 0,
  }));
}

/**
 * The delay share of one trial: of its requests, those not served within {@link SLOW_NS}. The
 * timed ones that waited longer (`slow`), and those still waiting when the window ended
 * (`interrupts − untimed − timed`, at least 0: a starved kworker's), which had waited past 1 ms
 * unless they came in the window's last millisecond (at most rate × 1 ms of them, 0.2 at 200/s).
 * So a trial in which the bound kworker served nothing counts as all delayed (share 1), not as
 * missing. `n`: the requests it counts over (timed and still waiting); share NaN with none.
 */
export function delayed(t: TrialRequests): { n: number; share: number } {
  const waiting = Math.max(0, t.interrupts - t.untimed - t.timed);
  const n = t.timed + waiting;
  return { n, share: n > 0 ? (t.slow + waiting) / n : Number.NaN };
}

/**
 * The bound side's delay share over the unbound worker's, in shares of requests (0.5 = 50
 * percentage points), as random-regression's effects are made (effects.ts): per machine boot,
 * the trials paired by round (the same `index`), the difference of the two sides' pooled shares
 * (Σ delayed / Σ requests) with its delta-method standard error over the rounds; the boots joined
 * with a between-boot variance (`pooledEffect`, one point). `ref`: the A/A bound kworker
 * (`--control`), so that the effect is (unbound − bound) − (control − bound), negated: what the
 * baseline's own draw added cancels; without a control, the bound kworker itself. A share needs no
 * baseline to scale it: the effect is the difference itself. Context: pure.
 */
export function delayEffect(ref: readonly TrialRequests[], unbound: readonly TrialRequests[]): PooledEffect {
  const byIndex = new Map(unbound.map((t) => [t.index, t]));
  const boots = [...new Set(ref.map((t) => t.boot))].sort((a, b) => a - b);
  const units = boots.map((boot) => {
    const cells: { nA: number; mA: number; nB: number; mB: number }[] = [];
    for (const r of ref) {
      const u = byIndex.get(r.index);
      if (r.boot !== boot || !u || u.boot !== boot) continue;
      const a = delayed(r);
      const b = delayed(u);
      if (a.n > 0 && b.n > 0) cells.push({ nA: a.n, mA: a.share, nB: b.n, mB: b.share });
    }
    return pooledDifference(cells, 1);
  });
  return pooledEffect([units]);
}

/** The pooled delay share of a strategy's trials: Σ delayed / Σ requests ({@link delayed}). */
export function delayShare(trials: readonly TrialRequests[]): number {
  let n = 0;
  let d = 0;
  for (const t of trials) {
    const x = delayed(t);
    if (x.n === 0) continue;
    n += x.n;
    d += x.share * x.n;
  }
  return n > 0 ? d / n : Number.NaN;
}

/** `+12.3 pp`: a difference of shares in percentage points. */
const pp = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} pp` : 'n/a');

/** The delay shares a bound verdict prints beside its effect (NaN: not measured). */
export interface DelayShares {
  bound: number;
  /** The A/A bound kworker's; undefined without --control. */
  control?: number;
  unbound: number;
}

/**
 * Bound: the hog delays the bound kworker by milliseconds — more of its requests go unserved
 * within 1 ms than an unbound worker's, which a hog on CPU 0 cannot hold up (the seed's contrast),
 * beyond the run's noise: `e` ({@link delayEffect}: the bound side's delay share over the unbound
 * worker's, against the A/A control) is `reproduced` when its 95% interval excludes 0 upwards,
 * `contradicted` when it excludes 0 downwards (the unbound worker's requests were the slower),
 * `inconclusive` when it reaches 0 (inside the noise) or there is no interval (fewer than 2 rounds
 * on every boot). A request over 1 ms alone decides nothing: the host's own scheduling tails give
 * every worker some, the unbound one too. `more`: how to get a decision.
 */
export function boundVerdict(name: string, b: Requests, e: PooledEffect, shares: DelayShares, more: string): Verdict {
  const expectation = `${name}: bound kworker delayed by milliseconds`;
  if (b.interrupts === 0)
    return {
      expectation,
      outcome: 'inconclusive',
      detail: 'no interrupt reached CPU 0 in the measured window, so no work was requested (is --irq-rate 0?)',
    };
  const ctrl = shares.control !== undefined;
  const sharesText = `bound ${pct(shares.bound)}${ctrl ? `, A/A control ${pct(shares.control ?? Number.NaN)}` : ''}, unbound ${pct(shares.unbound)}`;
  const waited = `bound requests waited up to ${dur(b.max)}, p99 ${dur(b.p99)}, p50 ${dur(b.p50)} (${servedOf(b)})`;
  const seed = 'the seed: up to 30 ms bound, 6 µs unbound';
  const what = `requests not served within 1 ms (over 1 ms, or still waiting at the window's end): ${sharesText}`;
  const method = ctrl
    ? '(bound − unbound) − (bound − A/A control), i.e. the A/A control − unbound'
    : 'bound − unbound (no A/A control: --no-control)';
  const { low, high } = interval(e);
  if (!Number.isFinite(low) || !Number.isFinite(high))
    return {
      expectation,
      outcome: 'inconclusive',
      detail: `${what}; no interval for the bound side's excess (it needs 2 or more rounds on a boot with requests on both sides; ${more}); ${waited} (${seed})`,
    };
  const between = Number.isFinite(e.tau2Boot) ? `${(Math.sqrt(e.tau2Boot) * 100).toFixed(1)} pp` : 'n/a';
  // A difference of two shares lies within ±100 pp; its t interval may reach past (clipped there).
  const effectText = `bound side over unbound ${pp(e.est)} [${pp(Math.max(low, -1))}, ${pp(Math.min(high, 1))}] (95% CI; ${method}; rounds paired on each of ${e.boots} boot${e.boots === 1 ? '' : 's'}, between boots ${between})`;
  const rule =
    low > 0
      ? 'the interval excludes 0: beyond the noise'
      : high < 0
        ? "the interval excludes 0 on the other side: the unbound worker's requests were the slower"
        : `the interval reaches 0: inside the noise (${more})`;
  const outcome: Outcome = low > 0 ? 'reproduced' : high < 0 ? 'contradicted' : 'inconclusive';
  return { expectation, outcome, detail: `${effectText}; ${what}; ${rule}; ${waited} (${seed})` };
}

/**
 * Unbound: most of its requests wait less than a millisecond, and its share of slow requests is
 * below the bound one by more than the noise floor (`floor`: how far the A/A copy of the bound
 * kworker's share moved from the bound one; NaN without a control). Against a starved bound
 * kworker, the first condition decides.
 */
export function unboundVerdict(name: string, u: Requests, b: Requests, duration: string, floor = Number.NaN): Verdict {
  // What the rule below decides (the seed's words were "microseconds, not milliseconds", which a
  // reader held against this host's millisecond maximum).
  const expectation = `${name}: unbound worker starts most requests within 1 ms, fewer late than bound`;
  const bound = starved(b) ? `a starved bound kworker (${servedOf(b)})` : `bound ${pct(slowShare(b))} over 1 ms`;
  const floorText = Number.isFinite(floor) ? `; noise floor (A/A bound kworker): ${pct(floor)}` : '';
  const detail = `unbound: ${waits(u)}; against ${bound}${floorText} (the seed: 6 µs max; here a wakeup is a futex hand-off, ~10–80 µs, and a 2-core host adds its own scheduling tails)`;
  if (u.timed < MIN_SAMPLES || (!starved(b) && b.timed < MIN_SAMPLES))
    return {
      expectation,
      outcome: 'inconclusive',
      detail: `${detail}; only ${u.timed} unbound and ${b.timed} bound requests timed (too few samples; try --duration ${duration})`,
    };
  const mostFast = slowShare(u) < 0.5;
  if (!mostFast) return { expectation, outcome: 'not reproduced', detail };
  if (starved(b)) return { expectation, outcome: 'reproduced', detail };
  const diff = slowShare(b) - slowShare(u);
  // The floor first, whichever way the difference points: one inside it decides nothing (a new
  // user's unbound 11.4% against bound 8.3%, floor 3.4%, read "not reproduced").
  if (Number.isFinite(floor) && !beyondFloor(diff, floor))
    return {
      expectation,
      outcome: 'inconclusive',
      detail: `${detail}; the difference (${pct(diff)}) is inside the noise floor (try --trials 10)`,
    };
  if (diff <= 0) return { expectation, outcome: 'not reproduced', detail };
  return { expectation, outcome: 'reproduced', detail };
}

/** `only`: the variants to run (both by default; tests run one). */
export async function runCpuHog(
  ctx: ScenarioContext,
  only: readonly (typeof CPU_HOG_VARIANTS)[number][] = CPU_HOG_VARIANTS,
): Promise<number> {
  const c = ctx.config;
  const base: ResolvedConfig = {
    ...c,
    strategies: specs(['workqueue:wq=system', 'unbound:scope=system']),
    baseline: BOUND,
    sweep: null,
  };
  const variants = HOG_VARIANTS.filter((v) => only.includes(v.name));
  const pattern = c.irq.pattern === 'bursts' ? `bursts of ${c.irq.burstSize}` : c.irq.pattern;
  const driver = `a driver: ${c.irq.rate} interrupts/s (${pattern}) on CPU 0, each queuing ${DRIVER_WORK_NS / 1000} µs of work`;
  const runs = [];
  const verdicts: Verdict[] = [];
  for (const v of variants) {
    const adjust = (o: MachineOptions): MachineOptions => ({
      ...o,
      workload: { kind: 'custom', tasks: [{ kind: 'hog', cpu: 0, ...v.hog }] },
      payload: { kind: 'driver_work', workNs: DRIVER_WORK_NS, slowNs: SLOW_NS },
      irq: { ...o.irq, cpus: [0] },
    });
    const config = untilOn(variantConfig(base, v.hog.policy), 'request_to_start');
    if (config.trialMs !== base.trialMs)
      ctx.io.stdout(
        `\n${v.name}: trials of ${config.trialMs} ms, not ${base.trialMs} ms: RT throttling releases CPU 0 to the kworker once a period (${RT_PERIOD_MS} ms), so a shorter trial holds a release in some rounds and not others, and the table's Δ pairs only rounds in which both sides started work\n`,
      );
    const r = await subRun(ctx, v.name, config, adjust, `a CPU hog on CPU 0 ${v.what} and ${driver}`);
    runs.push(r);
    if (r.status !== 'completed') break;
    const p = r.points[0];
    const bs = strategy(p, BOUND);
    const us = strategy(p, UNBOUND);
    const b = requests(bs);
    const u = requests(us);
    const control = controlOf(r, p);
    const floor = control ? pointFloor(slowShare(b), slowShare(requests(control))) : Number.NaN;
    ctx.io.stdout(
      `${v.name}: every request → its work starts (interrupt → workqueue_execute_start): bound ${pct(slowShare(b))} over 1 ms, max ${ms(b.max)}; unbound ${pct(slowShare(u))} over 1 ms, max ${ms(u.max)}${control ? `; A/A control ${pct(slowShare(requests(control)))} over 1 ms, max ${ms(requests(control).max)}` : ''}; requests served in the window ${b.timed} / ${u.timed}, raised in it ${b.interrupts} / ${u.interrupts}\n`,
    );
    const longer = `${Math.ceil((config.trialMs * 4) / 1000)}s`;
    const ut = trialRequests(us);
    const shares: DelayShares = {
      bound: delayShare(trialRequests(bs)),
      ...(control ? { control: delayShare(trialRequests(control)) } : {}),
      unbound: delayShare(ut),
    };
    const effect = delayEffect(trialRequests(control ?? bs), ut);
    const rounds = bs?.trials.length ?? 0;
    verdicts.push(
      boundVerdict(v.name, b, effect, shares, tooFewTrials(rounds)),
      unboundVerdict(v.name, u, b, longer, floor),
    );
  }
  const status = scenarioStatus(runs);
  printVerdicts(ctx.io, verdicts, status);
  printResults(
    ctx,
    runs.map((_, i) => variants[i].name),
  );
  return status;
}
