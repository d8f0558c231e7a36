/**
 * Validation of the results model (src/report/types.ts), used both when writing (an engine bug
 * fails before anything is written) and when reading results.json back.
 *
 * JSON has no NaN or Infinity: `JSON.stringify` writes them as `null`. Every number that can be
 * NaN (summary statistics, comparison bounds, counters, rates) therefore accepts `null` and
 * reads it back as NaN. Counts, indices, durations and the metadata's integers must be numbers.
 */

import { z } from 'zod';
import type { RunResults } from './types.js';
import { COMPARABLE_METRICS, SCHEMA_VERSION, STAGE_NAMES } from './types.js';

/** A number, or null standing for NaN/±Infinity (as JSON.stringify writes them). */
const num = z
  .custom<number | null>((v) => v === null || typeof v === 'number', { message: 'must be a number' })
  .transform((v): number => (v === null ? Number.NaN : v));
/** A latency (ns, ≥ 0: a histogram records no negative value), or null standing for NaN. */
const latency = z
  .custom<number | null>((v) => v === null || (typeof v === 'number' && v >= 0), {
    message: 'must be a latency in ns (a number ≥ 0)',
  })
  .transform((v): number => (v === null ? Number.NaN : v));
const count = z.number().int().nonnegative();
const stage = z.enum(STAGE_NAMES);

const summary = z.object({
  count,
  min: latency,
  mean: latency,
  p50: latency,
  p90: latency,
  p99: latency,
  p99_9: latency,
  max: latency,
});

const trial = z.object({
  index: count,
  order: count,
  durationNs: z.number().nonnegative(),
  stages: z.partialRecord(stage, summary),
  counters: z.record(z.string(), num),
  slices: z
    .partialRecord(stage, z.object({ count: z.array(count), mean: z.array(num), hist: z.array(z.string()).optional() }))
    .optional(),
  boot: count.optional(),
});

const comparison = z.object({
  stage,
  metric: z.enum(COMPARABLE_METRICS),
  baseline: num,
  value: num,
  diff: num,
  ciLow: num,
  ciHigh: num,
  ratio: num,
  detectable: num.optional(),
  floor: z.object({ low: num, high: num }).optional(),
  insideFloor: z.boolean().optional(),
  verdict: z.enum(['regression', 'improvement', 'within-noise']),
  method: z.string(),
  se: num.optional(),
  df: num.optional(),
  p: num.optional(),
  level: num.optional(),
  adjust: z.enum(['holm', 'bh', 'none']).optional(),
  threshold: num.optional(),
});

const strategy = z.object({
  label: z.string().min(1),
  name: z.string(),
  kind: z.enum(['builtin', 'file']),
  file: z.string().optional(),
  options: z.record(z.string(), z.unknown()),
  description: z.string(),
  trials: z.array(trial),
  merged: z.partialRecord(stage, z.object({ summary, histogram: z.string() })),
  counters: z.record(z.string(), num),
  rates: z.record(z.string(), num),
  comparison: z.array(comparison).optional(),
});

const point = z
  .object({
    params: z.record(z.string(), z.union([z.number(), z.string()])),
    strategies: z.array(strategy),
    schedule: z
      .object({ method: z.string(), rounds: z.array(z.array(z.string())), slices: count.optional() })
      .optional(),
    until: z
      .object({
        pct: z.number(),
        maxTimeMs: z.number(),
        reached: z.boolean(),
        rounds: count,
        stop: z.enum(['reached', 'time', 'trials', 'ended']),
        widthPct: z.record(z.string(), num),
        stage: stage.optional(),
      })
      .optional(),
  })
  .refine((p) => new Set(p.strategies.map((s) => s.label)).size === p.strategies.length, {
    message: 'strategy labels must be unique within a point',
    path: ['strategies'],
  });

const loadAvg = z.array(z.number().nonnegative());

const calibration = z.object({
  futexWakeP50Ns: num,
  futexWakeP99Ns: num,
  handoffP50Ns: num,
  handoffP99Ns: num,
  sameThreadSwitchNs: num,
  sameThreadSwitchChargedNs: num.optional(),
  clockReadNs: num,
  histRecordNs: num,
  histWasm: z.boolean(),
  roundTrips: count,
  repetitions: count,
  batches: count,
  durationMs: z.number().nonnegative(),
  hostCores: count,
  cpuModel: z.string(),
  loadAvgStart: loadAvg,
  loadAvgEnd: loadAvg,
});

