/**
 * The `--help` texts: what each command does, every option with its range and default, worked
 * examples, and the exit statuses. The option list is generated from the flag table
 * (config/flags.ts), so it cannot drift from what the parser accepts.
 */
import { EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_RUN_FAILED } from '../config/errors.js';
import { CONFIG_FLAGS } from '../config/flags.js';
import type { CommandName } from './args.js';

const COLUMN = 26;
const WIDTH = 96;
const INDENT = ' '.repeat(COLUMN);

/** Word-wrap `text` into lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** `  left      text`, the text wrapped and indented to the second column. */
function row(left: string, text: string): string {
  const head = `  ${left}`;
  const body = wrap(text, WIDTH - COLUMN).join(`\n${INDENT}`);
  return head.length < COLUMN ? `${head.padEnd(COLUMN)}${body}` : `${head}\n${INDENT}${body}`;
}

function configOptions(): string {
  const lines = CONFIG_FLAGS.map((f) => {
    const left = f.value ? `${f.flag} ${f.value}` : f.flag;
    const limits = [f.accepts, f.default ? `default: ${f.default}` : ''].filter(Boolean).join('; ');
    const more = limits
      ? `\n${wrap(limits, WIDTH - COLUMN)
          .map((l) => INDENT + l)
          .join('\n')}`
      : '';
    return row(left, f.help) + more;
  });
  lines.push(
    row(
      '--config FILE',
      'read settings from a JSON file (field names in docs/cli.md); flags override the file, the file overrides the defaults',
    ),
  );
  return lines.join('\n');
}

const GLOBAL_OPTIONS = [
  row('-h, --help', "show help (after a command: that command's help)"),
  row('-V, --version', 'print the version'),
].join('\n');

const EXAMPLES = {
  run: [
    ['deferlab', 'compare every built-in strategy on 2 CPUs under tcp_lat, against inline'],
    ['deferlab -oo msg_size:4K:1024K:*2', 'the same at 9 message sizes, 4K to 1M (qperf sweep syntax)'],
    ['deferlab --strategy ./my-strategy.ts --strategy inline', 'your strategy file against the inline baseline'],
    ['deferlab --cpus 4 --workload irq_only --irq-rate 100k --irq-pattern bursts', 'interrupts only, in bursts'],
  ],
  'check-strategy': [
    ['deferlab check-strategy ./my-strategy.ts --option batch=8', 'check a strategy file before comparing it'],
  ],
  report: [['deferlab report deferlab-results/20250101-120000', "print a finished run's report again"]],
  scenario: [['deferlab scenario cpu-hog', 'a nice -20 hog on CPU 0 against a bound kworker (list shows all)']],
  demo: [['deferlab demo', 'a short guided run']],
  list: [['deferlab list', 'what can be compared']],
  help: [['deferlab help run', "the run command's options"]],
} satisfies Record<CommandName, [string, string][]>;

function examples(...commands: CommandName[]): string {
  return commands
    .flatMap((c) => EXAMPLES[c])
    .map(([cmd, what]) => `  ${cmd}\n      ${what}`)
    .join('\n');
}

const EXIT_STATUS = [
  `  ${EXIT_OK}    done`,
  `  ${EXIT_RUN_FAILED}    the run failed (a worker died, a strategy threw, the watchdog fired)`,
  `  ${EXIT_BAD_INPUT}    bad input (flag, config file, strategy spec): nothing was run`,
  `  ${EXIT_INTERRUPTED}  interrupted (Ctrl-C)`,
].join('\n');

const SPEC_SYNTAX = `Strategy SPEC: a built-in NAME or a FILE path (.ts, .js, .mjs, .mts; relative to the
current directory), optionally followed by :key=value,... (true/false and numbers are
typed). Example: --strategy timer:deferrable=true --strategy ./mine.ts:batch=8`;

const SWEEP_SYNTAX = `Sweep SPEC (qperf -oo): NAME:MIN:MAX:STEP with STEP *N (multiply, N > 1) or +N (add),
or NAME:V1,V2,... NAME is msg_size (4K = 4096), irq_rate (20k = 20000) or trigger;
at most 64 points.`;

