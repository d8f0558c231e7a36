/**
 * The composition root: the CLI's commands implemented with the engine, and process wiring
 * (signals, exit status). `bin/deferlab.js` calls `start()`.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runDemo } from './cli/demo.js';
import { type CliDeps, type CliIo, main, sayStopped } from './cli/main.js';
import { formatValue } from './config/errors.js';
import type { ResolvedConfig } from './config/schema.js';
import type { StrategySpec } from './config/strategy-spec.js';
import { strategyRef } from './config/strategy-spec.js';
import {
  DeferlabError,
  EXIT_BAD_INPUT,
  EXIT_INTERRUPTED,
  EXIT_OK,
  EXIT_RUN_FAILED,
  MachineFaultError,
  OutDirError,
  ReportError,
  ValidationInterrupted,
} from './errors.js';
import { estimateLine, wholeTrialsLine } from './harness/estimate.js';
import { isReexecChild } from './harness/malloc.js';
import { strategyRefs } from './harness/options.js';
import { runExperiment } from './harness/run.js';
import { FORWARD_SIGNAL, SignalDeliveries, STOP_SIGNALS } from './harness/signals.js';
import { loadIrqTrace } from './irq/replay.js';
import { IrqTraceError, type IrqTracePlan } from './irq/trace-file.js';
import { DEFAULT_KERNEL, KERNEL_NAMES, KERNEL_PROFILES } from './kernel/profiles.js';
import type { StrategyRef } from './machine/options.js';
import { type CompareInput, type CompareModel, compareJson, compareRuns } from './report/compare/compare.js';
import { readCompareInputs, writeCompareDir } from './report/compare/compare-files.js';
import { renderCompareHtml } from './report/compare/compare-html.js';
import { renderCompareTable } from './report/compare/compare-text.js';
import { explainOf, inRunOrder } from './report/explain/read.js';
import { renderExplain } from './report/explain/text.js';
import { outputFileList, RESULTS_JSON } from './report/run/formats.js';
import { checkCommand } from './report/run/notes.js';
import { errnoText, prepareOutputDir, removeIfEmpty } from './report/run/outdir.js';
import { proseWidthOf, wrapProse } from './report/run/prose.js';
import { keepScenarioText, scenarioText } from './report/run/scenario-text.js';
import { renderTable } from './report/run/table.js';
import { readResults, removeTempsInFlight, reportFromDir, writeFileAtomic, writeResults } from './report/run/write.js';
import { timelineCollectorFor, writeTimeline } from './report/timeline/timeline-files.js';
import type { RunResults } from './report/types.js';
import { SCENARIOS } from './scenarios/index.js';
import { BUILTINS } from './strategies/registry.js';
import { validateStrategiesIsolated } from './strategies/validate.js';
import { plural } from './text.js';
import { VERSION } from './version.js';

/**
 * Load and construct every strategy before any machine thread starts, in a thread of its own
 * (src/strategies/validate.ts): bad input fails in one line (a StrategyLoadError, exit 2), a
 * file that never finishes loading is named after a timeout, and Ctrl-C is heard meanwhile.
 * False when interrupted.
 */
async function validateStrategies(refs: StrategyRef[], signal: AbortSignal): Promise<boolean> {
  try {
    await validateStrategiesIsolated(refs, { signal });
    return true;
  } catch (e) {
    if (e instanceof ValidationInterrupted) return false;
    throw e;
  }
}

/**
 * Read the run's `--irq-trace` once, before anything runs: a missing file, a malformed line (its
 * number named), a trace with no arrival or a map the machine cannot take costs one line, exit 2.
 */
async function readIrqTrace(config: ResolvedConfig): Promise<IrqTracePlan | undefined> {
  const trace = config.irq.trace;
  if (!trace) return undefined;
  try {
    return await loadIrqTrace(trace, config.cpus);
  } catch (e) {
    if (e instanceof IrqTraceError) throw new DeferlabError('E_IRQ_TRACE', `irq trace ${e.message}`, EXIT_BAD_INPUT);
    throw e;
  }
}

const INTERRUPTED_EARLY = 'interrupted before anything ran';

function statusOf(results: RunResults): number {
  if (results.status === 'completed') return EXIT_OK;
  if (results.status === 'interrupted') return EXIT_INTERRUPTED;
  return EXIT_RUN_FAILED;
}

