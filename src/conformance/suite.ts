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
 * and judge the per-CPU counters (src/machine/layout.ts: handoffs, mixes, mixes_duplicate,
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
import { LIMITS, machineDefaults } from '../config/defaults.js';
import { badOption } from '../config/errors.js';
import { MachineFaultError, StrategyLoadError } from '../errors.js';
import { startWatchdog, WATCHDOG_PERIOD_MS } from '../harness/watchdog.js';
import { CPU_SOFTIRQ, CPU_WORDS, TestFlag } from '../machine/layout.js';
import { type Counters, Machine, type MachineFault, Phase } from '../machine/machine.js';
import type { MachineOptions, StrategyRef } from '../machine/options.js';
import { MpscRing } from '../shm/ring.js';
import { instantiate, loadStrategyClass } from '../strategies/load.js';
import { builtin } from '../strategies/registry.js';
import { plural } from '../text.js';
import { claimsOf, type StrategyClaims } from './claims.js';

// ---------------------------------------------------------------------------------------------
// Tunables
// ---------------------------------------------------------------------------------------------

/** CPUs of the test machine: two, so that remote runs (another CPU) can be seen. */
export const CONFORMANCE_CPUS = 2;
/** Run time per strategy (both phases, ms): with the settings below, ~1000 hand-offs. */
export const CONFORMANCE_DURATION_MS = 1000;
/** Device interrupts per second on every CPU: a high rate, so hand-offs overlap work. */
export const CONFORMANCE_IRQ_RATE = 20_000;
/** Fast pool trigger (random.c: 1024): a hand-off every 8 interrupts, once the last mix ran. */
export const CONFORMANCE_TRIGGER = 8;
/** How long deferred work may take to finish after a phase (ms); a deferrable timer needs a tick. */
export const DRAIN_TIMEOUT_MS = 3_000;
/** How long the threads may take to leave once asked to stop (ms) before they are terminated. */
export const STOP_GRACE_MS = 2_000;
/** A CPU that passes no preemption point for this long (ms) is stuck in a strategy. */
export const WATCHDOG_MS = 2_000;
/** How often the watchdog looks (ms). */
/** A phase goes on (in EXTRA_STEP_MS steps, up to MAX_EXTRA_MS more) until this many hand-offs were accepted. */
const MIN_HANDOFFS = 2;
const EXTRA_STEP_MS = 50;
const MAX_EXTRA_MS = 3_000;
/** Counters are settled when they read the same SETTLE_READS times, SETTLE_STEP_MS apart (≤ SETTLE_MAX_MS). */
const SETTLE_READS = 3;
const SETTLE_STEP_MS = 2;
const SETTLE_MAX_MS = 500;
/** Repeats of the double hand-off phase when its failure may be a cross-CPU race (maybeCrossCpuRace). */
export const DOUBLE_HANDOFF_RETRIES = 2;
/** Share of each phase spent in Warmup (the rest in Measure, histograms on). */
const WARMUP_SHARE = 0.4;

/** The kernel's might_sleep() BUG (KernelFacade.mightSleep) has this in its message. */
export const MIGHT_SLEEP_BUG = 'sleeping function called from invalid context';

/** The checks, by key; the names appear in reports. */
export const CHECK = Object.freeze({
  exactlyOnce: 'every accepted hand-off runs the work exactly once',
  whilePending: 'a hand-off while pending returns false and runs nothing extra',
  where: 'the work runs where the strategy claims',
  shutdown: 'shutdown is honoured',
  mightSleep: 'nothing that may sleep is called from hardirq or softirq context',
  noFault: 'the run has no other fault',
});
export type CheckKey = keyof typeof CHECK;

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

export interface ConformanceCheck {
  /** One of CHECK's values. */
  name: string;
  /** True only when the check was exercised and held (status 'pass'). */
  passed: boolean;
  /** 'skip': the evidence could not decide (see `detail`); a skipped check is not a pass. */
  status: 'pass' | 'fail' | 'skip';
  /** Pass: the numbers that show it. Fail: what went wrong, with the numbers or the fault's message. */
  detail: string;
}

export interface ConformanceReport {
  /** The strategy's label (`tasklet(hi=false)`, `my.ts(k=1)`). */
  strategy: string;
  /** Every check passed. */
  passed: boolean;
  /** What the strategy class declares (static claims), defaults filled in. */
  claims: Required<StrategyClaims>;
  /** In CHECK's order. */
  checks: ConformanceCheck[];
}

export interface ConformanceOptions {
  /** Emulated CPUs (default CONFORMANCE_CPUS). */
  cpus?: number;
  /** Run time per strategy in ms, both phases together (default CONFORMANCE_DURATION_MS). */
  durationMs?: number;
  /** How long deferred work may take to finish after each phase (default DRAIN_TIMEOUT_MS). */
  drainTimeoutMs?: number;
}

interface Resolved {
  cpus: number;
  durationMs: number;
  drainTimeoutMs: number;
}

function resolveOptions(o: ConformanceOptions): Resolved {
  const r = {
    cpus: o.cpus ?? CONFORMANCE_CPUS,
    durationMs: o.durationMs ?? CONFORMANCE_DURATION_MS,
    drainTimeoutMs: o.drainTimeoutMs ?? DRAIN_TIMEOUT_MS,
  };
  const { min, max } = LIMITS.cpus;
  if (!Number.isInteger(r.cpus) || r.cpus < min || r.cpus > max)
    throw badOption('conformance cpus', `must be an integer from ${min} to ${max}`, r.cpus);
  if (!Number.isFinite(r.durationMs) || r.durationMs < 50 || r.durationMs > 600_000) {
    throw badOption('conformance durationMs', 'must be a number of ms from 50 to 600000', r.durationMs);
  }
  if (!Number.isFinite(r.drainTimeoutMs) || r.drainTimeoutMs < 10 || r.drainTimeoutMs > 600_000) {
    throw badOption('conformance drainTimeoutMs', 'must be a number of ms from 10 to 600000', r.drainTimeoutMs);
  }
  return r;
}

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

interface Subject {
  ref: StrategyRef;
  claims: Required<StrategyClaims>;
  /** The file (or the built-in's label) that error messages name. */
  who: string;
}

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

/** Counter deltas and drain outcome of one phase. */
interface PhaseResult {
  delta: Counters;
  drainMs: number;
  /** What was still busy when the drain gave up ('' when it completed). */
  leftover: string;
  /** The same, ignoring hand-offs that were accepted and never ran ('' when nothing else was). */
  otherLeftover: string;
}

interface Evidence {
  a?: PhaseResult;
  /** The last attempt of phase B. */
  b?: PhaseResult;
  /** Attempts of phase B repeated because of a possible cross-CPU race (see maybeCrossCpuRace). */
  bRetries: number;
  fault?: MachineFault;
}

/** Phase A kept the first rule (the same conditions as the first check's pass). */
function exactlyOnceHeld(a: PhaseResult): boolean {
  const d = a.delta;
  return !a.leftover && d.handoffs > 0 && d.mixes === d.handoffs && d.mixes_duplicate === 0 && d.handoffs_refused === 0;
}

/**
 * The double hand-off follows the first at once, in the same hard IRQ, and counts as "while
 * pending" while the deferred job has not started. A job run on ANOTHER CPU can be taken in
 * between: its runner clears the object's pending bit (process_one_work, the irq_work IPI)
 * just before it calls d.run(), so the second queue is accepted — kernel semantics, which
 * random.c never meets (MIX_INFLIGHT) — and counted as accepted while pending. A strategy that
 * really accepts while pending does it on every double hand-off; a race is rare. So when
 * second hand-offs were accepted and the phase had remote runs, phase B is repeated up to
 * DOUBLE_HANDOFF_RETRIES times, and only the last attempt is judged.
 */
function maybeCrossCpuRace(b: PhaseResult): boolean {
  return b.delta.handoffs_while_pending_accepted > 0 && b.delta.mixes_remote > 0;
}

interface StopResult {
  ms: number;
  late: boolean;
  threads: number;
}

/** The machine defaults, with the suite's interrupt rate and watchdog, no application, and `subjects`. */
function machineOptions(subjects: readonly Subject[], o: Resolved): MachineOptions {
  const d = machineDefaults(o.cpus);
  return {
    ...d,
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

/** A phase has seen enough: MIN_HANDOFFS accepted, or a refusal (which the first check judges). */
function enoughEvidence(c0: Counters, c: Counters): boolean {
  return c.handoffs - c0.handoffs >= MIN_HANDOFFS || c.handoffs_refused > c0.handoffs_refused;
}

/** Counters a run changes as it finishes (a job's run is counted after its pending count drops). */
const SETTLE_KEYS = [
  'handoffs',
  'handoffs_refused',
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
 * (shutdown's). Reads the machine's regions as Machine.busy() does (legend in layout.ts).
 */
function queuedBesidesHandoffs(m: Machine): string {
  const i32 = m.i32;
  for (let c = 0; c < m.opts.cpus; c++) {
    if (Atomics.load(i32, m.R.cpu + c * CPU_WORDS + CPU_SOFTIRQ) !== 0) return `softirqs pending on CPU ${c}`;
    if (new MpscRing(i32, m.R.irqRings[c]).length() !== 0) return `interrupts pending on CPU ${c}`;
    if (new MpscRing(i32, m.R.irqWorkLists[c]).length() !== 0) return `irq_work pending on CPU ${c}`;
  }
  for (const p of m.plan.pools)
    if (new MpscRing(i32, m.R.poolLists[p.id]).length() !== 0)
      return `work queued on pool ${p.id} (${p.kind}, CPU ${p.cpu})`;
  return '';
}

/** A boot that failed because of a strategy (its setup threw, or is not deterministic): one line. */
function bootError(e: unknown, subjects: readonly Subject[]): Error {
  if (!(e instanceof MachineFaultError)) return e instanceof Error ? e : new Error(String(e));
  const f = e.fault;
  // The machine already names the file and says "setup() failed" (thread-main.ts, machine.ts).
  if (f.kind === 'bad-input' && f.message.includes(': setup() failed: ')) return new StrategyLoadError(f.message);
  const named = subjects.find((s) => s.ref.label === f.strategy);
  if (named) return new StrategyLoadError(`${named.who}: setup() failed: ${f.message}`);
  if (f.kind === 'bad-input') return new StrategyLoadError(`${subjects.map((s) => s.who).join(', ')}: ${f.message}`);
  return new Error(`the conformance machine did not boot: ${f.message}`);
}

// ---------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------

/** Which check a fault fails: might_sleep's BUG, a stuck CPU (shutdown), else "no other fault". */
function faultCheck(f: MachineFault): 'mightSleep' | 'shutdown' | 'noFault' {
  if (f.message.includes(MIGHT_SLEEP_BUG)) return 'mightSleep';
  if (f.kind === 'watchdog') return 'shutdown';
  return 'noFault';
}

/** The fault's message and the thread it happened in (its context is already in a BUG's message). */
function describeFault(f: MachineFault): string {
  return f.thread && f.thread !== 'main' ? `${f.message} [thread ${f.thread}]` : f.message;
}

const pass = (key: CheckKey, detail: string): ConformanceCheck => ({
  name: CHECK[key],
  passed: true,
  status: 'pass',
  detail,
});
const fail = (key: CheckKey, detail: string): ConformanceCheck => ({
  name: CHECK[key],
  passed: false,
  status: 'fail',
  detail,
});
const skip = (key: CheckKey, detail: string): ConformanceCheck => ({
  name: CHECK[key],
  passed: false,
  status: 'skip',
  detail,
});

function sum(...deltas: (Counters | undefined)[]): Counters {
  const out: Counters = {};
  for (const d of deltas) if (d) for (const [k, v] of Object.entries(d)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function judge(s: Subject, ev: Evidence, stop: StopResult, o: Resolved): ConformanceReport {
  const faultKey = ev.fault ? faultCheck(ev.fault) : undefined;
  const faultText = ev.fault ? describeFault(ev.fault) : '';
  const endedEarly = `not evaluated: the run ended with a fault first (see "${CHECK[faultKey ?? 'noFault']}")`;

  // 1. exactly once (phase A; refusals of both phases)
  let exactlyOnce: ConformanceCheck;
  if (!ev.a) exactlyOnce = skip('exactlyOnce', endedEarly);
  else {
    const d = ev.a.delta;
    const h = d.handoffs;
    const r = d.mixes;
    const dup = d.mixes_duplicate;
    // The fast pool hands off only once the last mix has started (MIX_INFLIGHT), so nothing is
    // pending at a hand-off: a refusal strands the job. In phase B too (a second hand-off
    // while pending, the only legitimate refusal, is not counted in handoffs_refused).
    const refused = d.handoffs_refused + (ev.b?.delta.handoffs_refused ?? 0);
    const counts = `${plural(h, 'hand-off')}, ${plural(r, 'run')}${refused > 0 ? `, ${plural(refused, 'refused hand-off')}` : ''}`;
    if (dup > 0)
      exactlyOnce = fail(
        'exactlyOnce',
        `${counts}: ${plural(dup, 'run')} found nothing pending (the work ran more than once per hand-off)`,
      );
    else if (ev.a.leftover && !ev.a.otherLeftover) {
      exactlyOnce = fail(
        'exactlyOnce',
        `${counts}: ${ev.a.leftover} ${o.drainTimeoutMs} ms after the run${refused > 0 ? ' (a hand-off returned false with nothing pending: return false only when the job is already queued)' : ' (an accepted hand-off never ran)'}`,
      );
    } else if (h === 0)
      exactlyOnce = fail(
        'exactlyOnce',
        `no hand-off was accepted in ${o.durationMs / 2 + MAX_EXTRA_MS} ms (${counts}, ${plural(d.interrupts, 'interrupt')})`,
      );
    else if (r !== h)
      exactlyOnce = fail(
        'exactlyOnce',
        `${counts}: ${r < h ? `${h - r} accepted hand-offs never ran` : 'more runs than hand-offs'}`,
      );
    else if (refused > 0)
      exactlyOnce = fail(
        'exactlyOnce',
        `${counts}: a hand-off returned false with nothing pending, so its job never ran (return false only when the job is already queued)`,
      );
    else exactlyOnce = pass('exactlyOnce', counts);
  }

  // 2. a second hand-off while pending (phase B)
  let whilePending: ConformanceCheck;
  if (!ev.b) {
    whilePending = skip(
      'whilePending',
      ev.a && !exactlyOnceHeld(ev.a)
        ? 'not exercised: a second hand-off is only tried once the first check passes'
        : endedEarly,
    );
  } else {
    const d = ev.b.delta;
    const acc = d.handoffs_while_pending_accepted;
    const h = d.handoffs;
    const r = d.mixes;
    const dup = d.mixes_duplicate;
    if (acc === 0 && exactlyOnce.status !== 'pass') {
      whilePending = skip(
        'whilePending',
        'no second hand-off while pending returned true, but runs are not compared while the first check fails',
      );
    } else if (acc > 0) {
      const attempts = ev.bRetries > 0 ? `, in each of ${ev.bRetries + 1} attempts` : '';
      whilePending = fail(
        'whilePending',
        `${acc} second hand-offs while the first was still pending returned true${attempts} (return false when the job is already pending: it runs once anyway)`,
      );
    } else if (h === 0) {
      whilePending = fail(
        'whilePending',
        `no hand-off was accepted in ${o.durationMs / 2 + MAX_EXTRA_MS} ms with double hand-offs on`,
      );
    } else if (dup > 0 || r !== h) {
      whilePending = fail(
        'whilePending',
        `${plural(h, 'hand-off')}, ${plural(r, 'run')}${dup > 0 ? `, ${plural(dup, 'run')} with nothing pending` : ''}: a second hand-off while pending added work`,
      );
    } else {
      const retried =
        ev.bRetries > 0
          ? ` (attempt ${ev.bRetries + 1}: an earlier one had a second hand-off accepted while the job was starting on another CPU)`
          : '';
      whilePending = pass(
        'whilePending',
        `no second hand-off while pending returned true; ${plural(h, 'hand-off')}, ${plural(r, 'run')}${retried}`,
      );
    }
  }

  // 3. where (phases A and B)
  let where: ConformanceCheck;
  const both = sum(ev.a?.delta, ev.b?.delta);
  const runs = both.mixes ?? 0;
  if (!ev.a || runs === 0) where = skip('where', ev.a ? 'not evaluated: the work never ran' : endedEarly);
  else {
    const remote = both.mixes_remote;
    const ctx = { hardirq: both.mixes_hardirq, softirq: both.mixes_softirq, task: both.mixes_task };
    const ctxText = (Object.entries(ctx) as [string, number][])
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} in ${k}`)
      .join(', ');
    const cpuText = remote === 0 ? `all on the hand-off's CPU` : `${remote} of ${runs} on another CPU`;
    const claimText = `claims cpu '${s.claims.cpu}', context '${s.claims.context}'`;
    const facts = `${plural(runs, 'run')}: ${cpuText}; ${ctxText} context; ${claimText}`;
    const problems: string[] = [];
    if (s.claims.cpu === 'same' && remote > 0) {
      problems.push(
        `${remote} of ${runs} runs on another CPU, but the strategy claims cpu 'same' (random.c skips such mixes; declare static claims = { cpu: 'any' } if this is intended)`,
      );
    }
    if (s.claims.context !== 'any') {
      const others = (Object.entries(ctx) as [string, number][]).filter(([k, n]) => k !== s.claims.context && n > 0);
      if (others.length > 0) {
        problems.push(
          `${others.map(([k, n]) => `${n} in ${k}`).join(', ')} context, but the strategy claims context '${s.claims.context}'`,
        );
      }
    }
    where = problems.length ? fail('where', `${problems.join('; ')} (${facts})`) : pass('where', facts);
  }

  // 4. shutdown
  let shutdown: ConformanceCheck;
  const stopText = `${plural(stop.threads, 'thread')} exited in ${stop.ms} ms`;
  const other = ev.a?.otherLeftover || ev.b?.otherLeftover;
  const queued = both.works_queued ?? 0;
  const ran = both.works_run ?? 0;
  if (faultKey === 'shutdown') shutdown = fail('shutdown', faultText);
  else if (other)
    shutdown = fail(
      'shutdown',
      `deferred work did not finish within ${o.drainTimeoutMs} ms of the run's end: ${other}`,
    );
  else if (ev.a && !ev.fault && queued !== ran)
    shutdown = fail('shutdown', `${plural(queued, 'work item')} queued but ${ran} ran by the end of the drain`);
  else if (stop.late)
    shutdown = fail(
      'shutdown',
      `threads did not exit within ${STOP_GRACE_MS} ms of the stop request and were terminated`,
    );
  else if (ev.fault) shutdown = skip('shutdown', `drain not evaluated: the run ended with a fault; ${stopText}`);
  else if (ev.a?.leftover)
    shutdown = pass(
      'shutdown',
      `nothing was left queued after the run (the hand-offs that never ran are the first check's); ${stopText}`,
    );
  else shutdown = pass('shutdown', `drained in ${ev.a?.drainMs ?? 0} + ${ev.b?.drainMs ?? 0} ms; ${stopText}`);

  // 5. might_sleep
  const handoffs = (both.handoffs ?? 0) + (both.handoffs_refused ?? 0);
  let mightSleep: ConformanceCheck;
  if (faultKey === 'mightSleep') mightSleep = fail('mightSleep', faultText);
  else if (ev.fault) mightSleep = skip('mightSleep', endedEarly);
  else
    mightSleep = pass(
      'mightSleep',
      `no might_sleep() BUG in ${plural(handoffs, 'hand-off')} and ${plural(runs, 'run')}`,
    );

  // 6. any other fault
  const noFault =
    faultKey === 'noFault'
      ? fail('noFault', faultText)
      : pass('noFault', ev.fault ? 'the one fault is reported above' : 'no exception, no kernel BUG, no thread lost');

  const checks = [exactlyOnce, whilePending, where, shutdown, mightSleep, noFault];
  return { strategy: s.ref.label, passed: checks.every((c) => c.passed), claims: { ...s.claims }, checks };
}
