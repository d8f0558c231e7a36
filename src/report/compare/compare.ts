/**
 * `deferlab compare`: the results of several runs (or machines) side by side.
 *
 * The comparison model ({@link compareRuns}) is built from already-validated results alone and
 * is plain JSON (what `--json` writes); the terminal table (renderCompareTable (compare-text.ts)) and
 * report.html (compare-html.ts) are renderings of it. Nothing here reads files or prints.
 *
 * Matching: points by their parameters (`msg_size=4096`; one point without a sweep), strategies
 * by label, stages by name. A strategy or stage one run lacks is a row with `null` for that run.
 * Ratios are to the first run given (the reference), never to another strategy: this compares
 * runs, while each run's own results.json already compares its strategies with its baseline.
 *
 * Merging (`--merge`): HdrHistograms add (their counts per bucket sum), so the merged
 * percentiles are those of all the runs' samples pooled, exactly as if one run had recorded them
 * all (within each histogram's 3 significant digits).
 */

import { build, type Histogram } from 'hdr-histogram-js';
import { ReportError } from '../../errors.js';
import { decodeHistogram } from '../decode.js';
import { pointTitle, setupLine } from '../run/table.js';
import { summarize } from '../statistics/stats.js';
import type { PointResult, RunResults, StageName, Summary } from '../types.js';
import { STAGE_NAMES } from '../types.js';
import { incomparableLines } from './comparable.js';

/** The percentiles compared, in column order, with their titles. */
export const COMPARE_METRICS = [
  ['p50', 'p50'],
  ['p90', 'p90'],
  ['p99', 'p99'],
  ['p99_9', 'p99.9'],
  ['max', 'max'],
  ['mean', 'mean'],
] as const satisfies ReadonlyArray<readonly [keyof Summary, string]>;

export type CompareMetric = (typeof COMPARE_METRICS)[number][0];

/** One run given to `compare`: `name` is how the user named it (the path as typed). */
export interface CompareInput {
  name: string;
  /** The results.json read. */
  path: string;
  results: RunResults;
}

export interface CompareRun {
  /** 1-based, as the table shows it: `#1`. */
  index: number;
  name: string;
  path: string;
  status: RunResults['status'];
  startedAt: string;
  /** What the run measured, in one line (the run's own table's setup line), when its options say. */
  setup?: string;
}

export interface StageRow {
  /** The point's parameters as `msg_size=4096`; `` without a sweep. */
  point: string;
  label: string;
  stage: StageName;
  /** Per run, in input order: the merged summary (ns), or null when that run lacks it. */
  runs: Array<Summary | null>;
  /** Per run: each metric's ratio to the first run's; null without both values (or a 0 reference). */
  ratios: Array<Record<CompareMetric, number | null> | null>;
  /** `--merge`: the runs' histograms added, summarised (ns); absent without `--merge`. */
  merged?: Summary;
}

/** One metadata field that is not the same in every run. */
export interface MetaDifference {
  /** A dotted path into results.json's `meta` (`options.hz`, `kernel.profile`), or `status`, `baseline`, `sweep`. */
  field: string;
  /** Per run: the value as text; null when the field is absent from that run. */
  values: Array<string | null>;
  /** Per run: the value as results.json holds it (a number stays a number); null when absent. */
  exact: unknown[];
}

export interface CompareModel {
  runs: CompareRun[];
  merged: boolean;
  rows: StageRow[];
  /** Only the fields whose values differ between the runs. */
  metaDifferences: MetaDifference[];
  /** Metadata fields left out of {@link metaDifferences} because they differ in every run by nature. */
  metaIgnored: readonly string[];
  /** The runs' time dilation factors differ: what that means for the figures side by side. */
  tdfWarning?: string;
  /**
   * What makes the runs not comparable as they stand, one line per difference (workload, kernel
   * profile, NIC, message size, TDF (the {@link tdfWarning} again), host-stall handling, points,
   * strategies, nothing compared): warnings shown above the table; empty when there is none.
   */
  incomparable: string[];
}

export interface CompareOptions {
  /** Add the runs' histograms per strategy and stage. */
  merge?: boolean;
  /** Only these stages (all present ones when absent or empty). */
  stages?: readonly StageName[];
}

/**
 * Fields that differ between any two runs by nature (when, how it was typed, where it went, the
 * seed chosen at random, where a replayed trace sits on that machine: its file name as given
 * is `options.irq.trace.file`): a difference there says nothing about the results.
 */