export const runResultsSchema = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  status: z.enum(['completed', 'interrupted', 'failed']),
  error: z
    .object({
      message: z.string(),
      thread: z.string().optional(),
      strategy: z.string().optional(),
      cpu: z.number().optional(),
      context: z.string().optional(),
    })
    .optional(),
  // Loose: fields added after schemaVersion 1 (a kernel profile, a calibration block) survive a
  // read, so `deferlab report` keeps them and `deferlab compare` can show where runs differ.
  meta: z.looseObject({
    deferlab: z.string(),
    node: z.string(),
    v8: z.string(),
    platform: z.string(),
    arch: z.string(),
    cpuModel: z.string(),
    hostCores: z.number(),
    threads: z.number(),
    startedAt: z.string(),
    finishedAt: z.string(),
    seed: z.number(),
    command: z.array(z.string()),
    topology: z.unknown(),
    options: z.unknown(),
    workload: z.string().optional(),
    calibration: calibration.optional(),
    idlePolicy: z.string().optional(),
    mmapThreshold: z.number().nullable().optional(),
    switchCost: z
      .object({
        ns: z.number(),
        mode: z.enum(['host', 'given', 'off']),
        how: z.string(),
        pingpongNs: z.number().optional(),
        syscallsNs: z.number().optional(),
      })
      .optional(),
    tdf: z
      .object({
        tdf: z.number(),
        mode: z.enum(['given', 'default', 'auto']),
        how: z.string(),
        ops: z
          .array(
            z.object({
              name: z.string(),
              unit: z.string(),
              labNs: z.number(),
              refNs: z.number(),
              refSource: z.string(),
            }),
          )
          .optional(),
      })
      .optional(),
  }),
  baseline: z.string(),
  control: z.string().optional(),
  sweep: z.object({ param: z.string(), values: z.array(z.number()) }).nullable(),
  points: z.array(point),
  // --explain's data (src/report/explain/): checked where it is read (explain DIR), kept as is here.
  explain: z.unknown().optional(),
});

type Issue = z.core.$ZodIssue;

/** A JSON path as code would write it: `points[0].strategies[1].counters.handoffs`. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (typeof k === 'string' && /^[A-Za-z_$][\w$]*$/.test(k)) out += out ? `.${k}` : k;
    else out += `[${JSON.stringify(String(k))}]`;
  }
  return out || 'the top level';
}

/** The value at `path` in `data`, or undefined. */
function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = data;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

const MAX_SHOWN = 60;

/** A value as it appears after "got": JSON, cut short. */
function shown(v: unknown): string {
  if (v === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    text = String(v);
  }
  if (Array.isArray(v)) text = text.length > MAX_SHOWN ? `a list of ${v.length}` : text;
  else if (v !== null && typeof v === 'object') text = text.length > MAX_SHOWN ? 'an object' : text;
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}

const A_TYPE: Record<string, string> = {
  object: 'an object',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
};

/**
 * One problem as a sentence: where (a JSON path), what is wrong, what was found:
 * `points[0].strategies[1].trials[0].counters.handoffs must be a number (got "many")`.
 */
export function describeIssue(issue: Issue, data: unknown): string {
  const where = jsonPath(issue.path);
  const value = valueAt(data, issue.path);
  const got = `(got ${shown(value)})`;
  switch (issue.code) {
    case 'invalid_type': {
      const want = A_TYPE[issue.expected] ?? issue.expected;
      return value === undefined ? `${where} is missing (expected ${want})` : `${where} must be ${want} ${got}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `${where} must be ${shown(issue.values[0])} ${got}`
        : `${where} must be one of ${issue.values.map((x) => shown(x)).join(', ')} ${got}`;
    case 'too_small':
    case 'too_big': {
      const op = issue.code === 'too_small' ? (issue.inclusive ? '≥' : '>') : issue.inclusive ? '≤' : '<';
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      if (issue.origin === 'string' || issue.origin === 'array') {
        const unit = issue.origin === 'string' ? 'characters' : 'items';
        return `${where} must have ${op} ${String(bound)} ${unit} ${got}`;
      }
      return `${where} must be ${op} ${String(bound)} ${got}`;
    }
    case 'unrecognized_keys':
      return `${where} has ${issue.keys.length === 1 ? 'an unknown key' : 'unknown keys'} ${issue.keys
        .map((k) => JSON.stringify(k))
        .join(', ')}`;
    case 'invalid_union': {
      const wants = issue.errors.map((e) => (e[0]?.code === 'invalid_type' ? A_TYPE[e[0].expected] : undefined));
      return wants.length && wants.every(Boolean)
        ? `${where} must be ${wants.join(' or ')} ${got}`
        : `${where} matches none of the forms allowed here ${got}`;
    }
    case 'custom':
      return issue.message.startsWith('must') ? `${where} ${issue.message} ${got}` : `${where}: ${issue.message}`;
    default:
      return `${where}: ${issue.message} ${got}`;
  }
}

/**
 * Validate; returns the model (nulls read as NaN) or what is wrong: `first`, the first problem
 * as one sentence, and `problems`, every problem one per line (the same sentences).
 */
export function validateResults(
  data: unknown,
): { ok: true; results: RunResults } | { ok: false; first: string; count: number; problems: string } {
  const r = runResultsSchema.safeParse(data);
  if (r.success) return { ok: true, results: r.data as RunResults };
  const lines = r.error.issues.map((i) => describeIssue(i, data));
  return { ok: false, first: lines[0] ?? 'no details', count: lines.length, problems: lines.join('\n') };
}
