/**
 * The one catalogue of deferlab's errors: every error class, its stable code and the exit
 * status it stands for. Other modules build messages (src/config/errors.ts: bad input;
 * src/report/run/write.ts: results files) and throw these classes; `src/app.ts` maps them to exit
 * statuses by class, never by reading the message.
 *
 * Two families:
 * - {@link DeferlabError} and its subclasses are complete, one-line messages for the user. The
 *   CLI prints one as `deferlab: <message>` and exits with its `exitStatus`; no stack trace.
 * - The others ({@link MachineFaultError}, {@link KernelBug}, {@link OutDirError},
 *   {@link ReportError}, and IrqTraceError in src/irq/trace-file.ts) are facts the caller puts
 *   into words: `src/app.ts` adds where a fault happened, names the flag an output directory
 *   came from, or says a trace's problem is the irq trace's, then throws a DeferlabError.
 *   One that reaches the CLI unmapped is a failed run (exit 1) with a pointer to DEFERLAB_DEBUG.
 *
 * Codes are stable (tests and scripts may match on them); messages may be reworded.
 */

/** The run finished and its report was written. */
export const EXIT_OK = 0;
/** The run started but failed (a worker died, a strategy threw, the watchdog fired). */
export const EXIT_RUN_FAILED = 1;
/** Bad input: a flag, the config file, a strategy spec, a missing file. Nothing was run. */
export const EXIT_BAD_INPUT = 2;
/** Interrupted by SIGINT (128 + 2, the shell convention). */
export const EXIT_INTERRUPTED = 130;

export type ExitStatus = typeof EXIT_OK | typeof EXIT_RUN_FAILED | typeof EXIT_BAD_INPUT | typeof EXIT_INTERRUPTED;
/** The status an error ends the CLI with. */
export type ErrorExitStatus = Exclude<ExitStatus, typeof EXIT_OK>;

/** The codes of {@link DeferlabError}s. */
export type ErrorCode =
  | 'E_BAD_OPTION'
  | 'E_CONFLICT'
  | 'E_UNKNOWN_OPTION'
  | 'E_MISSING_VALUE'
  | 'E_UNEXPECTED_VALUE'
  | 'E_UNKNOWN_COMMAND'
  | 'E_MISSING_ARGUMENT'
  | 'E_UNEXPECTED_ARGUMENT'
  | 'E_CONFIG_NOT_FOUND'
  | 'E_CONFIG_UNREADABLE'
  | 'E_CONFIG_SYNTAX'
  | 'E_UNKNOWN_KEY'
  | 'E_UNKNOWN_SCENARIO'
  | 'E_RUN_FAILED'
  /** {@link StrategyLoadError} */
  | 'E_STRATEGY_LOAD'
  /** {@link StrategyOptionError} */
  | 'E_STRATEGY_OPTION'
  /** IrqTraceError, put into words: a missing, empty or malformed `--irq-trace` file (exit 2). */
  | 'E_IRQ_TRACE'
  /** {@link Interrupted} and its subclasses */
  | 'E_INTERRUPTED';

/** A message for the user, complete in one line; the CLI exits with `exitStatus`. */
export class DeferlabError extends Error {
  override readonly name: string = 'DeferlabError';
  readonly code: ErrorCode;
  readonly exitStatus: ErrorExitStatus;
  /** True when the mistake is in the command line: the CLI then points to `--help`. */
  readonly usage: boolean;

  constructor(code: ErrorCode, message: string, exitStatus: ErrorExitStatus, usage = false) {
    super(message);
    this.code = code;
    this.exitStatus = exitStatus;
    this.usage = usage;
  }
}

/**
 * A strategy cannot be used: its file is missing, does not load, exports no class, its
 * constructor threw, its claims are malformed, its setup() failed. The message names the file
 * (or the built-in) and the problem. Bad input: exit 2.
 */
export class StrategyLoadError extends DeferlabError {
  override readonly name = 'StrategyLoadError';
  constructor(message: string) {
    super('E_STRATEGY_LOAD', message, EXIT_BAD_INPUT);
  }
}

/** A built-in strategy was given an option it does not know, or a value it cannot take. Exit 2. */
export class StrategyOptionError extends DeferlabError {
  override readonly name = 'StrategyOptionError';
  constructor(message: string) {
    super('E_STRATEGY_OPTION', message, EXIT_BAD_INPUT);
  }
}

