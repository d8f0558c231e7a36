/**
 * The conformance suite's verdicts: from one strategy's evidence (its phases' counter deltas,
 * the first fault, how the machine stopped) to the checks of CHECK, each passed, failed or
 * skipped (never passed without evidence). The machine-running half is suite.ts.
 */
import type { MachineFault } from '../machine/machine.js';
import type { Counters } from '../machine/memory.js';
import { plural } from '../text.js';
import {
  CHECK,
  type CheckKey,
  type ConformanceCheck,
  type ConformanceReport,
  type Evidence,
  exactlyOnceHeld,
  MAX_EXTRA_MS,
  MIGHT_SLEEP_BUG,
  type Resolved,
  STOP_GRACE_MS,
  type StopResult,
  type Subject,
  THIN_HANDOFFS,
} from './model.js';

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

export function judge(s: Subject, ev: Evidence, stop: StopResult, o: Resolved): ConformanceReport {
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
    // Refusals with nothing pending (handoffs_lost): each strands its job. In phase A every
    // refusal is one (the fast pool hands off only once the last mix has started, MIX_INFLIGHT).
    // In phase B the suite's extra hand-off can queue the work after an inline run, and random.c's
    // next hand-off then finds it pending and is rightly refused: counted in handoffs_refused, not
    // here (a strategy that runs every 4th mix inline was failed for it until 2026-12-06).
    const refused = d.handoffs_lost + (ev.b?.delta.handoffs_lost ?? 0);
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
      : ev.fault
        ? skip('noFault', 'the run ended at the one fault reported above')
        : pass('noFault', 'no exception, no kernel BUG, no thread lost');

  const checks = [exactlyOnce, whilePending, where, shutdown, mightSleep, noFault];
  const notes: string[] = [];
  const accepted = ev.a?.delta.handoffs ?? 0;
  if (ev.a && !ev.fault && accepted > 0 && accepted < THIN_HANDOFFS) {
    const remote = ev.a.delta.mixes_remote;
    notes.push(
      `only ${plural(accepted, 'hand-off')} in ${plural(ev.a.delta.interrupts, 'interrupt')}${
        remote > 0
          ? `: the CPUs stopped handing off after ${plural(remote, 'mix', 'mixes')} ran on another CPU (random.c's mix_interrupt_randomness refuses such a mix and leaves that CPU's fast pool in flight, MIX_INFLIGHT, so it never hands off again)`
          : " (a strategy that waits for an event to run the work, as a deferrable timer waits for a busy CPU's tick, hands off as often as the event comes)"
      }: the checks above saw little of the strategy`,
    );
  }
  return { strategy: s.ref.label, passed: checks.every((c) => c.passed), claims: { ...s.claims }, checks, notes };
}