function describeError(results: RunResults): string {
  const e = results.error;
  if (!e) return 'the run failed';
  const where = [
    e.strategy && `strategy ${e.strategy}`,
    e.thread && `thread ${e.thread}`,
    e.cpu !== undefined && `CPU ${e.cpu}`,
    e.context && `context ${e.context}`,
  ]
    .filter(Boolean)
    .join(', ');
  return `${e.message}${where ? ` [${where}]` : ''}`;
}

/**
 * A user's strategy file that failed before any trial of its own finished: the line points at
 * `deferlab check-strategy`, which runs its own checks alone (docs/strategies.md).
 */
function checkStrategyHint(config: ResolvedConfig, results: RunResults): string {
  const label = results.error?.strategy;
  const spec = config.strategies.find((s) => s.label === label);
  if (spec?.kind !== 'file' || spec.file === undefined) return '';
  const finished = results.points.some((p) => p.strategies.some((s) => s.label === label && s.trials.length > 0));
  if (finished) return '';
  // With its options, so that the command checks the strategy as this run ran it.
  return `; to check the strategy alone: ${checkCommand(spec)}`;
}

/** Progress on stderr, only when stderr is a terminal: one line rewritten in place. */
function progressFor(io: CliIo): ((line: string) => void) | undefined {
  if (!io.isTTY) return undefined;
  return (line: string) => io.stderr(`\r\x1b[2K${line}`);
}

/** The value of the last `--out` on the command line (before `--`), if any. */
function outFlag(argv: readonly string[]): string | undefined {
  let given: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') break;
    if (a === '--out') given = argv[++i];
    else if (a.startsWith('--out=')) given = a.slice('--out='.length);
  }
  return given;
}

/**
 * Make the output directory and prove it writable, before anything runs: a path deferlab cannot
 * write costs one line (exit 2), not a run whose results are then lost. Returns the directories
 * made (removed again if the run never starts).
 */
export async function prepareOut(outDir: string, argv: readonly string[]): Promise<string[]> {
  try {
    return await prepareOutputDir(outDir);
  } catch (e) {
    if (!(e instanceof OutDirError)) throw e;
    const given = outFlag(argv);
    const what =
      given !== undefined
        ? '--out must name a directory deferlab can write'
        : 'the results directory must be one deferlab can write';
    const fix = given !== undefined ? e.problem.fix : `${e.problem.fix} with --out DIR`;
    throw new DeferlabError(
      'E_BAD_OPTION',
      `${what} (got ${formatValue(given ?? outDir)}, ${e.problem.detail}); ${fix}`,
      e.exitStatus,
    );
  }
}

/** The message of an error writing the results (ERR_RESULTS_WRITE), or undefined for any other error. */
function writeFailure(e: unknown): string | undefined {
  if (!(e instanceof ReportError) || e.code !== 'ERR_RESULTS_WRITE') return undefined;
  return (e.message.split('\n')[0] ?? '').trim() || 'could not write the results';
}

/** A ReportError about reading results (missing, not deferlab's, another schemaVersion, invalid). */
function isResultsError(e: unknown): boolean {
  const code = String((e as { code?: unknown } | undefined)?.code ?? '');
  return code.startsWith('ERR_RESULTS_') && code !== 'ERR_RESULTS_WRITE';
}