/** A signal (Ctrl-C, SIGTERM) stopped the work; what was measured is kept. Exit 130. */
export class Interrupted extends DeferlabError {
  override readonly name: string = 'Interrupted';
  constructor(message = 'interrupted') {
    super('E_INTERRUPTED', message, EXIT_INTERRUPTED);
  }
}

/** Machine.boot was interrupted (its signal fired): the threads are stopped. */
export class BootInterrupted extends Interrupted {
  override readonly name = 'BootInterrupted';
}

/** The strategies' validation thread was interrupted (src/strategies/validate.ts): nothing ran. */
export class ValidationInterrupted extends Interrupted {
  override readonly name = 'ValidationInterrupted';
}

/** What went wrong in a machine run: which thread, CPU, task and context, and how (src/machine/machine.ts). */
export interface MachineFault {
  thread: string;
  message: string;
  cpu: number;
  task: string;
  context: string;
  strategy?: string;
  kind: 'bad-input' | 'fault' | 'exit' | 'watchdog';
  stack?: string;
}

/**
 * The machine failed: a thread faulted or died, the watchdog fired, or a strategy failed to
 * load or set up on a machine thread (`fault.kind` 'bad-input', exit 2; otherwise exit 1).
 * The caller says where (strategy, thread) in its own words.
 */
export class MachineFaultError extends Error {
  override readonly name = 'MachineFaultError';
  readonly code = 'E_MACHINE_FAULT';
  readonly exitStatus: ErrorExitStatus;
  constructor(readonly fault: MachineFault) {
    super(fault.message);
    this.exitStatus = fault.kind === 'bad-input' ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
  }
}

/**
 * The emulated kernel's BUG(): an invariant of the kernel emulation broke (two owners of one
 * CPU, a full work list, a timer added twice, sleeping in atomic context). Thrown on a machine
 * thread, it becomes that thread's fault (a failed run, exit 1).
 */
export class KernelBug extends Error {
  override readonly name = 'KernelBug';
  readonly code = 'E_KERNEL_BUG';
  readonly exitStatus = EXIT_RUN_FAILED;
}

/** Why an output directory cannot be used: a phrase for after the value, and what to do. */
export interface OutDirProblem {
  /** The errno behind it (`ENOTDIR`, `EACCES`, ...), or `EEXIST` for an existing non-directory. */
  errno: string;
  /** Goes after the value: `which is a file`, `and /tmp/a is a file, not a directory`. */
  detail: string;
  /** What to do: `choose another path`. */
  fix: string;
}

/**
 * An output directory deferlab cannot make or write (src/report/outdir.ts). Bad input (exit 2):
 * the caller names the setting it came from (`--out`, or the default).
 */
export class OutDirError extends Error {
  override readonly name = 'OutDirError';
  readonly code = 'ERR_OUTPUT_DIR';
  readonly exitStatus = EXIT_BAD_INPUT;
  constructor(
    readonly path: string,
    readonly problem: OutDirProblem,
    options?: { cause?: unknown },
  ) {
    super(`${path} cannot hold the results (${problem.detail}); ${problem.fix}`, options);
  }
}

export type ReportErrorCode =
  | 'ERR_RESULTS_MISSING' // no results.json where one was expected
  | 'ERR_RESULTS_NOT_DEFERLAB' // not JSON, or JSON without deferlab's shape
  | 'ERR_RESULTS_SCHEMA_VERSION' // a deferlab results file of another schema version
  | 'ERR_RESULTS_INVALID' // deferlab's shape, but a field is wrong
  | 'ERR_RESULTS_WRITE'; // the output directory could not take the results (a copy may be elsewhere)

/**
 * A results directory could not be read or written (src/report/run/write.ts). Results a run could
 * not write (ERR_RESULTS_WRITE) fail the run (exit 1), and `rescuedTo` says where a copy of
 * results.json went, if anywhere; the other codes are a missing, foreign or damaged results.json,
 * bad input (exit 2). `deferlab report DIR` treats every ReportError as bad input: DIR is its
 * input, also when it cannot re-render into it.
 */
export class ReportError extends Error {
  override readonly name = 'ReportError';
  readonly exitStatus: ErrorExitStatus;
  rescuedTo?: string;
  constructor(
    readonly code: ReportErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.exitStatus = code === 'ERR_RESULTS_WRITE' ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
  }
}
