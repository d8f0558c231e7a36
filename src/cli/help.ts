/**
 * The `--help` texts: what each command does, every option with its range and default, worked
 * examples, and the exit statuses. The option list is generated from the flag table
 * (config/flags.ts), so it cannot drift from what the parser accepts.
 */

import { CONFIG_FLAGS, flagForPath } from '../config/flags.js';
import { type CommandRules, DEMO_RULES, noTcpLat, RUN_RULES } from '../config/rules.js';
import type { PartialConfig } from '../config/schema.js';
import { BUILTIN_STRATEGY_NAMES } from '../config/strategy-spec.js';
import { EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_RUN_FAILED } from '../errors.js';
import { outputFiles, REPORT_FORMATS } from '../report/run/formats.js';
import { STAGE_NAMES } from '../report/types.js';
import { wrapWords } from '../text.js';
import { COMMANDS, type CommandName } from './args.js';

/** The scenarios as help describes them (the CLI's `deps.scenarios`). */
export type HelpScenarios = Readonly<
  Record<
    string,
    {
      readonly summary: string;
      readonly rules?: CommandRules;
      readonly config?: PartialConfig;
      readonly sweeps?: readonly string[];
      readonly untilOn?: string;
    }
  >
>;

const COLUMN = 26;
const WIDTH = 96;
const INDENT = ' '.repeat(COLUMN);

/** `  left      text`, the text wrapped and indented to the second column. */
function row(left: string, text: string): string {
  const head = `  ${left}`;
  const body = wrapWords(text, WIDTH - COLUMN).join(`\n${INDENT}`);
  return head.length < COLUMN ? `${head.padEnd(COLUMN)}${body}` : `${head}\n${INDENT}${body}`;
}

