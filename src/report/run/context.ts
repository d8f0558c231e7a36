/**
 * What the run report needs to know about the run beyond one point, from its metadata: the
 * summary table and the notes under it read it. Pure; nothing here prints.
 */
import type { RunResults } from '../types.js';

/** What the table needs to know about the run beyond one point (from `RunResults.meta`). */
export interface TableContext {
  /** `tcp_lat`, `irq_only`, ... */
  workload?: string;
  cpus?: number;
  trialMs?: number;
  hostCores?: number;
  /** False when the run recorded counters only (`--no-tracing`): no latency at all. */
  tracing?: boolean;
  /** The A/A control's label (`--control`), if the run had one. */
  control?: string;
  /** `--threshold`, % of the baseline, as the run was given it. */
  thresholdPct?: number;
  /** The kernel profile (`--kernel`): `5.15`, `6.1`, `6.9`, `6.18`. */
  kernel?: string;
  /** Host cores other processes left free just before the run (meta.hostFreeCores; `--idle auto` only). */
  hostFreeCores?: number;
}

/** The {@link TableContext} of a run, from its metadata (`meta.options` is the resolved config). */
export function tableContext(results: Pick<RunResults, 'meta'> & { control?: string }): TableContext {
  const o = (results.meta.options ?? {}) as {
    workload?: unknown;
    cpus?: unknown;
    trialMs?: unknown;
    tracing?: unknown;
    threshold?: unknown;
    kernel?: unknown;
  };
  const w = o.workload;
  const kind =
    typeof w === 'string'
      ? w
      : typeof (w as { kind?: unknown })?.kind === 'string'
        ? (w as { kind: string }).kind
        : undefined;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  return {
    ...(kind ? { workload: kind } : {}),
    ...(num(o.cpus) !== undefined ? { cpus: num(o.cpus) } : {}),
    ...(num(o.trialMs) !== undefined ? { trialMs: num(o.trialMs) } : {}),
    ...(num(results.meta.hostCores) !== undefined ? { hostCores: results.meta.hostCores } : {}),
    ...(typeof o.tracing === 'boolean' ? { tracing: o.tracing } : {}),
    ...(typeof results.control === 'string' ? { control: results.control } : {}),
    ...(num(o.threshold) !== undefined ? { thresholdPct: num(o.threshold) } : {}),
    ...(typeof o.kernel === 'string' ? { kernel: o.kernel } : {}),
    ...(num(results.meta.hostFreeCores) !== undefined ? { hostFreeCores: results.meta.hostFreeCores } : {}),
  };
}

/**
 * `point 2/9`: a point's place among the points the run was to measure (meta.options.sweep's
 * values), not only among those it kept: an interrupted sweep of nine that finished one reads
 * `point 1/9`. Results that do not record the sweep count the points kept.
 */
export function pointOfText(results: Pick<RunResults, 'meta' | 'points'>, index: number): string {
  const sweep = (results.meta.options as { sweep?: { values?: unknown } } | undefined)?.sweep;
  const planned = Array.isArray(sweep?.values) ? sweep.values.length : 0;
  return `${index + 1}/${Math.max(planned, results.points.length)}`;
}