export function makeDeps(signal: AbortSignal, argv: string[]): CliDeps {
  const run = async (config: ResolvedConfig, io: CliIo): Promise<number> => {
    const irqTrace = await readIrqTrace(config);
    if (!(await validateStrategies(strategyRefs(config), signal))) {
      sayStopped(io, 'interrupted', INTERRUPTED_EARLY);
      return EXIT_INTERRUPTED;
    }
    const reused = config.outDir ? existsSync(join(config.outDir, RESULTS_JSON)) : false;
    const created = config.outDir ? await prepareOut(config.outDir, argv) : [];
    if (reused) io.stderr(`deferlab: ${config.outDir} already holds a run's results: this run replaces them\n`);
    const estimate = estimateLine(config);
    if (estimate) io.stderr(`${estimate}\n`);
    const whole = wholeTrialsLine(config);
    if (whole) io.stderr(`${whole}\n`);
    const progress = progressFor(io);
    const timeline = timelineCollectorFor(config);
    let results: RunResults;
    try {
      results = await runExperiment(config, {
        progress,
        signal,
        command: ['deferlab', ...argv],
        timeline,
        ...(irqTrace ? { irqTrace } : {}),
      });
    } catch (e) {
      if (progress) io.stderr('\r\x1b[2K');
      await removeIfEmpty(created); // nothing was measured: leave no empty directory behind
      if (e instanceof MachineFaultError) {
        const f = e.fault;
        const where = [f.strategy && `strategy ${f.strategy}`, `thread ${f.thread}`].filter(Boolean).join(', ');
        throw new DeferlabError(
          e.exitStatus === EXIT_BAD_INPUT ? 'E_BAD_OPTION' : 'E_RUN_FAILED',
          `${f.message} [${where}]`,
          e.exitStatus,
        );
      }
      throw e;
    }
    if (progress) io.stderr('\r\x1b[2K');
    const proseWidth = proseWidthOf(process.stdout);
    io.stdout(`${renderTable(results, { wide: config.wide, proseWidth })}\n`);
    if (results.explain)
      io.stdout(`\n${renderExplain(inRunOrder(results.explain, results), results.baseline, results.sweep)}\n`);
    let writeFailed = false;
    if (config.outDir) {
      try {
        const paths = await writeResults(config.outDir, results);
        const said = `results: ${config.outDir} (${plural(paths.length, 'file')}: ${outputFileList(paths)})`;
        io.stdout(`${wrapProse(said, proseWidth).join('\n')}\n`);
        if (timeline) io.stdout(`${wrapProse(await writeTimeline(config.outDir, timeline), proseWidth).join('\n')}\n`);
      } catch (e) {
        // The table is printed above; writeResults saved a copy of results.json elsewhere if
        // it could, and its message says where.
        const message = writeFailure(e);
        if (message === undefined) throw e;
        sayStopped(io, 'failed', message);
        writeFailed = true;
      }
    }
    if (results.status === 'failed')
      sayStopped(io, 'failed', `run failed: ${describeError(results)}${checkStrategyHint(config, results)}`);
    if (results.status === 'interrupted') {
      const each = results.points.flatMap((p) => p.strategies.map((s) => s.trials.length));
      const finished = each.reduce((n, k) => n + k, 0);
      const where = config.outDir ? 'in the results' : 'in the table above';
      // Per strategy too, as the setup line counts them ("(3 of them finished: ...)").
      const lo = Math.min(...each);
      const hi = Math.max(...each);
      const per = each.length > 1 ? ` (${lo === hi ? lo : `${lo}–${hi}`} per strategy)` : '';
      sayStopped(
        io,
        'interrupted',
        finished
          ? `interrupted; the ${finished} trials finished so far${per} are ${where}`
          : 'interrupted before any trial finished',
      );
    }
    const status = statusOf(results);
    return writeFailed && status === EXIT_OK ? EXIT_RUN_FAILED : status;
  };

  return {
    version: VERSION,
    run,
    async list(io) {
      const w = Math.max(...BUILTINS.map((b) => b.name.length));
      io.stdout('Strategies (built in; add your own with --strategy ./file.ts, see docs/strategies.md):\n');
      for (const b of BUILTINS) {
        const opts = b.optionKeys.length ? `  options: ${b.optionKeys.join(', ')}` : '';
        io.stdout(`  ${b.name.padEnd(w)}  ${b.cls.description ?? ''}${opts}\n`);
      }
      io.stdout('\nWorkloads:\n');
      io.stdout(
        "  tcp_lat   qperf's TCP latency test: a client and a server task ping-pong messages, each arriving as an interrupt\n",
      );
      io.stdout('  irq_only  background interrupts only (no application)\n');
      io.stdout(`\nKernel profiles (--kernel VERSION; default ${DEFAULT_KERNEL}; docs/architecture.md):\n`);
      for (const k of KERNEL_NAMES) io.stdout(`  ${k.padEnd(5)} ${KERNEL_PROFILES[k].summary}\n`);
      io.stdout('\nScenarios (deferlab scenario NAME; docs/scenarios.md):\n');
      for (const [name, s] of Object.entries(SCENARIOS)) io.stdout(`  ${name.padEnd(18)} ${s.summary}\n`);
      return EXIT_OK;
    },
    async checkStrategy(spec: StrategySpec, io) {
      const { checkStrategy, formatConformance } = await import('./conformance/index.js');
      const ref = strategyRef(spec);
      if (!(await validateStrategies([ref], signal))) {
        sayStopped(io, 'interrupted', INTERRUPTED_EARLY);
        return EXIT_INTERRUPTED;
      }
      // Ctrl-C stops waiting at once: the suite's verdict needs the whole run, so a partial one
      // means nothing (its machine ends with the process). A strategy it cannot load or set up
      // rejects with a StrategyLoadError (exit 2).
      const suite = checkStrategy(ref);
      suite.catch(() => {}); // settled later, if at all, after an interrupt
      const report = await Promise.race([suite, interrupted(signal)]);
      if (report === 'interrupted') {
        sayStopped(io, 'interrupted', 'interrupted; the conformance check stopped before its verdict');
        return EXIT_INTERRUPTED;
      }
      io.stdout(`${formatConformance(report)}\n`);
      return report.passed ? EXIT_OK : EXIT_RUN_FAILED;
    },
    async report(dir, io, opts = {}) {
      // A scenario's directory: what it printed, verdicts and all (keepScenarioText).
      const kept = scenarioText(dir);
      if (kept !== undefined) {
        io.stdout(kept);
        return EXIT_OK;
      }
      let rendered: Awaited<ReturnType<typeof reportFromDir>>;
      try {
        rendered = await reportFromDir(dir, { ...opts, proseWidth: proseWidthOf(process.stdout) });
      } catch (e) {
        // A missing, foreign or damaged results.json is bad input, not a failed run.
        if (e instanceof ReportError) throw new DeferlabError('E_BAD_OPTION', e.message, EXIT_BAD_INPUT);
        throw e;
      }
      const { paths, table, writeProblem, results } = rendered;
      io.stdout(`${table}\n`);
      // An --explain run's explanation, as the run printed it under its table.
      if (results.explain)
        io.stdout(`\n${renderExplain(inRunOrder(results.explain, results), results.baseline, results.sweep)}\n`);
      // The table is what was asked for; the files beside results.json are a courtesy.
      if (writeProblem) io.stderr(`deferlab: warning: ${writeProblem}; the table above is from results.json\n`);
      else io.stdout(`re-rendered ${paths.length} files in ${dir}\n`);
      return EXIT_OK;
    },
    async explain(dir, io) {
      let text: string;
      try {
        const results = await readResults(dir);
        const e = explainOf(results, join(dir, RESULTS_JSON));
        text = renderExplain(e, results.baseline, results.sweep);
      } catch (e) {
        // A missing, damaged or unexplained results.json is bad input, not a failed run.
        if (e instanceof ReportError) throw new DeferlabError('E_BAD_OPTION', e.message, EXIT_BAD_INPUT);
        throw e;
      }
      io.stdout(`${text}\n`);
      return EXIT_OK;
    },
    async compare(request, io) {
      const created = request.out ? await prepareOut(request.out, argv) : [];
      let inputs: CompareInput[];
      let model: CompareModel;
      let html: string | undefined;
      try {
        // Everything that reads the runs (and decodes their histograms) before anything is printed.
        inputs = await readCompareInputs(request.runs);
        model = compareRuns(inputs, { merge: request.merge, stages: request.stages });
        if (request.out) html = renderCompareHtml(model, inputs);
      } catch (e) {
        await removeIfEmpty(created);
        // A missing, foreign or damaged results file is bad input, not a failed run.
        if (isResultsError(e)) throw new DeferlabError('E_BAD_OPTION', (e as Error).message, 2);
        throw e;
      }
      io.stdout(
        request.json === '-'
          ? compareJson(model)
          : renderCompareTable(model, { proseWidth: proseWidthOf(process.stdout) }),
      );
      const written: string[] = [];
      try {
        if (request.json && request.json !== '-') written.push(await writeFileAtomic(request.json, compareJson(model)));
        if (request.out && html !== undefined) written.push(...(await writeCompareDir(request.out, model, html)));
      } catch (e) {
        throw new DeferlabError('E_RUN_FAILED', `could not write the comparison: ${errnoText(e)}`, EXIT_RUN_FAILED);
      }
      if (written.length) io.stderr(`comparison written: ${written.join(', ')}\n`);
      return EXIT_OK;
    },
    scenarios: SCENARIOS,
    async scenario(name, config, io) {
      const s = SCENARIOS[name];
      if (!s)
        throw new DeferlabError(
          'E_UNKNOWN_SCENARIO',
          `unknown scenario ${name} (known: ${Object.keys(SCENARIOS).join(', ')})`,
          2,
        );
      if (!(await validateStrategies(strategyRefs(config), signal))) {
        sayStopped(io, 'interrupted', INTERRUPTED_EARLY);
        return EXIT_INTERRUPTED;
      }
      if (config.outDir) await prepareOut(config.outDir, argv);
      // Did the scenario already say why it stopped (failed or interrupted)? Then it needs no second line.
      let saidWhy = false;
      // What the scenario prints (its tables and VERDICT lines), kept for SCENARIO_TXT.
      const printed: string[] = [];
      const sio: CliIo = {
        ...io,
        stdout: (text) => {
          printed.push(text);
          io.stdout(text);
        },
        onStop: (reason) => {
          saidWhy = true;
          io.onStop?.(reason);
        },
      };
      let code: number;
      try {
        code = await s.run({ config, io: sio, signal, argv });
        await keepScenarioText(config.outDir, name, argv, printed, io.stderr);
      } catch (e) {
        if (e instanceof MachineFaultError)
          throw new DeferlabError('E_RUN_FAILED', `${e.fault.message} [thread ${e.fault.thread}]`, e.exitStatus);
        const failed = writeFailure(e);
        if (failed !== undefined) throw new DeferlabError('E_RUN_FAILED', failed, EXIT_RUN_FAILED);
        throw e;
      }
      if ((code === EXIT_INTERRUPTED || signal.aborted) && !saidWhy) {
        const where = config.outDir ? ` and under ${config.outDir}` : '';
        sayStopped(io, 'interrupted', `interrupted; the trials finished so far are in the tables above${where}`);
      }
      return signal.aborted && code === EXIT_OK ? EXIT_INTERRUPTED : code;
    },
    async demo(config, io) {
      return runDemo(config, io, signal);
    },
  };
}

