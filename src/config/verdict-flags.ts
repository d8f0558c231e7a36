/**
 * The flags of how a run decides: the A/A control, rounds until the intervals are narrow enough,
 * the practical-significance band and the time cap (docs/results.md): rows of CONFIG_FLAGS
 * (flags.ts), kept here so the table's file stays small; they appear in --help after --trials.
 */
import { LIMITS } from './defaults.js';

export const VERDICT_FLAGS = [
  {
    flag: '--control',
    path: 'control',
    sets: true,
    help: "add an A/A copy of the baseline (a second instance of the same strategy, labelled '<baseline> (control)'), run interleaved like the others: its Δ is the run's measured noise floor, and no verdict calls a difference inside it",
    accepts: '',
    default: 'no control (scenarios: see deferlab scenario --help)',
  },
  {
    flag: '--no-control',
    path: 'control',
    sets: false,
    help: 'no A/A control: for a scenario that runs one by default (cpu-hog, entropy, random-regression, seed-machine), to save its trials',
    accepts: '',
    default: '',
  },
  {
    flag: '--until',
    path: 'until',
    value: 'PCT',
    example: '3',
    help: 'after --trials rounds, keep adding interleaved rounds until every Δ-mean interval is narrower than ±PCT% of the baseline mean, or --max-time runs out',
    accepts: `a percentage from ${LIMITS.untilPct.min} to ${LIMITS.untilPct.max}, as 3 or 3%; or off (a scenario that uses it by default: exactly --trials rounds)`,
    default: 'off: exactly --trials rounds',
  },
  {
    flag: '--threshold',
    path: 'threshold',
    value: 'PCT',
    example: '2',
    help: "practical-significance band: no difference smaller than PCT% of the baseline's value is called (the whole adjusted interval must lie outside ±PCT%), as criterion.rs's noise threshold",
    accepts: `a percentage from ${LIMITS.thresholdPct.min} to ${LIMITS.thresholdPct.max}, as 2 or 2%; 0: any difference the interval resolves`,
    default: "2 (a default run resolves ±2.5-3% on an idle host: docs/results.md, 'One family per run')",
  },
  {
    flag: '--max-time',
    path: 'maxTimeMs',
    value: 'TIME',
    example: '5min',
    help: 'with --until: the longest a sweep point may keep adding rounds',
    accepts: '1s..86400s (24 hours), as 90s or 5min',
    default: '10min',
  },
] as const;
