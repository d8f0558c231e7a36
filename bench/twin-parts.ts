/**
 * bench:twin's (c) in three parts (docs/twin.md, "(c) in three parts"): the lab's wakeup_to_run of
 * the unbound worker, split for each wake-up that ended CPU 1's halt (src/machine/kick-parts.ts):
 *
 *   wake_to_kick  try_to_wake_up → the waker's ring (its path to the notify: the IPI sent);
 *   kick_wake     the ring → CPU 1's thread runs again: the host kernel's futex wake-up of a
 *                 thread on an idle CPU, the very thing twin.c's (c) times, inside the lab;
 *   kick_to_run   CPU 1's thread runs → the worker runs: the emulated idle exit, schedule() and
 *                 the switch, in JavaScript, after the thread slept a whole period.
 *
 * Each part's p50 is taken per round and its median over the rounds printed; kick_wake is put
 * beside the host twin's (c) in the same rounds (twin-bar.ts roundsRatio), and kick_to_run beside
 * the same path from a run whose CPU 1 slept a tenth as long (`warm`): what the path costs warm.
 * Timing figures, never asserted.
 */
import type { RunResults } from '../src/report/types.js';
import { fmtRatio, roundsRatio } from './twin-bar.js';
import { type Answer, labDist, medianDist, UNBOUND } from './twin-lab.js';
import { fmt } from './twin-table.js';

/** The warm run's period: a tenth of the question's (at least 200 µs: below it CPU 1 hardly halts). */
export const warmPeriodUs = (periodUs: number): number => Math.max(200, Math.round(periodUs / 10));

const p50 = (a: Answer): string => ('none' in a ? `n/a (${a.none})` : fmt(a.p50));

/**
 * The lines, from (c)'s lab runs (one per round), the host twin's (c) answers of the same rounds,
 * and the warm run (undefined: not run). `periodUs` is the question's period.
 */
export function crossPartsLines(
  runs: readonly RunResults[],
  host: readonly Answer[],
  warm: RunResults | undefined,
  periodUs: number,
): string[] {
  const part = (stage: 'wake_to_kick' | 'kick_wake' | 'kick_to_run' | 'wakeup_to_run', rs: readonly RunResults[]) =>
    medianDist(rs.map((r) => labDist(r, UNBOUND, stage)));
  const whole = part('wakeup_to_run', runs);
  const split = part('kick_to_run', runs);
  const kick = part('kick_wake', runs);
  const h = medianDist(host);
  const share =
    'none' in whole || 'none' in split ? '' : ` (${split.n} of its ${whole.n} wake-ups, those that ended CPU 1's halt)`;
  const lines = [
    `  (c) the lab's wake-up in three parts (src/machine/kick-parts.ts; each part's p50 per round, the median of the ${runs.length} round${runs.length > 1 ? 's' : ''}${share}):`,
    `      try_to_wake_up → the ring (wake_to_kick: the waker's path to its notify):               p50 ${p50(part('wake_to_kick', runs))}`,
    `      the ring → CPU 1's thread runs (kick_wake: the host's futex wake-up of an idle CPU):    p50 ${p50(kick)}`,
    `      CPU 1's thread runs → the worker runs (kick_to_run: the emulated idle exit, schedule()`,
    `        and switch, in JavaScript, ${periodUs / 1000} ms after it last ran):                                          p50 ${p50(split)}`,
  ];
  const rr =
    !('none' in h) && !('none' in kick) && h.rounds && kick.rounds
      ? roundsRatio(h.rounds, kick.rounds, 'p50')
      : undefined;
  if (!('none' in h) && !('none' in kick))
    lines.push(
      `      kick_wake over the host twin's whole (c) (p50 ${fmt(h.p50)}): ${rr ? `${fmtRatio(rr.ratio)}x [${fmtRatio(rr.lo)}, ${fmtRatio(rr.hi)}] (95%, the paired rounds' ratios, as the bar's)` : `${fmtRatio(kick.p50 / h.p50)}x (one round)`}: the host's part of the lab's wake-up is the twin's whole;`,
      "      kick_to_run is the emulator's own cost on top of it, which a kernel's wake-up (inside the twin's figure) pays once.",
    );
  if (warm) {
    const w = part('kick_to_run', [warm]);
    lines.push(
      `      kick_to_run when CPU 1's thread slept ${warmPeriodUs(periodUs) / 1000} ms instead (one run, the same machine): p50 ${p50(w)}${'none' in w || 'none' in split ? '' : `; after ${periodUs / 1000} ms it took ${fmtRatio(split.p50 / w.p50)}x as long`}:`,
      '      the same code, warmer: milliseconds after it last ran, the host\'s caches and TLB no longer hold its code\n      and data, whether the thread slept or polled meanwhile (docs/twin.md, "(c) in three parts").',
    );
  }
  return lines;
}
