/**
 * The CLI's entry: parse argv, resolve the config, hand it to a command, map errors to exit
 * statuses. The commands themselves (run, list, ...) are injected (`CliDeps`), and so is all
 * I/O (`CliIo`), so this module can be tested with fakes and never touches process.*.
 *
 * Errors: any error while reading the input (argv, config file, strategy specs) is one line on
 * stderr, `deferlab: <message>`, and exit status 2; a usage mistake adds a pointer to --help.
 * A command's DeferlabError keeps its own status; anything else a command throws is a failed
 * run (status 1), printed as one line; its stack only with DEFERLAB_DEBUG=1.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { checkBuiltinOptions } from '../config/checks.js';
import { badOption, badValue, closest, unknownScenario } from '../config/errors.js';
import { loadConfigFile } from '../config/load.js';
import { type CommandRules, type CommandRulesFor, DEMO_RULES, RUN_RULES } from '../config/rules.js';
import { type PartialConfig, type ResolvedConfig, resolveConfig } from '../config/schema.js';
import { parseOptionPairs, parseStrategySpec, type StrategySpec } from '../config/strategy-spec.js';
import { DeferlabError, EXIT_BAD_INPUT, EXIT_OK, EXIT_RUN_FAILED, Interrupted } from '../errors.js';
import { SCENARIO_TXT } from '../report/run/formats.js';
import { subRuns } from '../report/run/scenario-text.js';
import { STAGE_NAMES, type StageName } from '../report/types.js';
import { type ParsedCommand, parseArgv } from './args.js';
import { helpText } from './help.js';
import { checkOutDir, type OutputKind } from './out-dir.js';

export interface CliIo {
  /** Writes the text as given (include the newline). */
  stdout(s: string): void;
  stderr(s: string): void;
  isTTY: boolean;
  /** Relative paths on the command line and in the config resolve against this. */
  cwd: string;
  env: Record<string, string | undefined>;
  /**
   * Told, after the line is written, when a command said why it stopped short ({@link
   * sayStopped}): the composition root learns that a command explained an interruption from
   * this, never from the text (src/app.ts).
   */
  onStop?(reason: StopReason): void;
}

/** Why a command stopped short (or part of its work did): a signal, or a failure. */
export type StopReason = 'interrupted' | 'failed';

/** Say why a command stops short, in one line on stderr (`deferlab: <message>`), and tell `io.onStop`. */
export function sayStopped(io: CliIo, reason: StopReason, message: string): void {
  io.stderr(`deferlab: ${message}\n`);
  io.onStop?.(reason);
}

/** A named experiment: its settings sit above the defaults, below --config and the flags. */
export interface ScenarioPreset {
  readonly summary: string;
  readonly config: PartialConfig;
  /** The settings it does not take from the user, and the CPUs it needs (see config/rules.ts). */
  readonly rules?: CommandRules;
  /**
   * What it sweeps at its defaults, a line per part or sub-run, made from its own sweep definition
   * (its help shows them).
   */
  readonly sweeps?: readonly string[];
  /** Which part of it `--until` applies to, when not all (`part 2`): its help says so. */
  readonly untilOn?: string;
}

/** The commands, implemented by the engine. Each returns the exit status. */
export interface CliDeps {
  version: string;
  run(config: ResolvedConfig, io: CliIo): Promise<number>;
  list(io: CliIo): Promise<number>;
  checkStrategy(spec: StrategySpec, io: CliIo): Promise<number>;
  /** `opts.wide`: every column of the summary table (`report DIR --wide`). */
  report(dir: string, io: CliIo, opts?: { wide?: boolean }): Promise<number>;
  compare(request: CompareRequest, io: CliIo): Promise<number>;
  /** `deferlab explain DIR`: the critical-path table of a run made with --explain. */
  explain?(dir: string, io: CliIo): Promise<number>;
  scenario(name: string, config: ResolvedConfig, io: CliIo): Promise<number>;
  demo(config: ResolvedConfig, io: CliIo): Promise<number>;
  /**
   * Optional: the scenarios by name. When given, `scenario NAME` rejects unknown names (exit 2,
   * listing the known ones) and resolves the config with the preset as a layer.
   */
  scenarios?: Readonly<Record<string, ScenarioPreset>>;
  /**
   * Optional: called once a command's input is checked, just before it runs (the CLI starts
   * itself again there for the commands that boot machines, src/main.ts: bad input is refused by
   * the first process, at the cost of one).
   */
  beforeCommand?(command: ParsedCommand['command']): Promise<void>;
}

