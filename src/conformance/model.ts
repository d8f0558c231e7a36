/**
 * The conformance suite's tunables, checks and evidence: what suite.ts (running the machine) and
 * judge.ts (the verdicts) share.
 */

import { LIMITS } from '../config/defaults.js';
import { badOption } from '../config/errors.js';
import type { MachineFault } from '../machine/machine.js';
import type { Counters } from '../machine/memory.js';
import type { StrategyRef } from '../machine/options.js';
import type { StrategyClaims } from './claims.js';
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
export const MIN_HANDOFFS = 2;
export const EXTRA_STEP_MS = 50;
export const MAX_EXTRA_MS = 3_000;
/** Counters are settled when they read the same SETTLE_READS times, SETTLE_STEP_MS apart (≤ SETTLE_MAX_MS). */
export const SETTLE_READS = 3;
export const SETTLE_STEP_MS = 2;
export const SETTLE_MAX_MS = 500;
/** Repeats of the double hand-off phase when its failure may be a cross-CPU race (maybeCrossCpuRace). */
export const DOUBLE_HANDOFF_RETRIES = 2;
/** Share of each phase spent in Warmup (the rest in Measure, histograms on). */
export const WARMUP_SHARE = 0.4;

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
  /** What the checks rest on, where it is little (THIN_HANDOFFS): printed under them as `note:` lines. */
  notes: string[];
}

/**
 * Fewer accepted hand-offs than this in phase A and the report says the checks rest on little:
 * the suite's machine makes hundreds a second on each CPU (CONFORMANCE_IRQ_RATE, CONFORMANCE_TRIGGER),
 * a strategy that batches to the tick still dozens in a phase, so a handful means the CPUs stopped
 * handing off (a mix run on another CPU strands its fast pool: random.c). Not a model parameter.
 */
export const THIN_HANDOFFS = 20;

export interface ConformanceOptions {
  /** Emulated CPUs (default CONFORMANCE_CPUS). */
  cpus?: number;
  /** Run time per strategy in ms, both phases together (default CONFORMANCE_DURATION_MS). */
  durationMs?: number;
  /** How long deferred work may take to finish after each phase (default DRAIN_TIMEOUT_MS). */
  drainTimeoutMs?: number;
}

export interface Resolved {
  cpus: number;
  durationMs: number;
  drainTimeoutMs: number;
}

export function resolveOptions(o: ConformanceOptions): Resolved {
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

export interface Subject {
  ref: StrategyRef;
  claims: Required<StrategyClaims>;
  /** The file (or the built-in's label) that error messages name. */
  who: string;
}

/** Counter deltas and drain outcome of one phase. */
export interface PhaseResult {
  delta: Counters;
  drainMs: number;
  /** What was still busy when the drain gave up ('' when it completed). */
  leftover: string;
  /** The same, ignoring hand-offs that were accepted and never ran ('' when nothing else was). */
  otherLeftover: string;
}

export interface Evidence {
  a?: PhaseResult;
  /** The last attempt of phase B. */
  b?: PhaseResult;
  /** Attempts of phase B repeated because of a possible cross-CPU race (see maybeCrossCpuRace). */
  bRetries: number;
  fault?: MachineFault;
}

/** Phase A kept the first rule (the same conditions as the first check's pass). */
export function exactlyOnceHeld(a: PhaseResult): boolean {
  const d = a.delta;
  return !a.leftover && d.handoffs > 0 && d.mixes === d.handoffs && d.mixes_duplicate === 0 && d.handoffs_lost === 0;
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
export function maybeCrossCpuRace(b: PhaseResult): boolean {
  return b.delta.handoffs_while_pending_accepted > 0 && b.delta.mixes_remote > 0;
}

export interface StopResult {
  ms: number;
  late: boolean;
  threads: number;
}
