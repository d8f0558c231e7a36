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
  .custom<number | null>((v) => v === null || typeof v === 'number', { message: 'expected a number (or null for NaN)' })
  .transform((v): number => (v === null ? Number.NaN : v));
const count = z.number().int().nonnegative();
const stage = z.enum(STAGE_NAMES);

const summary = z.object({
  count,
  min: num,
  mean: num,
  p50: num,
  p90: num,
  p99: num,
  p99_9: num,
  max: num,
});

const trial = z.object({
  index: count,
  order: count,
  durationNs: z.number().nonnegative(),
  stages: z.partialRecord(stage, summary),
  counters: z.record(z.string(), num),
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
  verdict: z.enum(['regression', 'improvement', 'within-noise']),
  method: z.string(),
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
  })
  .refine((p) => new Set(p.strategies.map((s) => s.label)).size === p.strategies.length, {
    message: 'strategy labels must be unique within a point',
    path: ['strategies'],
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
  meta: z.object({
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
  }),
  baseline: z.string(),
  sweep: z.object({ param: z.string(), values: z.array(z.number()) }).nullable(),
  points: z.array(point),
});

/** Validate; returns the model (nulls read as NaN) or a readable list of what is wrong. */
export function validateResults(data: unknown): { ok: true; results: RunResults } | { ok: false; problems: string } {
  const r = runResultsSchema.safeParse(data);
  if (r.success) return { ok: true, results: r.data as RunResults };
  return { ok: false, problems: z.prettifyError(r.error) };
}
