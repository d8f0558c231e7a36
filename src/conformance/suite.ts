/**
 * The strategy conformance suite: the few rules every deferral strategy, built-in or a user's,
 * must keep, checked on a small real machine (Disruptor's one shared WaitStrategy harness:
 * each strategy's test is one line).
 *
 * One check run: load the strategy in the main thread (the same loader the CPUs use, so a bad
 * file fails here, before any thread starts); boot CONFORMANCE_CPUS emulated CPUs with only a
 * device interrupt load (irq_only) at CONFORMANCE_IRQ_RATE on every CPU and the fast pool's
 * trigger lowered to CONFORMANCE_TRIGGER, so that a second holds hundreds of hand-offs; then
 *
 *   phase A  Warmup, Measure, Drain: every accepted hand-off must run the work exactly once.
 *   phase B  the same with TestFlag.DoubleHandoff: each accepted hand-off is followed at once by
 *            a second one, which must return false and add no run while the first is pending.
 *   stop     every thread must leave within STOP_GRACE_MS.
 *
 * and judge the per-CPU counters (src/hw/layout.ts: handoffs, mixes, mixes_duplicate,
 * mixes_remote, mixes_hardirq/softirq/task, handoffs_while_pending_accepted) and the first
 * fault against the checks in CHECK. A check that the evidence cannot decide (the run ended
 * with a fault before it was exercised, or an earlier check already failed in a way that hides
 * it) is reported as skipped, never as passed.
 *
 * checkStrategies() runs several strategies on one machine, one after the other, to save boots
 * (~2 s each from TypeScript source). A strategy that ends its machine (a fault) or leaves it
 * dirty (hand-offs that never ran, work left queued) is the last on that machine; the rest go
 * on a fresh one. If a shared machine's threads do not stop in time, each strategy on it is
 * checked again alone, so that no strategy is blamed for another's.
 */

import { fileURLToPath } from 'node:url';
import type { StrategyClass } from '../api/types.js';
import { machineDefaults } from '../config/defaults.js';
import { MachineFaultError, StrategyLoadError } from '../errors.js';
import { startWatchdog, WATCHDOG_PERIOD_MS } from '../harness/watchdog.js';
import { TestFlag } from '../hw/layout.js';
import { type Counters, Machine, Phase } from '../machine/machine.js';
import type { MachineOptions, StrategyRef } from '../machine/options.js';
import { instantiate, loadStrategyClass } from '../strategies/load.js';
import { builtin } from '../strategies/registry.js';
import { claimsOf } from './claims.js';
import { judge } from './judge.js';
import {
  CONFORMANCE_IRQ_RATE,
  CONFORMANCE_TRIGGER,
  type ConformanceOptions,
  type ConformanceReport,
  DOUBLE_HANDOFF_RETRIES,
  type Evidence,
  EXTRA_STEP_MS,
  exactlyOnceHeld,
  MAX_EXTRA_MS,
  MIN_HANDOFFS,
  maybeCrossCpuRace,
  type PhaseResult,
  type Resolved,
  resolveOptions,
  SETTLE_MAX_MS,
  SETTLE_READS,
  SETTLE_STEP_MS,
  STOP_GRACE_MS,
  type StopResult,
  type Subject,
  WARMUP_SHARE,
  WATCHDOG_MS,
} from './model.js';

export * from './model.js';

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/**
 * Run the conformance suite on one strategy.
 *
 * Context: main thread; boots and stops a machine (~1 s of run time plus the boot).
 * Returns: the report (a failing strategy is a report, not an exception).
 * Throws: StrategyLoadError / StrategyOptionError when the strategy cannot be loaded or
 * constructed, or its setup() throws or is not deterministic (one line naming the file and the
 * problem); DeferlabError for bad `opts`.
 */
export async function checkStrategy(ref: StrategyRef, opts: ConformanceOptions = {}): Promise<ConformanceReport> {
  const [report] = await checkStrategies([ref], opts);
  return report;
}

/**
 * Run the suite on several strategies, sharing machines where it is safe (see the top of this
 * file). Returns the reports in the order of `refs`. Throws as checkStrategy does, before any
 * machine boots when a strategy cannot be loaded.
 */
