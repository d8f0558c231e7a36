/**
 * `deferlab explain DIR`: the explain data of a finished run, read from its results.json and
 * checked (results.json's schema keeps the block as it is: src/report/schema.ts).
 */
import { ReportError } from '../../errors.js';
import type { ExplainResults, RunResults } from '../types.js';

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** What is wrong with `e` as explain data, or '' if nothing. */
export function explainProblem(e: unknown): string {
  if (typeof e !== 'object' || e === null || !Array.isArray((e as ExplainResults).points)) return 'no "points" list';
  for (const p of (e as ExplainResults).points) {
    if (!isNum(p?.point) || !Array.isArray(p.series)) return 'a point without "point" or "series"';
    for (const s of p.series) {
      if (typeof s?.label !== 'string' || (s.kind !== 'exchange' && s.kind !== 'handoff'))
        return 'a series without its "label" or "kind"';
      if (!isNum(s.count) || !isNum(s.unexplained) || !Array.isArray(s.causes) || !Array.isArray(s.buckets))
        return `series ${s.label}: "count", "unexplained", "causes" or "buckets" missing`;
      for (const b of s.buckets)
        if (!Array.isArray(b) || b.length < 3 || b.length > 3 + s.causes.length || !b.every(isNum))
          return `series ${s.label}: a bucket is not [index, count, latency sum, ...cause sums]`;
    }
  }
  return '';
}

/** The explain data of `results` (read from `path`), checked. Throws ReportError (exit 2). */
export function explainOf(results: RunResults, path: string): ExplainResults {
  if (results.explain === undefined)
    throw new ReportError(
      'ERR_RESULTS_INVALID',
      `${path} holds no explain data: the run was made without --explain; run it again with --explain`,
    );
  const problem = explainProblem(results.explain);
  if (problem) throw new ReportError('ERR_RESULTS_INVALID', `${path} has a damaged "explain" block: ${problem}`);
  return inRunOrder(results.explain, results);
}

/**
 * `e` with each point's series in the run's strategy order (`points[].strategies`, as given with
 * --strategy), not the order the collector first met them in (the first slice's, which the
 * balanced schedule shuffles); series of labels the point does not list keep their place after.
 * Context: main thread; pure (a new object).
 */
export function inRunOrder(e: ExplainResults, results: Pick<RunResults, 'points'>): ExplainResults {
  return {
    ...e,
    points: e.points.map((p) => {
      const order = (results.points[p.point]?.strategies ?? []).map((s) => s.label);
      const rank = (label: string) => {
        const i = order.indexOf(label);
        return i < 0 ? order.length : i;
      };
      // Array.prototype.sort is stable: a label's series (exchange, hand-off) keep their order.
      return { ...p, series: [...p.series].sort((a, b) => rank(a.label) - rank(b.label)) };
    }),
  };
}
