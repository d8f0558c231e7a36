/**
 * bench:twin's bar (issue 24): a lab/host ratio agrees when it lies within [BAR_LOW, BAR_HIGH].
 * Where a p50 or p99 lies between modes (twin-table.ts † and ‡), its ratio jumps with a few
 * wake-ups, and the table compares the shares of wake-ups that waited past PROMPT_NS instead; this
 * module gives that share ratio an interval and judges it as an equivalence question: `inside`
 * when the whole interval is within the bar, `outside` when none of it is, `undecided` when it
 * straddles an end (more rounds, or more wake-ups, would tell).
 *
 * The interval: the log of the ratio of two proportions with Katz's standard error (Katz, Baptista,
 * Azen and Pike, "Obtaining confidence intervals for the risk ratio in cohort studies", Biometrics
 * 34, 1978), each proportion's variance multiplied by its rounds' dispersion (Pearson's χ² over the
 * rounds divided by their degrees of freedom, at least 1: a quasi-binomial model, McCullagh and
 * Nelder, "Generalized Linear Models", 2nd ed., §4.5), because the share moves from one minute to
 * the next more than binomial draws would (docs/twin.md). With 0.5 added to each cell (Haldane) so
 * that a side with no slow wake-up still has an interval. Approximate: with 3 rounds the
 * dispersion itself is known only roughly.
 *
 * Context: main thread; pure (numbers in, numbers out).
 */

import { tCritical95 } from '../src/report/statistics/interval.js';
import { normalQuantile } from '../src/report/statistics/tdist.js';

/** The bar: lab/host within 0.5–2×. */
export const BAR_LOW = 0.5;
export const BAR_HIGH = 2;

/**
 * One round's wake-ups on one side: how many, how many waited past PROMPT_NS, and the round's own
 * p50 and p99 (ns; absent from a Dist made without them).
 */
export interface RoundCount {
  n: number;
  slow: number;
  p50?: number;
  p99?: number;
}

/** A figure's ratio lab/host over paired rounds: their geometric mean and its 95% interval. */
export interface RoundsRatio {
  ratio: number;
  lo: number;
  hi: number;
  verdict: BarVerdict;
  rounds: number;
}

/**
 * Figure `k`'s ratio lab/host from the rounds each side ran in the same minute (round i of the
 * host beside round i of the lab, as bench:twin runs them): the mean of the rounds' log ratios
 * with Student's t interval on k − 1 degrees of freedom, so a round the host or the lab had a bad
 * minute in widens it. Undefined with fewer than two paired rounds that both have the figure, or
 * when the sides ran different numbers of rounds (a round left out on one side: no pairing).
 */
export function roundsRatio(
  host: readonly RoundCount[],
  lab: readonly RoundCount[],
  k: 'p50' | 'p99',
): RoundsRatio | undefined {
  if (host.length !== lab.length) return undefined;
  const logs: number[] = [];
  for (let i = 0; i < host.length; i++) {
    const h = host[i][k];
    const l = lab[i][k];
    if (h !== undefined && l !== undefined && h > 0 && l > 0) logs.push(Math.log(l / h));
  }
  if (logs.length < 2) return undefined;
  const mean = logs.reduce((a, x) => a + x, 0) / logs.length;
  const sd = Math.sqrt(logs.reduce((a, x) => a + (x - mean) ** 2, 0) / (logs.length - 1));
  const half = tCritical95(logs.length - 1) * (sd / Math.sqrt(logs.length));
  const lo = Math.exp(mean - half);
  const hi = Math.exp(mean + half);
  return { ratio: Math.exp(mean), lo, hi, verdict: barVerdict(lo, hi), rounds: logs.length };
}

export type BarVerdict = 'inside' | 'outside' | 'undecided';

export interface SlowShareRatio {
  /** The pooled shares past PROMPT_NS, lab over host. */
  ratio: number;
  lo: number;
  hi: number;
  verdict: BarVerdict;
  /** Each side's dispersion (1: the rounds' spread no more than binomial draws'). */
  dispersion: { host: number; lab: number };
}

/** Pearson's χ² of the rounds' slow counts about their pooled share, over k − 1; at least 1 (rounds of n 0 left out). */
export function dispersion(all: readonly RoundCount[]): number {
  const rounds = all.filter((r) => r.n > 0); // a round without numbers (medianDist's placeholder)
  if (rounds.length < 2) return 1;
  const n = rounds.reduce((a, r) => a + r.n, 0);
  const p = rounds.reduce((a, r) => a + r.slow, 0) / n;
  if (!(p > 0 && p < 1)) return 1;
  let x2 = 0;
  for (const r of rounds) x2 += (r.slow - r.n * p) ** 2 / (r.n * p * (1 - p));
  return Math.max(1, x2 / (rounds.length - 1));
}

/** Where a ratio's interval lies against the bar. */
export function barVerdict(lo: number, hi: number): BarVerdict {
  if (lo >= BAR_LOW && hi <= BAR_HIGH) return 'inside';
  if (hi < BAR_LOW || lo > BAR_HIGH) return 'outside';
  return 'undecided';
}

/** The lab's share past PROMPT_NS over the host's, with its 95% interval (see the module's head). */
export function slowShareRatio(host: readonly RoundCount[], lab: readonly RoundCount[]): SlowShareRatio | undefined {
  const sum = (rs: readonly RoundCount[]) =>
    rs.reduce((a, r) => ({ n: a.n + r.n, slow: a.slow + r.slow }), { n: 0, slow: 0 });
  const h = sum(host);
  const l = sum(lab);
  if (h.n === 0 || l.n === 0) return undefined;
  const dh = dispersion(host);
  const dl = dispersion(lab);
  // Haldane: 0.5 to each of the four cells (slow, not slow), so n gains 1.
  const xh = h.slow + 0.5;
  const nh = h.n + 1;
  const xl = l.slow + 0.5;
  const nl = l.n + 1;
  const log = Math.log(xl / nl / (xh / nh));
  const se = Math.sqrt(dh * (1 / xh - 1 / nh) + dl * (1 / xl - 1 / nl));
  const z = normalQuantile(0.975);
  const lo = Math.exp(log - z * se);
  const hi = Math.exp(log + z * se);
  return {
    // The pooled shares' ratio; where a side saw no slow wake-up (x/0, 0/x) the corrected one,
    // which lies inside its interval as 0 and ∞ do not.
    ratio: h.slow > 0 && l.slow > 0 ? l.slow / l.n / (h.slow / h.n) : Math.exp(log),
    lo,
    hi,
    verdict: barVerdict(lo, hi),
    dispersion: { host: dh, lab: dl },
  };
}

/** A ratio for the tables: two decimals, `∞` or `n/a` where it is not finite. */
export const fmtRatio = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : Number.isNaN(v) ? 'n/a' : '∞');

/** `0.39x [0.21, 0.72] outside` */
export function slowShareText(r: SlowShareRatio | undefined): string {
  if (!r) return 'no interval (a side without wake-ups)';
  const disp =
    r.dispersion.host > 1 || r.dispersion.lab > 1
      ? `, the rounds' spread ${r.dispersion.host.toFixed(1)}× and ${r.dispersion.lab.toFixed(1)}× the binomial`
      : '';
  return `${fmtRatio(r.ratio)}x [${fmtRatio(r.lo)}, ${fmtRatio(r.hi)}] (95%${disp}): ${r.verdict}`;
}