/** `deferlab compare`, its input checked: paths resolved against the working directory. */
export interface CompareRequest {
  /** `name`: as typed (what the table shows); `path`: resolved, a directory or a results file. */
  readonly runs: ReadonlyArray<{ readonly name: string; readonly path: string }>;
  readonly merge: boolean;
  readonly stages: readonly StageName[];
  /** Resolved; `-` for stdout. */
  readonly json?: string;
  /** Resolved. */
  readonly out?: string;
}

export const USAGE_HINT = "Run 'deferlab --help' for usage.";

function resolveFor(
  cmd: { flags: PartialConfig; configFile?: string },
  io: CliIo,
  preset?: { name: string; config: PartialConfig },
  rules?: CommandRulesFor,
  output?: OutputKind,
): ResolvedConfig {
  const file = cmd.configFile === undefined ? undefined : loadConfigFile(cmd.configFile, io.cwd);
  const config = resolveConfig({
    flags: cmd.flags,
    ...(file ? { file: file.data, fileName: file.name } : {}),
    ...(preset ? { preset } : {}),
    ...(rules ? { rules } : {}),
    cwd: io.cwd,
  });
  if (output && config.outDir !== null) {
    // Named as the user gave it: the flag, the config file's field, or the default directory.
    const fromFile = (file?.data as { outDir?: unknown } | undefined)?.outDir;
    const named =
      cmd.flags.outDir !== undefined && cmd.flags.outDir !== null
        ? { setting: '--out', given: cmd.flags.outDir }
        : file && typeof fromFile === 'string'
          ? { setting: `outDir in ${file.name}`, given: fromFile }
          : { given: config.outDir };
    checkOutDir(config.outDir, output, { ...named, example: 'deferlab-results/mine' });
  }
  return config;
}

function strategyToCheck(spec: string, options: readonly string[], cwd: string): StrategySpec {
  if (spec.trim() === '') {
    throw badOption(
      'check-strategy FILE',
      'must not be empty',
      spec,
      'give a strategy file or a built-in NAME, like deferlab check-strategy ./my-strategy.ts',
    );
  }
  const pairs = parseOptionPairs(options);
  if (!pairs.ok) throw badValue('--option', pairs.problem, options.join(' '));
  const parsed = parseStrategySpec(spec, cwd, options);
  if (!parsed.ok) throw badValue('check-strategy FILE', parsed.problem, spec);
  const given = options.length ? `${spec} --option ${options.join(' --option ')}` : spec;
  checkBuiltinOptions('check-strategy', given, parsed.value);
  return parsed.value;
}

/** Sub-runs named in one message, at most. */
const MAX_LISTED = 6;

/**
 * `report DIR`'s checks; `setting` names the argument in messages (`compare DIR` shares them): a
 * run's results directory (with results.json), or, where `scenarioOk` (report), a scenario's,
 * whose printed report it holds (SCENARIO_TXT).
 */
