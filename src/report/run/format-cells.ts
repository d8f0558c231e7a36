/**
 * How the summary table writes its numbers and verdicts: µs, rates, Δs with their interval, the
 * marker a comparison earns. Pure; shared by the terminal table, report.html and the notes.
 */
import { NO_TAIL_INTERVAL } from '../statistics/tail-compare.js';
import type { Comparison } from '../types.js';

/**
 * The verdict a comparison earns: `worse`, `better`, `~` (within noise: the interval rules out
 * any difference the run would call), or {@link NOT_JUDGED} when it has no interval at all (one
 * trial, too few samples in a tail): nothing was ruled in or out, so no verdict.
 */
export type Marker = 'worse' | 'better' | '~' | '?' | 'baseline' | 'noise floor' | '';

/** The mark of a comparison without an interval: not judged (the table's legend says so). */
export const NOT_JUDGED = '?';

/** The legend's words for {@link NOT_JUDGED}, for a table that shows it. */
export const NOT_JUDGED_LEGEND = '"?" = not judged: no interval (one trial, or too few samples), so no verdict';

/** Whether `c` has an interval to judge by. */
export const hasInterval = (c: Comparison): boolean => Number.isFinite(c.ciLow) && Number.isFinite(c.ciHigh);

/** ns → µs with 2 decimals. */
export function fmtUs(ns: number): string {
  return Number.isFinite(ns) ? (ns / 1000).toFixed(2) : '-';
}

function fmtSignedUs(ns: number): string {
  if (!Number.isFinite(ns)) return '?';
  const s = (ns / 1000).toFixed(2);
  return ns >= 0 && !s.startsWith('-') ? `+${s}` : s;
}

export function fmtRate(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  return Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1);
}

/** "+1.23 [+0.40, +2.06]" in µs; without an interval, says so. */
export function fmtDelta(c: Comparison): string {
  const d = fmtSignedUs(c.diff);
  if (!hasInterval(c)) return `${d} [no CI: ${c.method.startsWith(NO_TAIL_INTERVAL) ? 'too few samples' : 'n<2'}]`;
  return `${d} [${fmtSignedUs(c.ciLow)}, ${fmtSignedUs(c.ciHigh)}]`;
}

/** A share of the baseline as a percentage: `5.8%` below 10, `12%` from 10. */
export function fmtPct(x: number): string {
  if (!Number.isFinite(x)) return '?%';
  const p = Math.abs(x * 100);
  // Whole per cents from 10% up, but never rounded up to 100% (a −99.6% would read as all of it gone).
  return `${p < 10 || (p >= 99.5 && p < 100) ? p.toFixed(1) : p.toFixed(0)}%`;
}

export function markerOf(c: Comparison | undefined): Marker {
  if (!c) return '';
  if (!hasInterval(c)) return NOT_JUDGED;
  return c.verdict === 'regression' ? 'worse' : c.verdict === 'improvement' ? 'better' : '~';
}

/**
 * The verdict cell: `worse`, `better`, or for "within noise" `~` with the smallest effect the
 * comparison could have seen (`~ could see ±0.40 (5.8%)`, µs and % of the baseline), or why it
 * is noise (`~ inside noise floor`, with --control). `?` (not judged) without an interval.
 */
export function verdictText(c: Comparison | undefined): string {
  const marker = markerOf(c);
  if (!c || marker !== '~') return marker;
  if (c.insideFloor) return '~ inside noise floor';
  // The interval excluded 0 but not the --threshold band: a change too small to call.
  if (c.threshold !== undefined && c.threshold > 0 && (c.ciLow > 0 || c.ciHigh < 0))
    return `~ inside ±${fmtPct(c.threshold / c.baseline)} band`;
  const mde = c.detectable;
  if (mde === undefined || !Number.isFinite(mde)) return '~';
  return `~ could see ±${fmtUs(mde)} (${fmtPct(mde / c.baseline)})`;
}