/** The config flags with their help; those `rules` fixes (a command's refused settings) left out. */
function configOptions(rules?: CommandRules): string {
  const fixed = Object.keys(rules?.fixed ?? {});
  const lines = CONFIG_FLAGS.filter((f) => !fixed.includes(f.path)).map((f) => {
    const left = f.value ? `${f.flag} ${f.value}` : f.flag;
    const limits = [f.accepts, f.default ? `default: ${f.default}` : ''].filter(Boolean).join('; ');
    const more = limits
      ? `\n${wrapWords(limits, WIDTH - COLUMN)
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
    [
      'deferlab --strategy inline --strategy workqueue --control --until 3',
      'an A/A copy of inline as the noise floor; rounds added until every Δ-mean interval is ±3%',
    ],
    ['deferlab --cpus 4 --workload irq_only --irq-rate 100k --irq-pattern bursts', 'interrupts only, in bursts'],
  ],
  'check-strategy': [
    ['deferlab check-strategy ./my-strategy.ts --option batch=8', 'check a strategy file before comparing it'],
    ['deferlab check-strategy ./my-strategy.ts:batch=8', 'the same, options after the colon'],
    ['deferlab check-strategy timer:deferrable=true', 'check a built-in with its options'],
  ],
  report: [['deferlab report deferlab-results/20250101-120000', "print a finished run's report again"]],
  explain: [
    [
      'deferlab run --strategy inline --strategy workqueue --explain --out r',
      'a run whose exchanges are explained; the table ends with what made each strategy slower',
    ],
    ['deferlab explain r', "that run's explanation again, from r/results.json"],
  ],
  compare: [
    ['deferlab compare results/laptop results/server', 'two runs side by side, ratios to the laptop'],
    [
      'deferlab compare a b c --merge --stage one_way --out cmp',
      "one_way only, plus the three runs' histograms added; cmp/report.html overlays their spectra",
    ],
    ['deferlab compare a b --json - | jq .metaDifferences', 'the comparison as JSON on stdout'],
  ],
  scenario: [
    ['deferlab scenario cpu-hog', 'a nice -20 hog on CPU 0 against a bound kworker'],
    ['deferlab scenario cpu-hog --trials 10 --duration 3s', 'the same, longer: tighter verdicts'],
    [
      'deferlab scenario cpu-hog --no-control --until off',
      'quicker: exactly --trials rounds, no A/A copy of the baseline',
    ],
  ],
  demo: [['deferlab demo --cpus 4 --irq-rate 50k', 'inline on 4 CPUs under 50k interrupts/s each, then the counters']],
  list: [['deferlab list', 'what can be compared']],
  help: [['deferlab help run', "the run command's options"]],
} satisfies Record<CommandName, [string, string][]>;

function examples(...commands: CommandName[]): string {
  return exampleRows(commands.flatMap((c) => EXAMPLES[c]));
}

/** Examples as the help prints them: the command, and under it what it does. */
function exampleRows(rows: readonly (readonly [string, string])[]): string {
  return rows.map(([cmd, what]) => `  ${cmd}\n      ${what}`).join('\n');
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

/** The flags of the settings a command does not take, tcp_lat's and the NIC's (noTcpLat) as one item. */
function notTaken(rules: CommandRules | undefined): string {
  const fields = Object.keys(rules?.fixed ?? {});
  const tcpLat = Object.keys(noTcpLat(''));
  const allTcpLat = tcpLat.every((f) => fields.includes(f));
  const items = fields
    .filter((f) => !(allTcpLat && tcpLat.includes(f)))
    .map((f) => (f === 'outDir' ? '--out' : (flagForPath(f) ?? f)));
  if (allTcpLat) items.push("tcp_lat's and the NIC's options (--msg-size, --nic, --instances, ...)");
  if (rules?.sweeps) items.push(`a --sweep of anything but ${rules.sweeps.params.join(' or ')}`);
  return items.length ? items.join(', ') : 'nothing';
}

/**
 * How a scenario resolves its verdicts by default (its preset's --control, --until and the cap):
 * `runs with --control, --until 20 (capped by --max-time 60s per sub-run)`; nothing without either.
 */
export function resolutionRow(config: PartialConfig | undefined, untilOn?: string): string | undefined {
  const until = config?.until === undefined || config.until === null ? undefined : config.until;
  if (!config?.control && until === undefined) return undefined;
  const parts: string[] = [];
  const drop: string[] = [];
  if (config?.control) {
    parts.push('--control');
    drop.push('--no-control');
  }
  if (until !== undefined) {
    const cap =
      config?.maxTimeMs !== undefined ? ` (capped by --max-time ${config.maxTimeMs} per sub-run and point)` : '';
    parts.push(`--until ${until}${untilOn ? ` on ${untilOn}` : ''}${cap}`);
    drop.push('--until off');
  }
  return `runs with ${parts.join(', ')}; ${drop.join(', ')} to drop`;
}

/** Each scenario (or the one named `only`): summary, the options it does not take, its defaults, its sweeps. */
function scenarioRows(scenarios: HelpScenarios | undefined, only?: string): string {
  if (!scenarios || Object.keys(scenarios).length === 0) return "  (none; 'deferlab list' names them)";
  return Object.entries(scenarios)
    .filter(([name]) => only === undefined || name === only)
    .map(([name, s]) => {
      const needs = s.rules?.minCpus ? `; needs ${s.rules.minCpus.count}+ CPUs` : '';
      const resolution = resolutionRow(s.config, s.untilOn);
      return [
        row(name, s.summary),
        row('', `not: ${notTaken(s.rules)}${needs}`),
        ...(resolution ? [row('', resolution)] : []),
        ...(s.sweeps ?? []).map((line) => row('', line)),
      ].join('\n');
    })
    .join('\n');
}

/** `scenario NAME --help`: the scenario's own rows, or undefined for a name it does not know. */
function oneScenario(scenarios: HelpScenarios | undefined, name: string | undefined): string | undefined {
  if (name === undefined || !scenarios || !Object.hasOwn(scenarios, name)) return undefined;
  const others = Object.keys(scenarios).filter((n) => n !== name);
  return `Scenario:
${scenarioRows(scenarios, name)}
${others.length ? `\n${wrapWords(`Others: ${others.join(', ')} ('deferlab scenario --help' lists them all).`, WIDTH).join('\n')}\n` : ''}`;
}

/**
 * The scenario help's examples: cpu-hog's, or, for `scenario NAME --help`, the same for NAME (the
 * quicker form only with what NAME runs with by default: --no-control, --until off).
 */
function scenarioExamples(scenarios: HelpScenarios | undefined, name: string | undefined): string {
  const sc = name !== undefined && scenarios && Object.hasOwn(scenarios, name) ? scenarios[name] : undefined;
  if (!sc || name === undefined) return examples('scenario');
  const quicker = [
    ...(sc.config?.control ? ['--no-control'] : []),
    ...(sc.config?.until !== undefined && sc.config.until !== null ? ['--until off'] : []),
  ];
  const rows: [string, string][] = [
    [`deferlab scenario ${name}`, 'at its defaults'],
    [`deferlab scenario ${name} --trials 10 --duration 3s`, 'the same, longer: tighter verdicts'],
    ...(quicker.length
      ? [
          [
            `deferlab scenario ${name} ${quicker.join(' ')}`,
            `quicker: ${quicker.includes('--until off') ? 'exactly --trials rounds' : 'the same rounds'}${quicker.includes('--no-control') ? ', no A/A copy of the baseline' : ''}`,
          ] as [string, string],
        ]
      : []),
  ];
  return exampleRows(rows);
}

/** The flags demo takes: every config flag but those DEMO_RULES fixes (--no-output it allows). */
/** A recorded trace's flags: every command with rules refuses them (src/config/irq-trace.ts). */
const isIrqTraceFlag = (f: { path: string }) => f.path.startsWith('irq.trace');

function demoFlags(): string[] {
  const fixed = Object.entries(DEMO_RULES.fixed ?? {});
  return CONFIG_FLAGS.filter((f) => {
    if (isIrqTraceFlag(f)) return false;
    const rule = fixed.find(([path]) => path === f.path)?.[1];
    // A switch to what the demo does anyway (--no-control: it runs no control) says nothing.
    if (rule && f.flag === '--no-control') return false;
    return !rule || ('allows' in rule && f.sets === rule.allows);
  }).map((f) => f.flag);
}

const COMMAND_HELP: Record<CommandName, (scenarios?: HelpScenarios, scenario?: string) => string> = {
  run: () => `Usage: deferlab [run] [OPTIONS]

Compare deferral strategies. Each trial runs the workload on emulated CPUs (one worker
thread each) while interrupts arrive; each interrupt's work is deferred by the strategy under
test. Trials interleave the strategies in rounds (each round a seeded, balanced order: C A B,
B C A, ...) and repeat; results (latency percentiles, deferral delay, entropy credited,
counters) are compared against the baseline with 95% intervals for the mean and the tail, and
written to the output directory.

Files in the output directory (--out DIR; docs/results.md):
${outputFiles()
  .map(([listed, holds]) => row(listed, holds))
  .join('\n')}

Options:
${configOptions(RUN_RULES)}
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
and the named scenarios. A strategy file is not listed: a run shows its description in
report.html and results.json ('deferlab check-strategy FILE' checks it).

Options:
${GLOBAL_OPTIONS}
`,
  'check-strategy': () => `Usage: deferlab check-strategy FILE[:KEY=VALUE,...] [--option KEY=VALUE]...
       deferlab check-strategy NAME[:KEY=VALUE,...] [--option KEY=VALUE]...

Load a strategy and run the conformance suite every strategy must pass: the work runs exactly
once, a second queue while pending returns false, shutdown is honoured. Run this before
comparing your own strategy.

${wrapWords(
  `FILE is a strategy file (.ts, .js, .mjs, .mts; relative to the current directory); NAME a built-in (${BUILTIN_STRATEGY_NAMES.join(', ')}). Its options follow a colon, as with --strategy (FILE:batch=8,eager=true), or come one per --option; true/false and numbers are typed.`,
  WIDTH - 4,
).join('\n')}

Options:
${row('--option KEY=VALUE', 'an option for the strategy (repeatable): --option batch=8 is FILE:batch=8; each KEY once in all')}
${GLOBAL_OPTIONS}

Examples:
${examples('check-strategy')}

Exit status: ${EXIT_OK} passed, ${EXIT_RUN_FAILED} a check failed, ${EXIT_BAD_INPUT} bad input.
`,
  report: () => `Usage: deferlab report DIR [--wide]

${wrapWords(
  'Print the report of a finished run from its results directory (the DIR a run wrote, holding results.json), ' +
    `and render its files again from results.json: ${REPORT_FORMATS.map((f) => f.listed).join(', ')}. ` +
    "Given a scenario's directory, print what the scenario printed (its scenario.txt, VERDICT lines included).",
  WIDTH - 4,
).join('\n')}

Options:
${row('--wide', 'print every column of the summary table (by default it fits 120 columns)')}
${GLOBAL_OPTIONS}

Examples:
${examples('report')}
`,
  compare: () => `Usage: deferlab compare DIR DIR... [--merge] [--stage STAGE]... [--json FILE] [--out DIR]

Put the results of several runs side by side (from one machine or several): per strategy
(matched by label) and stage, the percentiles p50, p90, p99, p99.9, max and mean in µs, each
with its ratio to the first run's (×1.10 = 10% higher); then the metadata that differs between
the runs (Node, host cores, CPU model, options such as HZ or the interrupt rate, any other field
present), absent fields shown as (absent). Each DIR is a run's results directory, or the path of
its results.json; results of another schemaVersion are refused.

Options:
${row('--merge', "also add the runs' HdrHistograms per strategy and stage and show the merged percentiles (all runs' samples pooled)")}
${row('--stage STAGE', `only this stage (repeatable): ${STAGE_NAMES.join(', ')}; default: every stage with samples`)}
${row('--json FILE', 'write the comparison as JSON to FILE; - writes it to stdout instead of the table')}
${row('--out DIR', "write DIR/report.html (each strategy and stage's percentile spectra, one line per run) and DIR/compare.json; not a run's own results directory")}
${GLOBAL_OPTIONS}

Examples:
${examples('compare')}

Exit status: ${EXIT_OK} done, ${EXIT_BAD_INPUT} bad input (fewer than 2 runs, a missing or damaged results.json,
another schemaVersion, an unknown stage).
`,
  scenario: (
    scenarios,
    scenario,
  ) => `Usage: deferlab scenario ${scenario && scenarios?.[scenario] ? scenario : 'NAME'} [OPTIONS]

Run a named experiment: a seed thread, reproduced, ending with one VERDICT line per expectation
(reproduced, not reproduced, contradicted, or inconclusive when the data cannot decide). Options
and --config override the scenario's settings (its trials, durations, rates), except the settings
a scenario chooses itself or has no use for: giving one of those is an error that says why.
Every sweep point runs on 2 machine boots, its --trials and --max-time split between them (at
least 2 trials a boot); verdicts over sweep points pool effect sizes with intervals.
docs/scenarios.md describes each scenario and what it measured.

${
  oneScenario(scenarios, scenario) ??
  `Scenarios (each with the options of 'deferlab run' it does not take, and what it sweeps):
${scenarioRows(scenarios)}
`
}
Options: those of 'deferlab run' (deferlab run --help), but for each scenario's "not" list.
Every scenario takes --trials, --duration, --warmup, --seed, --hz, --cpus, --watchdog, --out.
A scenario that "runs with" --control or --until does so unless told otherwise; docs/scenarios.md
says why each runs with what it does, and how long it runs at most.

Examples:
${scenarioExamples(scenarios, scenario)}
`,
  demo: () => `Usage: deferlab demo [OPTIONS]

Boot the emulated machine with the inline strategy and background interrupts only (no
application), run it for --duration (default 1s), and print its counters (interrupts, hand-offs,
mixes, wakeups, context switches, ...). A quick check that the machine works on this host; to
compare strategies, use 'deferlab run'.

Options: the machine's options of 'deferlab run' (deferlab run --help):
${wrapWords(`${demoFlags().join(', ')}, --config FILE.`, WIDTH - 2)
  .map((l) => `  ${l}`)
  .join('\n')}
${wrapWords(
  `Not: ${notTaken(DEMO_RULES)}, ${CONFIG_FLAGS.filter(isIrqTraceFlag)
    .map((f) => f.flag)
    .join(', ')}.`,
  WIDTH,
).join('\n')}

Examples:
${examples('demo')}
`,
  explain: () => `Usage: deferlab explain DIR

${wrapWords(
  'Print why each strategy of a finished run was as slow as it was: for its median and its slowest 1% ' +
    'of tcp_lat exchanges (one-way latency, as the table; in runs without tcp_lat, of its requests: ' +
    'each hand-off, and each request that found the work pending, until the run that served it started), ' +
    "the mean time spent in each cause along the exchange's critical path (wire, NIC moderation, hard IRQ, " +
    "the strategy's hand-off call, softirq NET_RX, waiting for ksoftirqd, behind a named task, context " +
    'switch, idle (wake-up), the deferred work, lock wait, the endpoint task copying, host stall, GC, ' +
    'other), and the ' +
    "difference to the baseline's, cause by cause. The causes of each exchange add up to its latency: " +
    'they come from the timeline records of every measured slice, not from averages. DIR is the results ' +
    'directory of a run made with --explain (its results.json holds the explain data); report.html ' +
    'draws the same as a stacked bar per strategy. Method and limits: docs/results.md.',
  WIDTH - 4,
).join('\n')}

${wrapWords(
  'Reading it: "behind kworker/0:0H" is time the CPU holding the exchange ran that task instead; ' +
    '"idle (wake-up)" is an idle CPU not yet running the work (halted: mostly the host waking its ' +
    'thread; polling: the loop noticing it); a span far longer than its work (a hard IRQ of milliseconds) is the host preempting ' +
    'that CPU thread, named "host stall" only where the run records host stalls. Compare a band ' +
    "with the table's count: exchanges begun before the slice that ended them are not explained.",
  WIDTH - 4,
).join('\n')}

Options:
${GLOBAL_OPTIONS}

Examples:
${examples('explain')}

Exit status: ${EXIT_OK} done, ${EXIT_BAD_INPUT} bad input (no such directory, a damaged results.json, a run made
without --explain).
`,
  help: () => `Usage: deferlab help [COMMAND]

Show the help, or the help of COMMAND (${COMMANDS.filter((c) => c !== 'help').join(', ')}).
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
${row('explain DIR', "why: a run's latency split by cause (made with --explain)")}
${row('compare DIR DIR...', 'runs (or machines) side by side: percentiles, ratios, what differs')}
${row('scenario NAME', 'reproduce a seed thread, e.g. cpu-hog (scenario --help lists them)')}
${row('demo', 'boot the machine briefly and print its counters')}
${row('help [COMMAND]', "this text, or a command's own")}

Options of run, scenario and demo:
${configOptions()}

Global options:
${GLOBAL_OPTIONS}

${SPEC_SYNTAX}

${SWEEP_SYNTAX}

Examples:
${examples('run', 'check-strategy', 'report', 'compare', 'scenario')}

Exit status:
${EXIT_STATUS}

Every flag and config-file field: docs/cli.md.
`;
}

/**
 * Help for one command, or the general help. `scenarios` feeds the scenario command's help;
 * `scenario`, a scenario's name (`scenario NAME --help`), narrows it to that one.
 */
export function helpText(topic?: CommandName, scenarios?: HelpScenarios, scenario?: string): string {
  return topic ? COMMAND_HELP[topic](scenarios, scenario) : generalHelp();
}