function resultsDir(dir: string, cwd: string, setting = 'report DIR', scenarioOk = false): string {
  if (dir.trim() === '') {
    throw badOption(
      setting,
      'must not be empty',
      dir,
      `give a run's results directory, like deferlab ${setting.split(' ')[0]} deferlab-results/20250101-120000`,
    );
  }
  const path = resolve(cwd, dir);
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    throw badOption(setting, 'must be an existing results directory', dir, undefined, `${path} does not exist`);
  }
  if (!isDir) {
    // `report DIR/results.json`: the directory that holds it is what was meant.
    const fix =
      basename(path) === 'results.json'
        ? `give the directory that holds it: deferlab ${setting.split(' ')[0]} ${dirname(dir) || '.'}`
        : undefined;
    throw badOption(setting, 'must be a results directory', dir, fix, `${path} is not a directory`);
  }
  if (!existsSync(join(path, 'results.json'))) {
    if (scenarioOk && existsSync(join(path, SCENARIO_TXT))) return path;
    const runs = subRuns(path);
    if (runs.length > 0) {
      // deferlab-results/ holds timestamped runs (show the newest); a scenario's directory, its sub-runs.
      const stamped = runs.every((r) => /^\d{8}-\d{6}$/.test(r));
      const shown = (stamped ? runs.slice(-MAX_LISTED) : runs.slice(0, MAX_LISTED)).map((r) => join(dir, r));
      const more = runs.length > MAX_LISTED ? ` (${runs.length} in all)` : '';
      throw badOption(
        setting,
        "must be one run's results directory",
        dir,
        `give one of ${stamped && more ? '…, ' : ''}${shown.join(', ')}${!stamped && more ? ', …' : ''}${more}`,
        stamped
          ? `which holds ${runs.length} runs' directories, not one run`
          : `which holds ${runs.length === 1 ? 'a run directory' : `${runs.length} run directories`} (a scenario's sub-runs, or runs of their own), not one run`,
      );
    }
    if (existsSync(join(path, 'ipi-storm.json'))) {
      throw badOption(
        setting,
        "must be a run's results directory, with a results.json",
        dir,
        `read ${join(dir, 'ipi-storm.json')}, or re-run the scenario for its table`,
        'which holds ipi-storm.json: the ipi-storm scenario writes no results.json',
      );
    }
  }
  return path;
}

/** One run given to compare: a results directory (checked as `report DIR` is) or a results file. */
function compareRun(given: string, cwd: string): { name: string; path: string } {
  const path = resolve(cwd, given);
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    // resultsDir says what is wrong
  }
  return { name: given, path: isFile ? path : resultsDir(given, cwd, 'compare DIR') };
}

/** A path given to --json or --out: not empty, and its parent directory must exist. */
function outputPath(flag: string, given: string, cwd: string, example: string): string {
  if (given.trim() === '') throw badOption(flag, 'must not be empty', given, `give a path, like ${flag} ${example}`);
  const path = resolve(cwd, given);
  let parentIsDir = false;
  try {
    parentIsDir = statSync(dirname(path)).isDirectory();
  } catch {
    // not there
  }
  if (!parentIsDir)
    throw badOption(
      flag,
      'must be a path in an existing directory',
      given,
      undefined,
      `${dirname(path)} does not exist`,
    );
  return path;
}

function compareRequest(cmd: Extract<ParsedCommand, { command: 'compare' }>, cwd: string): CompareRequest {
  const runs = cmd.runs.map((r) => compareRun(r, cwd));
  const stages = cmd.stages.map((st): StageName => {
    if ((STAGE_NAMES as readonly string[]).includes(st)) return st as StageName;
    const near = closest(st, STAGE_NAMES);
    throw badOption(
      '--stage',
      `must be one of ${STAGE_NAMES.join(', ')}`,
      st,
      near ? `did you mean ${near}?` : undefined,
    );
  });
  const json =
    cmd.json === undefined || cmd.json === '-' ? cmd.json : outputPath('--json', cmd.json, cwd, 'compare.json');
  if (json !== undefined && basename(json) === 'results.json')
    throw badOption(
      '--json',
      'must not be named results.json',
      cmd.json,
      'choose another name, like compare.json',
      "a run's results file would be replaced",
    );
  let out: string | undefined;
  if (cmd.out !== undefined) {
    out = outputPath('--out', cmd.out, cwd, 'compare-out');
    if (existsSync(join(out, 'results.json')))
      throw badOption(
        '--out',
        "must not be a run's results directory",
        cmd.out,
        'choose another directory',
        "which holds results.json: compare's report.html would replace the run's",
      );
    checkOutDir(out, 'compare', { setting: '--out', given: cmd.out, example: 'compare-out' });
  }
  return {
    runs,
    merge: cmd.merge,
    stages,
    ...(json === undefined ? {} : { json }),
    ...(out === undefined ? {} : { out }),
  };
}