/**
 * A noisy comparison: one whose smallest visible effect exceeds this share of the baseline's mean
 * gets a hint under the table (a quiet host is ~8–12% at the defaults: README).
 */
export const NOISY_DETECTABLE = 0.2;

/** A comparison whose whole interval lies inside ±its --threshold band (a positive band only). */
function insideBand(c: Comparison | undefined): boolean {
  if (!c || c.threshold === undefined || !(c.threshold > 0)) return false;
  return Number.isFinite(c.ciLow) && Number.isFinite(c.ciHigh) && c.ciLow >= -c.threshold && c.ciHigh <= c.threshold;
}

/**
 * What a point's comparison found, in one line for the reader who reads nothing else: which
 * strategies were worse or better than the baseline (with Δ mean and its share), how many within
 * noise and the smallest effect they could have seen, and which were not judged. Undefined where
 * nothing was compared. `rows`: label, role marker, comparison. Context: pure.
 */
export function foundLine(
  baselineLabel: string,
  rows: readonly { label: string; marker: Marker; comparison?: Comparison }[],
): string | undefined {
  const by = (m: Marker) => rows.filter((r) => r.marker === m);
  const judged = rows.filter((r) => r.marker === 'worse' || r.marker === 'better' || r.marker === '~');
  if (judged.length === 0 && by(NOT_JUDGED).length === 0) return undefined;
  const effect = (r: { label: string; comparison?: Comparison }) => {
    const c = r.comparison as Comparison;
    return `${r.label} (${fmtSignedUs(c.diff)} µs, ${c.diff >= 0 ? '+' : '-'}${fmtPct(c.diff / c.baseline)})`;
  };
  const parts: string[] = [];
  if (by('worse').length) parts.push(`worse than ${baselineLabel}: ${by('worse').map(effect).join(', ')}`);
  if (by('better').length) parts.push(`better than ${baselineLabel}: ${by('better').map(effect).join(', ')}`);
  // Within noise, and the whole interval inside the --threshold band: no difference as large as
  // the band either way (an equivalence, at the band as its margin): an A/A copy's hoped-for finding.
  const same = by('~').filter((r) => insideBand(r.comparison));
  if (same.length) {
    const c = same[0].comparison as Comparison;
    parts.push(
      `the same as ${baselineLabel} in the mean within ±${fmtPct((c.threshold ?? 0) / c.baseline)}: ${same.map((r) => r.label).join(', ')} (${same.length === 1 ? 'its interval lies' : 'each interval lies'} wholly inside the --threshold band)`,
    );
  }
  const noise = by('~').filter((r) => !same.includes(r));
  let hint = '';
  if (noise.length) {
    const seen = noise
      .map((r) => (r.comparison?.detectable ?? Number.NaN) / (r.comparison?.baseline ?? Number.NaN))
      .filter((x) => Number.isFinite(x));
    const lo = Math.min(...seen);
    const hi = Math.max(...seen);
    const could = seen.length
      ? ` (each could have seen a difference of ${lo === hi ? fmtPct(hi) : `${fmtPct(lo)}–${fmtPct(hi)}`} of the mean)`
      : '';
    const who =
      noise.length === judged.length && by(NOT_JUDGED).length === 0
        ? `no strategy differed from ${baselineLabel} beyond the noise`
        : `within noise: ${noise.map((r) => r.label).join(', ')}`;
    parts.push(`${who}${could}`);
    if (seen.length && hi > NOISY_DETECTABLE)
      hint = `; a difference under ${fmtPct(hi)} could not be seen here: more --trials, a longer --duration or a quieter host narrow it`;
  }
  if (by(NOT_JUDGED).length)
    parts.push(
      `not judged (no interval): ${by(NOT_JUDGED)
        .map((r) => r.label)
        .join(', ')}`,
    );
  return `found: ${parts.join('; ')}${hint}`;
}
