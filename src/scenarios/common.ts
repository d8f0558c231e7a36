/**
 * Shared pieces of the named scenarios: building sub-runs from the user's resolved config,
 * writing each sub-run's results, and verdict lines.
 *
 * A verdict line reads: `VERDICT <expectation>: reproduced|not reproduced — <the numbers that decided>`.
 */
import { join } from 'node:path';
import type { CliIo } from '../cli/main.js';
import type { ResolvedConfig } from '../config/schema.js';
import { parseStrategySpec, type StrategySpec } from '../config/strategy-spec.js';
import { type RunHooks, runExperiment } from '../harness/run.js';
import { renderTable } from '../report/table.js';
import type { PointResult, RunResults, StageName, StrategyResult } from '../report/types.js';
import { writeResults } from '../report/write.js';

export interface Verdict {
  expectation: string;
  reproduced: boolean;
  detail: string;
}

export interface ScenarioContext {
  config: ResolvedConfig;
  io: CliIo;
  signal: AbortSignal;
  argv: string[];
}

export function specs(texts: readonly string[]): StrategySpec[] {
  return texts.map((t) => {
    const p = parseStrategySpec(t, process.cwd());
    if (!p.ok) throw new Error(`scenario strategy ${t}: ${p.problem.constraint}`);
    return p.value;
  });
}

/** Run one sub-experiment; print its table; write its results under outDir/<name>. */
export async function subRun(
  ctx: ScenarioContext,
  name: string,
  config: ResolvedConfig,
  adjust?: RunHooks['adjust'],
): Promise<RunResults> {
  const { io } = ctx;
  io.stdout(`\n== ${name} ==\n`);
  const progress = io.isTTY ? (l: string) => io.stderr(`\r\x1b[2K${name}: ${l}`) : undefined;
  const results = await runExperiment(config, {
    progress,
    signal: ctx.signal,
    command: ['deferlab', ...ctx.argv],
    adjust,
  });
  if (progress) io.stderr('\r\x1b[2K');
  io.stdout(`${renderTable(results)}\n`);
  if (ctx.config.outDir) await writeResults(join(ctx.config.outDir, name), results);
  return results;
}

export function strategy(point: PointResult | undefined, label: string): StrategyResult | undefined {
  return point?.strategies.find((s) => s.label === label);
}

/** A merged stage summary value of a strategy (ns), NaN when absent. */
export function stageValue(
  s: StrategyResult | undefined,
  stage: StageName,
  key: 'mean' | 'p50' | 'p99' | 'p99_9' | 'max',
): number {
  const v = s?.merged[stage]?.summary[key];
  return typeof v === 'number' ? v : Number.NaN;
}

export function comparison(
  s: StrategyResult | undefined,
  stage: StageName,
  metric: 'mean' | 'p50' | 'p90' | 'p99' | 'p99_9',
) {
  return s?.comparison?.find((c) => c.stage === stage && c.metric === metric);
}

export const us = (ns: number) => (Number.isFinite(ns) ? `${(ns / 1000).toFixed(1)} µs` : 'n/a');
export const ms = (ns: number) => (Number.isFinite(ns) ? `${(ns / 1e6).toFixed(2)} ms` : 'n/a');
export const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');

export function printVerdicts(io: CliIo, verdicts: Verdict[]): void {
  io.stdout('\n');
  for (const v of verdicts)
    io.stdout(`VERDICT ${v.expectation}: ${v.reproduced ? 'reproduced' : 'not reproduced'} — ${v.detail}\n`);
}

/** Exit status of a scenario: its sub-runs' worst status (verdicts never fail a run). */
export function scenarioStatus(runs: RunResults[]): number {
  if (runs.some((r) => r.status === 'interrupted')) return 130;
  if (runs.some((r) => r.status === 'failed')) return 1;
  return 0;
}