export const META_IGNORED = [
  'startedAt',
  'finishedAt',
  'command',
  'seed',
  'options.seed',
  'options.outDir',
  'options.irq.trace.path',
] as const;

/** A value as the metadata table shows it. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  return JSON.stringify(v) ?? String(v);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Flatten metadata into `path → text`: objects recurse (`options.irq.rate`); a list of objects
 * recurses by label where every element has a distinct one (`options.strategies[workqueue].ref`),
 * else by index (`x[1].y`); any other list is one value (`[[0],[1]]`).
 * Fields nobody declared (a `kernel` profile, a `calibration` block) flatten like the others.
 */
export function flattenMeta(
  value: unknown,
  prefix = '',
  out = new Map<string, string>(),
  /** Where given, each path's value as it is (not as text). */
  exact?: Map<string, unknown>,
): Map<string, string> {
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0 && prefix) {
      out.set(prefix, '{}');
      exact?.set(prefix, {});
    }
    for (const k of keys) flattenMeta(value[k], prefix ? `${prefix}.${k}` : k, out, exact);
  } else if (Array.isArray(value) && value.length > 0 && value.every(isPlainObject)) {
    // Keyed by label where every element has its own (a strategy list): runs that list
    // different strategies then line up by strategy, not by position.
    const labels = value.map((v) => v.label);
    const byLabel = labels.every((l) => typeof l === 'string') && new Set(labels).size === labels.length;
    value.forEach((v, i) => {
      flattenMeta(v, `${prefix}[${byLabel ? labels[i] : i}]`, out, exact);
    });
  } else if (value !== undefined) {
    out.set(prefix, valueText(value));
    exact?.set(prefix, value);
  }
  return out;
}

/** The metadata fields whose values are not all the same (absent counts as a value). */
export function metaDifferences(runs: readonly RunResults[]): MetaDifference[] {
  const exacts = runs.map(() => new Map<string, unknown>());
  const flat = runs.map((r, i) => {
    const m = flattenMeta(r.meta, '', new Map(), exacts[i]);
    m.set('status', r.status);
    m.set('baseline', r.baseline);
    m.set('sweep', r.sweep ? `${r.sweep.param}: ${r.sweep.values.join(', ')}` : 'none');
    exacts[i].set('status', r.status);
    exacts[i].set('baseline', r.baseline);
    exacts[i].set('sweep', r.sweep ?? null);
    return m;
  });
  const ignored = new Set<string>(META_IGNORED);
  const fields: string[] = [];
  for (const m of flat) for (const k of m.keys()) if (!fields.includes(k) && !ignored.has(k)) fields.push(k);
  const out: MetaDifference[] = [];
  for (const field of fields) {
    const values = flat.map((m) => m.get(field) ?? null);
    if (values.some((v) => v !== values[0]))
      out.push({ field, values, exact: exacts.map((m) => (m.has(field) ? m.get(field) : null)) });
  }
  return out;
}

/** A 64-bit, plain-JS histogram that grows to whatever is added to it. */
function emptyHistogram(): Histogram {
  return build({ bitBucketSize: 64, useWebAssembly: false, autoResize: true, numberOfSignificantValueDigits: 3 });
}

function ratio(value: number, reference: number): number | null {
  return Number.isFinite(value) && Number.isFinite(reference) && reference > 0 ? value / reference : null;
}

/** The union of the runs' points, keyed by their title, in order of first appearance. */
function pointKeys(inputs: readonly CompareInput[]): string[] {
  const keys: string[] = [];
  for (const i of inputs) for (const p of i.results.points) if (!keys.includes(pointTitle(p))) keys.push(pointTitle(p));
  return keys;
}

const pointOf = (r: RunResults, key: string): PointResult | undefined => r.points.find((p) => pointTitle(p) === key);

/**
 * The histograms of one row, per run (null where the run lacks it), decoded from results.json.
 * A damaged one throws an Error naming the file, point, strategy and stage.
 */