export async function checkStrategies(
  refs: readonly StrategyRef[],
  opts: ConformanceOptions = {},
): Promise<ConformanceReport[]> {
  const o = resolveOptions(opts);
  const subjects: Subject[] = [];
  for (const ref of refs) subjects.push(await prepare(ref));
  const reports: ConformanceReport[] = [];
  let next = 0;
  while (next < subjects.length) {
    const run = await runMachine(subjects.slice(next), o);
    if (run.stop.late && run.evidence.length > 1) {
      // Which one kept its threads from leaving? Check each alone.
      for (const s of subjects.slice(next, next + run.evidence.length)) {
        const alone = await runMachine([s], o);
        reports.push(judge(s, alone.evidence[0], alone.stop, o));
      }
    } else {
      for (const [i, ev] of run.evidence.entries()) reports.push(judge(subjects[next + i], ev, run.stop, o));
    }
    next += run.evidence.length;
  }
  return reports;
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

async function prepare(ref: StrategyRef): Promise<Subject> {
  const cls = await loadStrategyClass(ref);
  instantiate(ref, cls); // options and constructor, checked here first
  const who = ref.kind === 'file' && ref.url ? fileURLToPath(ref.url) : `strategy ${ref.label}`;
  const klass: StrategyClass | undefined = ref.kind === 'builtin' ? builtin(ref.name)?.cls : (cls ?? undefined);
  return { ref, claims: claimsOf(klass, who), who };
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

/** The machine defaults, with the suite's interrupt rate and watchdog, no application, and `subjects`. */
function machineOptions(subjects: readonly Subject[], o: Resolved): MachineOptions {
  const d = machineDefaults(o.cpus);
  return {
    ...d,
    // kworkers and ksoftirqd as threads of their own: a strategy that keeps state in `this` or in
    // module scope is caught when its work runs on another thread than its hand-off, as it can in
    // a run with --kthreads thread (under the default cpu hosting the two often share a thread).
    kthreads: 'thread',
    watchdogMs: WATCHDOG_MS,
    irq: { ...d.irq, rate: CONFORMANCE_IRQ_RATE, pattern: 'constant' },
    workload: { kind: 'irq_only' },
    strategies: subjects.map((s) => s.ref),
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Boot one machine for `subjects`, check them in order until one ends or dirties it, stop. */
async function runMachine(
  subjects: readonly Subject[],
  o: Resolved,
): Promise<{ evidence: Evidence[]; stop: StopResult }> {
  let m: Machine;
  try {
    m = await Machine.boot(machineOptions(subjects, o));
  } catch (e) {
    throw bootError(e, subjects);
  }
  const evidence: Evidence[] = [];
  let active = 0;
  const watchdog = startWatchdog(m, WATCHDOG_MS, () => subjects[active]?.ref.label);
  try {
    m.setTrigger(CONFORMANCE_TRIGGER);
    for (; active < subjects.length; active++) {
      const ev = await runOne(m, active, o);
      evidence.push(ev);
      const dirty = ev.fault !== undefined || ev.a?.leftover || ev.b?.leftover;
      if (dirty) break;
    }
  } catch (e) {
    await m.stop(STOP_GRACE_MS); // not a verdict on a strategy: leave no thread behind, then throw
    throw e;
  } finally {
    watchdog.stop();
  }
  const t0 = Date.now();
  await m.stop(STOP_GRACE_MS); // after a fault Machine.stop waits less: lateness is not judged then
  const ms = Date.now() - t0;
  return { evidence, stop: { ms, late: !m.fault && ms >= STOP_GRACE_MS, threads: m.plan.threads.length } };
}

/** Phases A and B for strategy `index`; a fault ends them and is kept as evidence. */
async function runOne(m: Machine, index: number, o: Resolved): Promise<Evidence> {
  const ev: Evidence = { bRetries: 0 };
  m.setActiveStrategy(index);
  try {
    ev.a = await runPhase(m, 0, o.durationMs / 2, o.drainTimeoutMs);
    // B tests what a second hand-off adds: only worth it (and only judged) when A ran clean.
    if (exactlyOnceHeld(ev.a)) {
      ev.b = await runPhase(m, TestFlag.DoubleHandoff, o.durationMs / 2, o.drainTimeoutMs);
      while (maybeCrossCpuRace(ev.b) && ev.bRetries < DOUBLE_HANDOFF_RETRIES) {
        ev.bRetries++;
        ev.b = await runPhase(m, TestFlag.DoubleHandoff, o.durationMs / 2, o.drainTimeoutMs);
      }
    }
  } catch (e) {
    if (!(e instanceof MachineFaultError)) throw e;
    ev.fault = e.fault;
  } finally {
    m.setTestFlags(0);
  }
  if (!ev.fault && m.fault) ev.fault = m.fault;
  return ev;
}

async function runPhase(m: Machine, testFlags: number, ms: number, drainTimeoutMs: number): Promise<PhaseResult> {
  const guard = async (t: number): Promise<void> => {
    const r = await Promise.race([sleep(t).then(() => 'ok' as const), m.onFault().then(() => 'fault' as const)]);
    if (r === 'fault') throw new MachineFaultError(m.fault!);
  };
  // While quiet: a mix that ran on another CPU leaves its fast pool in flight for good
  // (random.c skips it and keeps MIX_INFLIGHT); start each phase with every pool free.
  m.resetEntropy();
  const c0 = m.counters();
  m.setTestFlags(testFlags);
  m.setPhase(Phase.Warmup);
  await guard(ms * WARMUP_SHARE);
  m.setPhase(Phase.Measure);
  await guard(ms * (1 - WARMUP_SHARE));
  // A starved host can hold the irq thread off for a whole short phase: wait for some evidence.
  for (let waited = 0; !enoughEvidence(c0, m.counters()) && waited < MAX_EXTRA_MS; waited += EXTRA_STEP_MS) {
    await guard(EXTRA_STEP_MS);
  }
  m.setPhase(Phase.Drain);
  const t0 = Date.now();
  let leftover = await m.drain(drainTimeoutMs);
  if (leftover && queuedBesidesHandoffs(m)) {
    // Work queued and not moving: a stuck CPU? Give the watchdog the time to say which.
    await Promise.race([sleep(WATCHDOG_MS + 2 * WATCHDOG_PERIOD_MS), m.onFault()]);
    leftover = await m.drain(0); // throws MachineFaultError if the watchdog fired
  }
  const drainMs = Date.now() - t0;
  const otherLeftover = leftover ? queuedBesidesHandoffs(m) : '';
  if (!leftover) await m.collect(); // every thread answers, and the histograms start afresh
  m.setPhase(Phase.Pause);
  m.setTestFlags(0);
  const c1 = await settledCounters(m);
  const delta: Counters = {};
  for (const k of Object.keys(c1)) delta[k] = c1[k] - (c0[k] ?? 0);
  return { delta, drainMs, leftover, otherLeftover };
}

/** A phase has seen enough: MIN_HANDOFFS accepted, or a refusal with nothing pending (which the
 *  first check judges; a refusal while pending is legitimate). */
function enoughEvidence(c0: Counters, c: Counters): boolean {
  return c.handoffs - c0.handoffs >= MIN_HANDOFFS || c.handoffs_lost > c0.handoffs_lost;
}

/** Counters a run changes as it finishes (a job's run is counted after its pending count drops). */
const SETTLE_KEYS = [
  'handoffs',
  'handoffs_refused',
  'handoffs_lost',
  'mixes',
  'mixes_duplicate',
  'mixes_remote',
  'works_queued',
  'works_run',
] as const;

/**
 * The counters once the last run has been counted. Machine.busy() sees a job as done when its
 * pending count drops, at the start of d.run(); the run's `mixes` and the worker's `works_run`
 * are counted after it, a few µs later, and would otherwise land in the next phase. Returns
 * when SETTLE_KEYS read the same SETTLE_READS times SETTLE_STEP_MS apart (at most SETTLE_MAX_MS).
 */
async function settledCounters(m: Machine): Promise<Counters> {
  let c = m.counters();
  let key = SETTLE_KEYS.map((k) => c[k]).join();
  for (let same = 0, waited = 0; same < SETTLE_READS && waited < SETTLE_MAX_MS; waited += SETTLE_STEP_MS) {
    await sleep(SETTLE_STEP_MS);
    c = m.counters();
    const k = SETTLE_KEYS.map((n) => c[n]).join();
    same = k === key ? same + 1 : 0;
    key = k;
  }
  return c;
}

/**
 * Machine.busy() without its first rule (a hand-off accepted and not yet run): is anything
 * queued in the kernel (softirqs, interrupts, irq_work, work items)? That tells a strategy that
 * never runs its work (the first check's failure) from one whose queued work never finishes
 * (shutdown's). Asks the interrupt rings and the kernel's mechanisms as Machine.busy() does.
 */
function queuedBesidesHandoffs(m: Machine): string {
  return m.kernelBusy();
}

/** A boot that failed because of a strategy (its setup threw, or is not deterministic): one line. */
function bootError(e: unknown, subjects: readonly Subject[]): Error {
  if (!(e instanceof MachineFaultError)) return e instanceof Error ? e : new Error(String(e));
  const f = e.fault;
  // The machine already names the file and what setup() did ("failed", "did not return": thread-main.ts, machine.ts).
  if (f.kind === 'bad-input' && f.message.includes(': setup() ')) return new StrategyLoadError(f.message);
  const named = subjects.find((s) => s.ref.label === f.strategy);
  if (named) return new StrategyLoadError(`${named.who}: setup() failed: ${f.message}`);
  if (f.kind === 'bad-input') return new StrategyLoadError(`${subjects.map((s) => s.who).join(', ')}: ${f.message}`);
  return new Error(`the conformance machine did not boot: ${f.message}`);
}

// ---------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------
