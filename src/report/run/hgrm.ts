/**
 * HdrHistogram's standard percentile-distribution text (`.hgrm`), written and read back.
 *
 * The writer is hdr-histogram-js's own `outputPercentileDistribution(5, 1000)`, so the files are
 * byte-for-byte what the Java, C and JS HdrHistogram tools print, and they plot in the usual
 * tools (e.g. hdrhistogram.github.io/HdrHistogram/plotFiles.html). Values are recorded in ns and
 * printed divided by 1000, i.e. in µs. The format, from hdr-histogram-js 3.0.1 `JsHistogram`:
 *
 *            Value     Percentile TotalCount 1/(1-Percentile)
 *                                                               ← blank line
 *            1.007 0.000000000000          1           1.00
 *          ...
 *       123469.823 1.000000000000       1001                    ← the 100% row has no last column
 *     #[Mean    =      623.319, StdDeviation   =     3894.415]
 *     #[Max     =   123456.789, Total count    =         1001]
 *     #[Buckets =           32, SubBuckets     =         2048]
 *
 * `Percentile` is a fraction (0..1), not a percentage.
 */

import type { Histogram } from 'hdr-histogram-js';
import { decodeHistogram } from '../decode.js';
import type { RunResults, StageName } from '../types.js';
import { STAGE_NAMES } from '../types.js';
import type { ReportFormat } from './format.js';

/** Ticks per half-distance to 100%: HdrHistogram's customary 5. */
export const HGRM_TICKS_PER_HALF_DISTANCE = 5;
/** Histograms hold ns; .hgrm files show µs. */
export const HGRM_VALUE_SCALE_NS_PER_UNIT = 1000;

/** The .hgrm text of `h` (values in ns, printed in µs). */
export function formatHgrm(h: Histogram): string {
  return h.outputPercentileDistribution(HGRM_TICKS_PER_HALF_DISTANCE, HGRM_VALUE_SCALE_NS_PER_UNIT);
}

export interface HgrmRow {
  /** µs */
  valueUs: number;
  /** fraction, 0..1 */
  percentile: number;
  totalCount: number;
  /** 1/(1-percentile); Infinity on the 100% row, which prints none */
  inverse: number;
}

export interface ParsedHgrm {
  rows: HgrmRow[];
  /** µs */
  meanUs: number;
  stdDeviationUs: number;
  maxUs: number;
  totalCount: number;
  /** Absent if the file has no `#[Buckets = ...]` line (some writers omit it). */
  buckets?: number;
  subBuckets?: number;
}

const NUM = '([-+0-9.eE]+|NaN|Infinity)';
const MEAN_RE = new RegExp(`^#\\[Mean\\s*=\\s*${NUM},\\s*StdDeviation\\s*=\\s*${NUM}\\]$`);
const MAX_RE = new RegExp(`^#\\[Max\\s*=\\s*${NUM},\\s*Total count\\s*=\\s*${NUM}\\]$`);
const BUCKETS_RE = new RegExp(`^#\\[Buckets\\s*=\\s*${NUM},\\s*SubBuckets\\s*=\\s*${NUM}\\]$`);

/**
 * Parse .hgrm text (as written by {@link formatHgrm} or any HdrHistogram implementation's plain,
 * non-CSV `outputPercentileDistribution`). Throws an Error naming the line that does not parse,
 * or the footer line that is missing.
 */
export function parseHgrm(text: string): ParsedHgrm {
  const lines = text.split(/\r?\n/);
  const rows: HgrmRow[] = [];
  let mean: RegExpExecArray | null = null;
  let max: RegExpExecArray | null = null;
  let buckets: RegExpExecArray | null = null;
  let sawHeader = false;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const line = raw.trim();
    if (line === '') continue;
    if (!sawHeader && /^Value\s+Percentile\s+TotalCount/.test(line)) {
      sawHeader = true;
      continue;
    }
    if (line.startsWith('#')) {
      mean ??= MEAN_RE.exec(line);
      max ??= MAX_RE.exec(line);
      buckets ??= BUCKETS_RE.exec(line);
      continue;
    }
    const f = line.split(/\s+/);
    const nums = f.map(Number);
    if ((f.length !== 3 && f.length !== 4) || nums.some((x) => Number.isNaN(x))) {
      throw new Error(
        `hgrm line ${i + 1} is not "Value Percentile TotalCount [1/(1-Percentile)]": ${JSON.stringify(raw)}`,
      );
    }
    rows.push({
      valueUs: nums[0],
      percentile: nums[1],
      totalCount: nums[2],
      inverse: f.length === 4 ? nums[3] : Number.POSITIVE_INFINITY,
    });
  }
  if (!sawHeader) throw new Error('hgrm text has no "Value Percentile TotalCount 1/(1-Percentile)" header line');
  const m = mean;
  const x = max;
  const b = buckets;
  if (!m) throw new Error('hgrm text has no "#[Mean = ..., StdDeviation = ...]" footer line');
  if (!x) throw new Error('hgrm text has no "#[Max = ..., Total count = ...]" footer line');
  const out: ParsedHgrm = {
    rows,
    meanUs: Number(m[1]),
    stdDeviationUs: Number(m[2]),
    maxUs: Number(x[1]),
    totalCount: Number(x[2]),
  };
  if (b) {
    out.buckets = Number(b[1]);
    out.subBuckets = Number(b[2]);
  }
  return out;
}

/** Longest label part of an .hgrm file name, characters. Keeps names well under NAME_MAX (255). */
const MAX_LABEL_CHARS = 64;

/** A label made safe for a file name: `[A-Za-z0-9._-]` kept, runs of anything else become `_`. */
export function sanitizeLabel(label: string): string {
  const s = label.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, MAX_LABEL_CHARS);
  return s === '' || /^\.+$/.test(s) ? 'strategy' : s;
}

export interface HgrmFile {
  name: string;
  point: number;
  label: string;
  stage: StageName;
  text: string;
}

/**
 * The .hgrm files of a run: `<point>-<label-sanitized>-<stage>.hgrm`, point being the 0-based
 * index into `points`. Two labels of a point that sanitize alike (`a/b`, `a b`) get `_2`, `_3`...
 * suffixes, in strategy order, so no file overwrites another.
 */
export function hgrmFiles(results: RunResults): HgrmFile[] {
  const out: HgrmFile[] = [];
  results.points.forEach((point, pi) => {
    const used = new Set<string>();
    for (const s of point.strategies) {
      const base = sanitizeLabel(s.label);
      let part = base;
      for (let k = 2; used.has(part); k++) part = `${base}_${k}`;
      used.add(part);
      for (const stage of STAGE_NAMES) {
        const m = s.merged[stage];
        if (!m) continue;
        const h = decodeHistogram(m.histogram, `point ${pi}, strategy ${JSON.stringify(s.label)}, stage ${stage}`);
        out.push({ name: `${pi}-${part}-${stage}.hgrm`, point: pi, label: s.label, stage, text: formatHgrm(h) });
      }
    }
  });
  return out;
}

/** The .hgrm files as a report format (formats.ts): one per strategy and stage measured. */
export const HGRM_FORMAT: ReportFormat = {
  listed: '.hgrm per stage',
  holds: 'HdrHistogram percentile tables, <point>-<label>-<stage>.hgrm',
  render: hgrmFiles,
  owns: (name) => name.endsWith('.hgrm'),
};