const COMMAND_HELP: Record<CommandName, () => string> = {
  run: () => `Usage: deferlab [run] [OPTIONS]

Compare deferral strategies. Each trial runs the workload on emulated CPUs (one worker
thread each) while interrupts arrive; each interrupt's work is deferred by the strategy under
test. Trials interleave the strategies (A B C A B C ...) and repeat; results (latency
percentiles, deferral delay, entropy credited, counters) are compared against the baseline
and written to the output directory.

Options:
${configOptions()}
${GLOBAL_OPTIONS}

${SPEC_SYNTAX}

${SWEEP_SYNTAX}

Examples:
${examples('run')}

Exit status:
${EXIT_STATUS}
`,
  list: () => `Usage: deferlab list

List the built-in strategies (with the kernel mechanism each one emulates and its options)
and the named scenarios.

Options:
${GLOBAL_OPTIONS}
`,
  'check-strategy': () => `Usage: deferlab check-strategy FILE [--option KEY=VALUE]...

Load a strategy (a .ts/.js/.mjs/.mts FILE, or a built-in NAME) and run the conformance suite
every strategy must pass: the work runs exactly once, a second queue while pending returns
false, shutdown is honoured. Run this before comparing your own strategy.

Options:
${row('--option KEY=VALUE', 'an option passed to the strategy (repeatable); same as FILE:KEY=VALUE')}
${GLOBAL_OPTIONS}

Examples:
${examples('check-strategy')}

Exit status: ${EXIT_OK} passed, ${EXIT_RUN_FAILED} a check failed, ${EXIT_BAD_INPUT} bad input.
`,
  report: () => `Usage: deferlab report DIR

Print the report of a finished run from its results directory (the DIR a run wrote, holding
results.json).

Options:
${GLOBAL_OPTIONS}

Examples:
${examples('report')}
`,
  scenario: () => `Usage: deferlab scenario NAME [OPTIONS]

Run a named experiment: a preset of settings (and, for some, an extra task such as a CPU hog).
Options and --config override the scenario's settings. 'deferlab list' names the scenarios.

Options: those of 'deferlab run' (see deferlab run --help).

Examples:
${examples('scenario')}
`,
  demo: () => `Usage: deferlab demo [OPTIONS]

A short run, narrated: what an interrupt, a deferral and a wakeup cost on this machine, and
how the strategies differ. Accepts the options of 'deferlab run'.

Examples:
${examples('demo')}
`,
  help: () => `Usage: deferlab help [COMMAND]

Show the help, or the help of COMMAND (${['run', 'list', 'check-strategy', 'report', 'scenario', 'demo'].join(', ')}).
`,
};

/** The general help: every command, the run options, examples, exit statuses. */
function generalHelp(): string {
  return `deferlab: benchmark the Linux kernel's deferred-work mechanisms (workqueue, tasklet,
timer, irq_work, ...) on emulated CPUs: worker threads on shared memory running random.c's
interrupt path and qperf's tcp_lat ping-pong.

Usage: deferlab [COMMAND] [OPTIONS]

Commands:
${row('run', 'compare deferral strategies (the default command)')}
${row('list', 'list the built-in strategies and the scenarios')}
${row('check-strategy FILE', 'run the conformance suite on a strategy file')}
${row('report DIR', "print a finished run's report")}
${row('scenario NAME', 'run a named experiment, e.g. cpu-hog')}
${row('demo', 'a short guided run')}
${row('help [COMMAND]', "this text, or a command's own")}

Options of run, scenario and demo:
${configOptions()}

Global options:
${GLOBAL_OPTIONS}

${SPEC_SYNTAX}

${SWEEP_SYNTAX}

Examples:
${examples('run', 'check-strategy', 'report', 'scenario')}

Exit status:
${EXIT_STATUS}

Every flag and config-file field: docs/cli.md.
`;
}

/** Help for one command, or the general help. */
export function helpText(topic?: CommandName): string {
  return topic ? COMMAND_HELP[topic]() : generalHelp();
}