/** Resolves with 'interrupted' when `signal` aborts. */
function interrupted(signal: AbortSignal): Promise<'interrupted'> {
  if (signal.aborted) return Promise.resolve('interrupted');
  return new Promise((res) => signal.addEventListener('abort', () => res('interrupted'), { once: true }));
}

/** Run the CLI in this process: returns the exit status. */
export interface StartOptions {
  /** See CliDeps.beforeCommand; this process's signal handlers are off while it runs. */
  beforeCommand?(command: string): Promise<void>;
}

export async function start(argv: string[], opts: StartOptions = {}): Promise<number> {
  const ac = new AbortController();
  // One count for the signals this process gets and, in the process started again by
  // src/harness/malloc.ts, the deliveries its parent passes on: a signal to the process group
  // reaches both and counts once (src/harness/signals.ts).
  const deliveries = new SignalDeliveries();
  let handled = 0;
  const onCount = (count: number) => {
    if (count <= handled) return; // a copy of a delivery already counted
    handled = count;
    if (count > 1) {
      // A second Ctrl-C: leave now, saying what is lost.
      process.stderr.write('\ndeferlab: interrupted twice: leaving at once; results not yet written are lost\n');
      removeTempsInFlight(); // a file half written is lost too: no <file>.tmp-<pid> left beside the others
      process.exit(EXIT_INTERRUPTED);
    }
    ac.abort();
  };
  const onOwn = (signal: NodeJS.Signals) => onCount(deliveries.own(signal));
  const onForwarded = () => onCount(deliveries.forwarded());
  const forwarded = isReexecChild() ? [FORWARD_SIGNAL] : [];
  const listen = () => {
    for (const s of STOP_SIGNALS) process.on(s, onOwn);
    for (const s of forwarded) process.on(s, onForwarded);
  };
  const unlisten = () => {
    for (const s of STOP_SIGNALS) process.off(s, onOwn);
    for (const s of forwarded) process.off(s, onForwarded);
  };
  listen();
  let saidInterrupted = false;
  const io: CliIo = {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    onStop: (reason) => {
      if (reason === 'interrupted') saidInterrupted = true;
    },
    isTTY: !!process.stderr.isTTY,
    cwd: process.cwd(),
    env: process.env,
  };
  // A parent that starts the command again (src/harness/malloc.ts) passes signals on itself and
  // never comes back: its own handlers must not count them too (a second Ctrl-C would exit it).
  const beforeCommand = opts.beforeCommand
    ? async (command: string) => {
        unlisten();
        try {
          await opts.beforeCommand?.(command);
        } finally {
          listen();
        }
      }
    : undefined;
  const code = await main(argv, { ...makeDeps(ac.signal, argv), ...(beforeCommand ? { beforeCommand } : {}) }, io);
  unlisten();
  // A command that finished its work although a signal came late (after the last trial) says
  // so with its own status: its results are complete.
  const status = code;
  // Every command that ends interrupted says so in one line (the commands say more when they can).
  if (status === EXIT_INTERRUPTED && !saidInterrupted) process.stderr.write('deferlab: interrupted\n');
  return status;
}

export { EXIT_BAD_INPUT };