/**
 * Everything that reads input, done before any command starts: returns the command to run.
 * Throws on bad input.
 */
function prepare(cmd: ParsedCommand, deps: CliDeps, io: CliIo): () => Promise<number> {
  switch (cmd.command) {
    case 'help':
      return async () => {
        io.stdout(helpText(cmd.topic, deps.scenarios, cmd.scenario));
        return EXIT_OK;
      };
    case 'version':
      return async () => {
        io.stdout(`deferlab ${deps.version}\n`);
        return EXIT_OK;
      };
    case 'run': {
      const config = resolveFor(cmd, io, undefined, { command: 'run', rules: RUN_RULES }, 'run');
      return () => deps.run(config, io);
    }
    case 'demo': {
      const config = resolveFor(cmd, io, undefined, { command: 'demo', rules: DEMO_RULES });
      return () => deps.demo(config, io);
    }
    case 'scenario': {
      let preset: { name: string; config: PartialConfig } | undefined;
      let rules: CommandRulesFor | undefined;
      if (deps.scenarios) {
        const found = Object.hasOwn(deps.scenarios, cmd.name) ? deps.scenarios[cmd.name] : undefined;
        if (!found) throw unknownScenario(cmd.name, Object.keys(deps.scenarios));
        preset = { name: cmd.name, config: found.config };
        if (found.rules) rules = { command: `scenario ${cmd.name}`, rules: found.rules };
      }
      const config = resolveFor(cmd, io, preset, rules, 'scenario');
      return () => deps.scenario(cmd.name, config, io);
    }
    case 'list':
      return () => deps.list(io);
    case 'check-strategy': {
      const spec = strategyToCheck(cmd.spec, cmd.options, io.cwd);
      return () => deps.checkStrategy(spec, io);
    }
    case 'report': {
      const dir = resultsDir(cmd.dir, io.cwd, 'report DIR', true);
      return () => deps.report(dir, io, cmd.wide ? { wide: true } : {});
    }
    case 'compare': {
      const request = compareRequest(cmd, io.cwd);
      return () => deps.compare(request, io);
    }
    case 'explain': {
      const dir = resultsDir(cmd.dir, io.cwd, 'explain DIR');
      return async () => (deps.explain ? deps.explain(dir, io) : EXIT_OK);
    }
  }
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n')[0] || err.name;
  return String(err);
}

function printError(err: unknown, io: CliIo, debug: boolean): void {
  if (err instanceof Interrupted) {
    sayStopped(io, 'interrupted', messageOf(err));
    return;
  }
  io.stderr(`deferlab: ${messageOf(err)}\n`);
  if (err instanceof DeferlabError && err.usage) io.stderr(`${USAGE_HINT}\n`);
  if (debug && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`);
}

/**
 * Run the CLI. `argv` excludes `node` and the script. Context: main thread. Returns the exit
 * status: 0 done, 1 run failed, 2 bad input (130, interrupted, is the caller's to return).
 */
export async function main(argv: string[], deps: CliDeps, io: CliIo): Promise<number> {
  const debug = Boolean(io.env.DEFERLAB_DEBUG);
  let command: () => Promise<number>;
  let name: ParsedCommand['command'];
  try {
    const parsed = parseArgv(argv, { scenarios: Object.keys(deps.scenarios ?? {}) });
    name = parsed.command;
    command = prepare(parsed, deps, io);
  } catch (err) {
    printError(err, io, debug);
    return err instanceof DeferlabError ? err.exitStatus : EXIT_BAD_INPUT;
  }
  try {
    await deps.beforeCommand?.(name);
    return await command();
  } catch (err) {
    printError(err, io, debug);
    if (err instanceof DeferlabError) return err.exitStatus;
    if (!debug) io.stderr('(set DEFERLAB_DEBUG=1 to see where it failed)\n');
    return EXIT_RUN_FAILED;
  }
}