export function rowHistograms(
  inputs: readonly CompareInput[],
  row: Pick<StageRow, 'point' | 'label' | 'stage'>,
): Array<Histogram | null> {
  return inputs.map((input) => {
    const m = pointOf(input.results, row.point)?.strategies.find((s) => s.label === row.label)?.merged[row.stage];
    if (!m || m.summary.count === 0) return null;
    const at = row.point ? `point ${row.point}, ` : '';
    try {
      return decodeHistogram(m.histogram, `${at}strategy ${JSON.stringify(row.label)}, stage ${row.stage}`);
    } catch (e) {
      throw new ReportError(
        'ERR_RESULTS_INVALID',
        `${input.path} is not a valid deferlab results file: ${(e as Error).message.replace(/^results: /, '')}`,
        e,
      );
    }
  });
}

/** The sum of the histograms given (HdrHistograms add bucket by bucket). */
export function mergeHistograms(hs: ReadonlyArray<Histogram | null>): Histogram {
  const sum = emptyHistogram();
  for (const h of hs) if (h) sum.add(h);
  return sum;
}

/**
 * Build the comparison. Context: main thread; pure apart from decoding histograms (with
 * `merge`), whose damage throws an Error naming the run, strategy and stage.
 */
export function compareRuns(inputs: readonly CompareInput[], opts: CompareOptions = {}): CompareModel {
  const wanted = opts.stages?.length ? new Set(opts.stages) : undefined;
  const rows: StageRow[] = [];
  for (const key of pointKeys(inputs)) {
    const points = inputs.map((i) => pointOf(i.results, key));
    const labels: string[] = [];
    for (const p of points) for (const s of p?.strategies ?? []) if (!labels.includes(s.label)) labels.push(s.label);
    for (const label of labels) {
      const strategies = points.map((p) => p?.strategies.find((s) => s.label === label));
      for (const stage of STAGE_NAMES) {
        if (wanted && !wanted.has(stage)) continue;
        const runs = strategies.map((s) => {
          const m = s?.merged[stage];
          return m && m.summary.count > 0 ? m.summary : null;
        });
        if (runs.every((r) => r === null)) continue;
        const ref = runs[0];
        const ratios = runs.map((r) =>
          r && ref
            ? (Object.fromEntries(COMPARE_METRICS.map(([m]) => [m, ratio(r[m], ref[m])])) as Record<
                CompareMetric,
                number | null
              >)
            : null,
        );
        const row: StageRow = { point: key, label, stage, runs, ratios };
        if (opts.merge) row.merged = summarize(mergeHistograms(rowHistograms(inputs, row)));
        rows.push(row);
      }
    }
  }
  const tdf = tdfWarningOf(inputs.map((i) => i.results));
  const incomparable = incomparableLines(
    inputs.map((i) => i.results),
    rows,
  );
  // The TDF's line after the workload's and the kernel's, where it changes what the times mean.
  const at = incomparable.findIndex((l) => !/different (workloads|kernel profiles)/.test(l));
  if (tdf.tdfWarning) incomparable.splice(at < 0 ? incomparable.length : at, 0, tdf.tdfWarning);
  return {
    runs: inputs.map((i, k) => {
      const setup = setupLine(i.results);
      return {
        index: k + 1,
        name: i.name,
        path: i.path,
        status: i.results.status,
        startedAt: i.results.meta.startedAt,
        ...(setup ? { setup } : {}),
      };
    }),
    merged: Boolean(opts.merge),
    rows,
    metaDifferences: metaDifferences(inputs.map((i) => i.results)),
    metaIgnored: META_IGNORED,
    ...tdf,
    incomparable,
  };
}

/**
 * Runs of different time dilation factors (`--tdf`, src/harness/tdf.ts): their times are each in
 * its own emulated clock, in which the lab's kernel ran at a different speed against the same
 * wire, ticks and moderation. Side by side they are two different machines, not a re-measurement.
 */
export function tdfWarningOf(runs: readonly Pick<RunResults, 'meta'>[]): { tdfWarning?: string } {
  const tdfs = runs.map((r) => r.meta.tdf?.tdf ?? 1);
  if (tdfs.every((t) => t === tdfs[0])) return {};
  return {
    tdfWarning:
      `warning: these runs ran at different time dilation factors (${tdfs.map((t, i) => `#${i + 1} TDF ${t}`).join(', ')}): ` +
      "each time is emulated time at its own TDF, where the lab's kernel ran TDF times faster against the same wire, " +
      'ticks and interrupt moderation; the ratios compare two differently scaled machines, not two measurements of one',
  };
}

/** The model as JSON text: NaN and ±Infinity (none expected) as null, like results.json. */
export function compareJson(model: CompareModel): string {
  return `${JSON.stringify(model, null, 2)}\n`;
}
