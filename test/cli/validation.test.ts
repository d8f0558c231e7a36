/**
 * One test per input rule, through main(): the exact one-line message on stderr, the pointer
 * to --help for command-line mistakes, exit status 2, and no command started.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliDeps, main } from '../../src/cli/main.js';
import { SCENARIOS } from '../../src/scenarios/index.js';
import { fakeIo } from '../fixtures/cli-io.js';

const cwd = mkdtempSync(join(tmpdir(), 'deferlab-validation-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
writeFileSync(join(cwd, 'my-strategy.ts'), 'export default class {}\n');
mkdirSync(join(cwd, 'other'));
writeFileSync(join(cwd, 'other', 'my-strategy.ts'), 'export default class {}\n');

function config(name: string, text: string): string {
  writeFileSync(join(cwd, name), text);
  return name;
}

async function cli(argv: string[], withScenarios = false) {
  const { io, stdout, stderr } = fakeIo({ cwd });
  let started = 0;
  const command = async () => {
    started++;
    return 0;
  };
  const deps: CliDeps = {
    version: '9.9.9',
    run: command,
    list: command,
    checkStrategy: command,
    report: command,
    compare: command,
    scenario: command,
    demo: command,
    ...(withScenarios ? { scenarios: SCENARIOS } : {}),
  };
  const status = await main(argv, deps, io);
  return { status, stdout: stdout(), stderr: stderr(), started };
}

const HINT = "Run 'deferlab --help' for usage.\n";

/** [what, argv, message] — a command-line mistake: message + the --help pointer. */
const FLAG_RULES: [string, string[], string][] = [
  ['cpus 0', ['--cpus', '0'], '--cpus must be an integer from 1 to 64 (got 0)'],
  ['cpus 65', ['--cpus', '65'], '--cpus must be an integer from 1 to 64 (got 65)'],
  ['cpus 1.5', ['--cpus', '1.5'], '--cpus must be an integer from 1 to 64 (got 1.5)'],
  ['cpus abc', ['--cpus', 'abc'], '--cpus must be an integer from 1 to 64 (got "abc")'],
  ['hz 200', ['--hz', '200'], '--hz must be one of the HZ values kernels use: 100, 250, 300, 1000 (got 200)'],
  ['duration 0', ['--duration', '0'], '--duration must be a duration from 50ms to 600s (got 0)'],
  [
    'duration 5 (seconds meant)',
    ['--duration', '5'],
    '--duration must be a duration from 50ms to 600s; a bare number is milliseconds: for seconds write 5s (got 5)',
  ],
  [
    'duration 5 parsecs',
    ['--duration', '5 parsecs'],
    '--duration must be a duration like 1500 (ms), 1500ms, 1.5s or 2min, from 50ms to 600s (got "5 parsecs")',
  ],
  ['duration too long', ['--duration', '11min'], '--duration must be a duration from 50ms to 600s (got "11min")'],
  [
    'warmup negative',
    ['--warmup=-1s'],
    '--warmup must be a duration like 1500 (ms), 1500ms, 1.5s or 2min, from 0ms to 60s (got "-1s")',
  ],
  ['trials 0', ['--trials', '0'], '--trials must be an integer from 1 to 1000 (got 0)'],
  [
    'unknown strategy',
    ['--strategy', 'worqueue'],
    '--strategy must be a built-in strategy (inline, workqueue, tasklet, timer, unbound, irq_work, bh_workqueue, inline_trylock) ' +
      'or a path to a .ts, .js, .mjs or .mts file (got "worqueue"); ' +
      'did you mean workqueue? (a file path needs a / or one of those extensions)',
  ],
  [
    'missing strategy file',
    ['--strategy', './nope.ts'],
    `--strategy must name an existing strategy file (got "./nope.ts", resolved to ${join(cwd, 'nope.ts')}, which does not exist)`,
  ],
  [
    'strategy file with another extension',
    ['--strategy', './strategy.py'],
    '--strategy must be a strategy file ending in .ts, .js, .mjs or .mts (got "./strategy.py")',
  ],
  [
    'strategy option without a value',
    ['--strategy', 'timer:deferrable'],
    '--strategy must give options as key=value pairs separated by commas, like timer:deferrable=true ' +
      '(got "timer:deferrable", "deferrable" is not key=value)',
  ],
  [
    'duplicate strategy',
    ['--strategy', 'workqueue', '--strategy', 'tasklet', '--strategy', 'workqueue'],
    '--strategy must not name the same strategy twice (got "workqueue", workqueue is already in the list); ' +
      'remove one, or give them different options',
  ],
  [
    'duplicate strategy, options in another order',
    ['--strategy', 'unbound:scope=cpu,strict=true', '--strategy', 'unbound:strict=true,scope=cpu'],
    '--strategy must not name the same strategy twice ' +
      '(got "unbound:strict=true,scope=cpu", unbound(scope=cpu,strict=true) is already in the list); ' +
      'remove one, or give them different options',
  ],
  [
    'two strategy files with one name',
    ['--strategy', './my-strategy.ts', '--strategy', 'other/my-strategy.ts', '--baseline', 'my-strategy.ts'],
    `--strategy: strategy labels must be unique, but my-strategy.ts names both ${join(cwd, 'my-strategy.ts')} and ` +
      `${join(cwd, 'other', 'my-strategy.ts')}; rename one of the files`,
  ],
  [
    'baseline not among the strategies',
    ['--strategy', 'workqueue', '--strategy', 'inline', '--baseline', 'tasklet'],
    '--baseline must be the label or spec of one of the strategies: workqueue, inline (got "tasklet"); ' +
      'choose one of those, or add the strategy tasklet',
  ],
  [
    'baseline: the listed strategy file with other options',
    ['--strategy', './my-strategy.ts:delay=2', '--strategy', 'inline', '--baseline', './my-strategy.ts:delay=3'],
    '--baseline must be the label or spec of one of the strategies: my-strategy.ts(delay=2), inline ' +
      '(got "./my-strategy.ts:delay=3"); choose one of those, or add the strategy ./my-strategy.ts:delay=3',
  ],
  [
    "baseline: a strategy file's name without its extension",
    ['--strategy', './my-strategy.ts', '--strategy', 'inline', '--baseline', 'my-strategy'],
    '--baseline must be the label or spec of one of the strategies: my-strategy.ts, inline (got "my-strategy"); ' +
      'did you mean my-strategy.ts?',
  ],
  ['until not a number', ['--until', 'x'], '--until must be a percentage from 0.1 to 100, or off (got "x")'],
  ['until 0', ['--until', '0'], '--until must be a percentage from 0.1 to 100, or off (got 0)'],
  ['until above 100', ['--until', '150%'], '--until must be a percentage from 0.1 to 100, or off (got "150%")'],
  ['until negative', ['--until=-2'], '--until must be a percentage from 0.1 to 100, or off (got -2)'],
  ['threshold above 50', ['--threshold', '80'], '--threshold must be a percentage from 0 to 50 (got 80)'],
  ['threshold not a number', ['--threshold', 'tiny'], '--threshold must be a percentage from 0 to 50 (got "tiny")'],
  ['threshold negative', ['--threshold=-1%'], '--threshold must be a percentage from 0 to 50 (got "-1%")'],
  [
    'max-time not a duration',
    ['--until', '3', '--max-time', 'soon'],
    '--max-time must be a duration like 1500 (ms), 1500ms, 1.5s or 2min, from 1s to 86400s (got "soon")',
  ],
  [
    'max-time too short',
    ['--until', '3', '--max-time', '500ms'],
    '--max-time must be a duration from 1s to 86400s (got "500ms")',
  ],
  [
    'max-time without until',
    ['--max-time', '5min'],
    '--max-time limits how long --until keeps adding rounds, but --until is not given; add --until PCT (e.g. --until 3), or drop it',
  ],
  ['control given a value', ['--control=yes'], '--control takes no value (got "yes")'],
  ['wide given a value', ['--wide=1'], '--wide takes no value (got 1)'],
  [
    'empty --config',
    ['--config', ''],
    '--config must not be empty (got ""); give the path of a JSON config file, like --config lab.json',
  ],
  [
    'blank --config=',
    ['--config= '],
    '--config must not be empty (got " "); give the path of a JSON config file, like --config lab.json',
  ],
  [
    'empty --out',
    ['--out', ''],
    '--out must not be empty (got ""); name a directory, or write no files with --no-output ("outDir": null in a config file)',
  ],
  [
    'blank --out',
    ['--out', '  '],
    '--out must not be empty (got "  "); name a directory, or write no files with --no-output ("outDir": null in a config file)',
  ],
  [
    'empty --strategy',
    ['--strategy', 'inline', '--strategy', ''],
    '--strategy must not be empty (got ""); give a built-in strategy (inline, workqueue, tasklet, timer, unbound, ' +
      'irq_work, bh_workqueue, inline_trylock) or the path of a strategy file',
  ],
  [
    'unknown option of a built-in, alone (checked before the baseline)',
    ['--strategy', 'timer:bogus=1'],
    '--strategy must give timer only its own options: deferrable (got "timer:bogus=1", timer has no option bogus)',
  ],
  [
    'misspelt option of a built-in, before a baseline that is not listed',
    ['--strategy', 'timer:deferable=true', '--baseline', 'inline'],
    '--strategy must give timer only its own options: deferrable ' +
      '(got "timer:deferable=true", timer has no option deferable); did you mean deferrable?',
  ],
  [
    'an option for a built-in that takes none',
    ['--strategy', 'tasklet', '--strategy', 'inline:x=1'],
    '--strategy must give inline no options (got "inline:x=1", inline takes none); write just inline',
  ],
  [
    'a bad value of a built-in option, before a baseline that is not listed',
    ['--strategy', 'timer:deferrable=yes', '--baseline', 'inline'],
    '--strategy timer:deferrable=yes: option deferrable must be true or false (got "yes")',
  ],
  [
    'msg-size larger than the ring',
    ['--msg-size', '8M'],
    '--msg-size must be at most the ring size (the default --ring-size 4M) (got "8M"); ' +
      'raise the ring size to 8M or more, or send smaller messages',
  ],
  ['msg-size 4Q', ['--msg-size', '4Q'], '--msg-size must be a size in bytes like 64, 4K, 1M or 4KiB (got "4Q")'],
  [
    'ring size not a power of two',
    ['--ring-size', '5000'],
    '--ring-size must be a power of two from 4K to 256M bytes (got 5000)',
  ],
  [
    'sweep that never ends',
    ['-oo', 'msg_size:4K:1M:*1'],
    '--sweep must have a step that grows toward max: *N with N > 1 from a min above 0, or +N with N > 0 ' +
      '(got "msg_size:4K:1M:*1", which never ends)',
  ],
  [
    'sweep too long',
    ['-oo', 'msg_size:1:1M:+1'],
    '--sweep must have at most 64 points (got "msg_size:1:1M:+1", which would produce 1048576); ' +
      'narrow the range, use a larger step or a *N step',
  ],
  [
    'sweep min above max',
    ['--sweep', 'msg_size:8K:4K:*2'],
    '--sweep must have min no larger than max (got "msg_size:8K:4K:*2", min 8192 > max 4096)',
  ],
  [
    'sweep of an unknown parameter',
    ['--oo', 'msgsize:4K:1M:*2'],
    '--sweep must sweep one of msg_size, irq_rate, trigger (got "msgsize:4K:1M:*2"); did you mean msg_size?',
  ],
  [
    'sweep past the ring',
    ['--ring-size', '64K', '-oo', 'msg_size:4K:1M:*2'],
    '--sweep must keep msg_size at most the ring size (--ring-size 64K) (got "msg_size:4K:1M:*2", 128K is larger); ' +
      "raise the ring size to 1M or lower the sweep's max",
  ],
  [
    'msg_size sweep without tcp_lat',
    ['--workload', 'irq_only', '-oo', 'msg_size:4K:8K:*2'],
    '--sweep over msg_size needs the tcp_lat workload, but the workload is --workload irq_only; ' +
      'sweep irq_rate or trigger instead, or choose the tcp_lat workload',
  ],
  [
    'irq-rate negative',
    ['--irq-rate=-5'],
    '--irq-rate must be a whole number of interrupts per second per CPU from 0 to 2000000 (got -5)',
  ],
  [
    'irq-rate with an unknown suffix',
    ['--irq-rate', '20x'],
    '--irq-rate must be a number of interrupts per second per CPU like 20000, 20k or 1M (got "20x")',
  ],
  [
    'irq-cpus out of range',
    ['--irq-cpus', '0,5'],
    '--irq-cpus must list CPU ids from 0 to 1 (the default --cpus 2) (got "0,5", CPU 5 is too high); ' +
      'drop CPU 5, raise the CPU count, or say all',
  ],
  [
    'irq-cpus listing a CPU twice',
    ['--irq-cpus', '1,1'],
    '--irq-cpus must list each CPU once (got "1,1", CPU 1 is listed twice)',
  ],
  [
    'irq-pattern unknown',
    ['--irq-pattern', 'random'],
    '--irq-pattern must be one of constant, poisson, bursts (got "random")',
  ],
  ['irq-burst 1', ['--irq-burst', '1'], '--irq-burst must be an integer from 2 to 4096 (got 1)'],
  [
    'client and server on one CPU',
    ['--client-cpu', '1'],
    '--client-cpu and --server-cpu must be different CPUs (both are 1); put the server on another CPU, e.g. --server-cpu 0',
  ],
  [
    'server CPU beyond --cpus',
    ['--cpus', '4', '--server-cpu', '4'],
    '--server-cpu must be a CPU id from 0 to 3 (--cpus 4) (got 4); choose a CPU below 4, or raise the CPU count',
  ],
  [
    'tcp_lat on one CPU',
    ['--cpus', '1'],
    '--server-cpu must be a CPU id from 0 to 0 (--cpus 1) (got 1, the default); ' +
      'tcp_lat needs 2 CPUs: raise the CPU count to 2, or use the irq_only workload',
  ],
  [
    'tcp_lat setting with the irq_only workload',
    ['--workload', 'irq_only', '--msg-size', '4K'],
    '--msg-size applies only to the tcp_lat workload, but the workload is --workload irq_only; ' +
      'drop it, or choose the tcp_lat workload',
  ],
  ['workload unknown', ['--workload', 'tcp_rr'], '--workload must be one of tcp_lat, irq_only (got "tcp_rr")'],
  [
    'seed beyond uint32',
    ['--seed', '4294967296'],
    '--seed must be an integer from 0 to 4294967295 (a uint32) (got 4294967296)',
  ],
  ['notify unknown', ['--notify', 'never'], '--notify must be one of if-idle, always (got "never")'],
  ['host-stalls unknown', ['--host-stalls', 'hide'], '--host-stalls must be one of keep, mark, drop (got "hide")'],
  ['trigger 0', ['--trigger', '0'], '--trigger must be an integer from 1 to 65535 (got 0)'],
  ['fastmix 16', ['--fastmix', '16'], '--fastmix must be 64 or 32 (got 16)'],
  ['watchdog too short', ['--watchdog', '10ms'], '--watchdog must be a duration from 100ms to 60s (got "10ms")'],
  [
    'lock-spins too many',
    ['--lock-spins', '2000000'],
    '--lock-spins must be an integer from 0 to 1000000 (got 2000000)',
  ],
  ['unbound-workers 0', ['--unbound-workers', '0'], '--unbound-workers must be an integer from 1 to 64 (got 0)'],
  [
    'topology text malformed',
    ['--topology', 'smt=0-1/x'],
    '--topology must look like smt=0-1/2-3,cache=0-3,numa=0-3 (groups split by /, CPUs joined by + or a-b) ' +
      '(got "smt=0-1/x", bad group "x")',
  ],
  [
    'topology levels that do not nest',
    ['--topology', 'smt=0-1/2-3,cache=0/1-3'],
    '--topology smt must nest: each smt group must lie inside one cache group ' +
      '(got "smt=0-1/2-3,cache=0/1-3", smt group [0,1] has CPU 0 in cache group [0] and CPU 1 in cache group [1,2,3])',
  ],
  [
    'cpus larger than the topology describes',
    ['--cpus', '8', '--topology', 'smt=0-1/2-3'],
    'the CPU count (--cpus 8) is larger than the topology describes: --topology smt covers CPUs 0 to 3; ' +
      'describe CPUs 4 to 7 in the topology, or use 4 CPUs',
  ],
  ['out and no-output', ['--out', 'x', '--no-output'], '--out and --no-output contradict each other; give one of them'],
  [
    'control and no-control',
    ['--control', '--no-control'],
    '--control and --no-control contradict each other; give one of them',
  ],
  ['unknown flag', ['--frobnicate'], "unknown option --frobnicate for 'run'"],
  ['misspelt flag', ['--cpu', '4'], "unknown option --cpu for 'run'; did you mean --cpus?"],
  ['unknown short flag', ['-x'], "unknown option -x for 'run'"],
  ['flag missing its value', ['--cpus'], '--cpus needs a value, like --cpus 4 (got nothing)'],
  ['flag followed by a flag', ['--cpus', '--hz', '100'], '--cpus needs a value, like --cpus 4 (got the option --hz)'],
  ['switch given a value', ['--no-tracing=yes'], '--no-tracing takes no value (got "yes")'],
  [
    'unknown subcommand',
    ['frob'],
    'unknown command "frob": the commands are run, list, check-strategy, report, compare, scenario, demo, help, explain',
  ],
  [
    'misspelt subcommand',
    ['lsit'],
    'unknown command "lsit": the commands are run, list, check-strategy, report, compare, scenario, demo, help, explain; did you mean \'list\'?',
  ],
  [
    'run with a positional',
    ['run', 'fast'],
    '\'run\' takes no arguments (got the extra argument "fast"); options start with --',
  ],
  ['option for another command', ['list', '--cpus', '4'], "unknown option --cpus for 'list'"],
  [
    'check-strategy without FILE',
    ['check-strategy'],
    "'check-strategy' needs a strategy FILE, like: deferlab check-strategy ./my-strategy.ts",
  ],
  [
    'check-strategy with two FILEs',
    ['check-strategy', 'a.ts', 'b.ts'],
    '\'check-strategy\' takes one FILE (got the extra argument "b.ts"); options start with --',
  ],
  [
    'report without DIR',
    ['report'],
    "'report' needs a results DIR, like: deferlab report deferlab-results/20250101-120000",
  ],
  ['scenario without NAME', ['scenario'], "'scenario' needs a scenario NAME, like: deferlab scenario cpu-hog"],
  [
    'missing config file',
    ['--config', 'nope.json'],
    `--config must name an existing file (got "nope.json", resolved to ${join(cwd, 'nope.json')})`,
  ],
];

describe('a bad command line is one line, a pointer to --help, and exit status 2', () => {
  it.each(FLAG_RULES)('%s', async (_what, argv, message) => {
    const r = await cli(argv);
    expect(r.stderr).toBe(`deferlab: ${message}\n${HINT}`);
    expect(r.status).toBe(2);
    expect(r.started).toBe(0);
  });
});

/** [what, file name, file text, message] — a mistake in the config file: message only. */
const FILE_RULES: [string, string, string, string][] = [
  [
    'JSON syntax error, with line and column',
    'syntax.json',
    '{\n  "cpus": 4,\n}\n',
    'syntax.json is not valid JSON at line 3, column 1: Expected double-quoted property name; ' +
      'config files are JSON, which allows no comments and no trailing commas',
  ],
  [
    'a YAML file',
    'lab.yaml',
    'cpus: 4\nirq:\n  rate: 20k\n',
    'lab.yaml is not valid JSON: config files are JSON, not YAML; convert lab.yaml to JSON, ' +
      'like {"cpus": 4, "irq": {"rate": "20k"}}',
  ],
  [
    'a TOML file',
    'lab.toml',
    'cpus = 4\n',
    'lab.toml is not valid JSON: config files are JSON, not TOML; convert lab.toml to JSON, ' +
      'like {"cpus": 4, "irq": {"rate": "20k"}}',
  ],
  [
    'a top-level key given twice',
    'twice.json',
    '{\n  "trials": 10,\n  "cpus": 4,\n  "trials": 3\n}\n',
    'trials in twice.json is given twice (lines 2 and 4); give each setting once: JSON would keep only the last',
  ],
  [
    'a nested key given twice',
    'twice-nested.json',
    '{"irq": {"rate": "20k", "rate": "50k"}}',
    'irq.rate in twice-nested.json is given twice (both on line 1); give each setting once: JSON would keep only the last',
  ],
  [
    'unknown top-level key',
    'key.json',
    '{"cpu": 4}',
    'cpu in key.json is not a known setting; did you mean cpus? the keys allowed here are cpus, nodes, hz, trialMs, ' +
      'warmupMs, sliceMs, trials, strategies, baseline, workload, irq, seed, notify, topology, fastPool, unboundWorkers, ' +
      'lockSpins, idle, kthreads, hogs, kernel, watchdogMs, tracing, hostStalls, hostSteal, outDir, sweep, control, until, maxTimeMs, wide, ' +
      'threshold, timeline, timelineWindowMs, tdf, switchCost, softirqDefer, explain, kthreadCharge, hostHelpers',
  ],
  [
    'unknown nested key',
    'nested.json',
    '{"workload": {"msgsize": 64}}',
    'workload.msgsize in nested.json is not a known setting; did you mean msgSize? ' +
      'the keys allowed here are kind, msgSize, clientCpu, serverCpu, ringBytes, nic, mtu, linkRate, rxUsecs, rxFrames, instances, appCpus, nicIrqCpus',
  ],
  ...(
    [
      ['duration', '"1s"', 'trialMs, the key --duration sets'],
      ['strategy', '["inline"]', 'strategies, the key --strategy sets'],
      ['out', '"x"', 'outDir, the key --out sets'],
      ['nic', '"ixgbe"', 'workload.nic ({"workload": {"nic": ...}}), the key --nic sets'],
      ['msgSize', '64', 'workload.msgSize ({"workload": {"msgSize": ...}}), the key --msg-size sets'],
    ] as const
  ).map(([key, value, meant]) => [
    `a flag's name as a key (${key})`,
    `flag-${key}.json`,
    `{"${key}": ${value}}`,
    `${key} in flag-${key}.json is not a known setting; did you mean ${meant}? the keys allowed here are cpus, nodes, hz, ` +
      'trialMs, warmupMs, sliceMs, trials, strategies, baseline, workload, irq, seed, notify, topology, fastPool, ' +
      'unboundWorkers, lockSpins, idle, kthreads, hogs, kernel, watchdogMs, tracing, hostStalls, hostSteal, outDir, sweep, ' +
      'control, until, maxTimeMs, wide, threshold, timeline, timelineWindowMs, tdf, switchCost, softirqDefer, explain, kthreadCharge, hostHelpers',
  ]),
  ['wrong type', 'type.json', '{"tracing": "yes"}', 'tracing in type.json must be true or false (got "yes")'],
  [
    'wrong type for an object',
    'object.json',
    '{"irq": [1]}',
    'irq in object.json must be an object like {"rate": "20k", "pattern": "poisson"} (got [1])',
  ],
  [
    'bad size, named by its field path',
    'size.json',
    '{"workload": {"msgSize": "4Q"}}',
    'workload.msgSize in size.json must be a size in bytes like 64, 4K, 1M or 4KiB (got "4Q")',
  ],
  [
    'not an object',
    'array.json',
    '[1, 2]',
    'array.json must hold a JSON object of settings, like {"cpus": 4} (got [1,2])',
  ],
  [
    'strategies entry named by its index',
    'strategies.json',
    '{"strategies": ["inline", 7]}',
    'strategies[1] in strategies.json must be a strategy spec, like "timer:deferrable=true" or "./my-strategy.ts" (got 7)',
  ],
  [
    'topology: a CPU twice in a level',
    'dup.json',
    '{"topology": {"smt": [[0, 1], [1, 2]]}}',
    'topology.smt in dup.json must list every CPU exactly once (got [[0,1],[1,2]], CPU 1 is in group [0,1] and group [1,2])',
  ],
  [
    'topology: a CPU missing from a level',
    'gap.json',
    '{"topology": {"smt": [[0], [2]]}}',
    'topology.smt in gap.json must list every CPU from 0 to 2 exactly once (got [[0],[2]], CPU 1 is missing)',
  ],
  [
    'topology: an SMT group across two caches',
    'nest.json',
    '{"topology": {"smt": [[0, 1], [2, 3]], "cache": [[0], [1, 2, 3]]}}',
    'topology.smt in nest.json must nest: each smt group must lie inside one cache group ' +
      '(got [[0,1],[2,3]], smt group [0,1] has CPU 0 in cache group [0] and CPU 1 in cache group [1,2,3])',
  ],
  [
    'topology: a cache group across two NUMA nodes',
    'numa.json',
    '{"topology": {"cache": [[0, 1], [2, 3]], "numa": [[0, 1, 2], [3]]}}',
    'topology.cache in numa.json must nest: each cache group must lie inside one numa group ' +
      '(got [[0,1],[2,3]], cache group [2,3] has CPU 2 in numa group [0,1,2] and CPU 3 in numa group [3])',
  ],
  [
    'topology: an empty group',
    'empty.json',
    '{"topology": {"smt": [[0], []]}}',
    'topology.smt[1] in empty.json must not have an empty group (got [])',
  ],
  [
    'topology: a CPU id at or beyond cpus',
    'high.json',
    '{"cpus": 2, "topology": {"smt": [[0, 1], [2, 3]]}}',
    'topology.smt in high.json must only name CPUs below the CPU count (cpus 2 in high.json) ' +
      '(got [[0,1],[2,3]], CPU 2 is too high); raise the CPU count or drop CPU 2',
  ],
  [
    'tcp_lat field with irq_only in the same file',
    'kind.json',
    '{"workload": {"kind": "irq_only", "ringBytes": "64K"}}',
    'workload.ringBytes in kind.json applies only to the tcp_lat workload, but the workload is ' +
      'workload.kind irq_only in kind.json; drop it, or choose the tcp_lat workload',
  ],
  [
    'sweep object with a value past the ring',
    'sweep.json',
    '{"sweep": {"param": "msg_size", "values": [64, "1M"]}, "workload": {"ringBytes": "64K"}}',
    'sweep in sweep.json must keep msg_size at most the ring size (workload.ringBytes 64K in sweep.json) ' +
      '(got {"param":"msg_size","values":[64,"1M"]}, 1M is larger); raise the ring size to 1M or lower the sweep\'s max',
  ],
];

describe('a bad config file is one line naming the file and the field, and exit status 2', () => {
  it.each(FILE_RULES)('%s', async (_what, name, text, message) => {
    const r = await cli(['--config', config(name, text)]);
    expect(r.stderr).toBe(`deferlab: ${message}\n`);
    expect(r.status).toBe(2);
    expect(r.started).toBe(0);
  });

  it('a directory given as the config file', async () => {
    mkdirSync(join(cwd, 'adir'), { recursive: true });
    const r = await cli(['--config', 'adir']);
    expect(r.stderr).toBe('deferlab: adir could not be read: it is a directory, not a file\n');
    expect(r.status).toBe(2);
  });

  it('JSON.parse errors without a position still name the file and the reason', async () => {
    const r = await cli(['--config', config('words.json', 'hello')]);
    expect(r.stderr).toMatch(/^deferlab: words\.json is not valid JSON( at line 1, column 1)?: Unexpected token/);
    expect(r.stderr).not.toContain('\n    at ');
    expect(r.status).toBe(2);
  });

  it('a flag and a file setting in one message are each named where they were given', async () => {
    const r = await cli(['--config', config('ring.json', '{"workload": {"ringBytes": "4K"}}'), '--msg-size', '8K']);
    expect(r.stderr).toBe(
      'deferlab: --msg-size must be at most the ring size (workload.ringBytes 4K in ring.json) (got "8K"); ' +
        `raise the ring size to 8K or more, or send smaller messages\n${HINT}`,
    );
    expect(r.status).toBe(2);
  });
});

describe('other input', () => {
  it('report DIR must exist', async () => {
    const r = await cli(['report', 'missing-dir']);
    expect(r.stderr).toBe(
      `deferlab: report DIR must be an existing results directory (got "missing-dir", ${join(cwd, 'missing-dir')} does not exist)\n`,
    );
    expect(r.status).toBe(2);
  });

  it('check-strategy --option must be key=value', async () => {
    const r = await cli(['check-strategy', './my-strategy.ts', '--option', 'batch']);
    expect(r.stderr).toBe(
      'deferlab: --option must give options as key=value pairs separated by commas, like timer:deferrable=true ' +
        `(got "batch", "batch" is not key=value)\n${HINT}`,
    );
    expect(r.status).toBe(2);
  });

  it("check-strategy checks a built-in's options", async () => {
    const r = await cli(['check-strategy', 'timer', '--option', 'bogus=1']);
    expect(r.stderr).toBe(
      'deferlab: check-strategy must give timer only its own options: deferrable ' +
        '(got "timer --option bogus=1", timer has no option bogus)\n',
    );
    expect(r.status).toBe(2);
    expect(r.started).toBe(0);
  });

  it('a YAML-named file that holds JSON is read', async () => {
    const r = await cli(['--config', config('json.yml', '{"cpus": 4}')]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('scenario without NAME names the scenarios', async () => {
    const r = await cli(['scenario'], true);
    expect(r.stderr).toBe(
      "deferlab: 'scenario' needs a scenario NAME (random-regression, ipi-storm, cpu-hog, seed-machine or entropy; " +
        "'deferlab scenario --help' describes them), like: deferlab scenario cpu-hog\n" +
        HINT,
    );
    expect(r.status).toBe(2);
  });

  it.each([
    [
      ['report', ''],
      'report DIR must not be empty (got ""); give a run\'s results directory, like deferlab report deferlab-results/20250101-120000',
    ],
    [
      ['check-strategy', ''],
      'check-strategy FILE must not be empty (got ""); give a strategy file or a built-in NAME, like deferlab check-strategy ./my-strategy.ts',
    ],
    [
      ['check-strategy', ' ', '--option', 'a=1'],
      'check-strategy FILE must not be empty (got " "); give a strategy file or a built-in NAME, like deferlab check-strategy ./my-strategy.ts',
    ],
  ])('%j: an empty path is refused as empty', async (argv, message) => {
    const r = await cli(argv);
    expect(r.stderr).toBe(`deferlab: ${message}\n`);
    expect(r.status).toBe(2);
    expect(r.started).toBe(0);
  });

  it('outDir "" in a config file is refused as empty', async () => {
    const r = await cli(['--config', config('empty-out.json', '{"outDir": ""}')]);
    expect(r.stderr).toBe(
      'deferlab: outDir in empty-out.json must not be empty (got ""); name a directory, or write no files with ' +
        '--no-output ("outDir": null in a config file)\n',
    );
    expect(r.status).toBe(2);
  });

  it("report DIR on a scenario's output directory names its sub-runs", async () => {
    for (const sub of ['cpu-hog-nice-20', 'cpu-hog-fifo']) {
      mkdirSync(join(cwd, 'hog-out', sub), { recursive: true });
      writeFileSync(join(cwd, 'hog-out', sub, 'results.json'), '{}');
    }
    mkdirSync(join(cwd, 'hog-out', 'not-a-run'));
    const r = await cli(['report', 'hog-out']);
    expect(r.stderr).toBe(
      'deferlab: report DIR must be one run\'s results directory (got "hog-out", which holds 2 run directories ' +
        "(a scenario's sub-runs, or runs of their own), not one run); give one of hog-out/cpu-hog-fifo, hog-out/cpu-hog-nice-20\n",
    );
    expect(r.status).toBe(2);
    expect(r.started).toBe(0);
    // One of them is a run: accepted.
    expect((await cli(['report', 'hog-out/cpu-hog-fifo'])).started).toBe(1);
  });

  it('report DIR on the directory of many runs names the newest', async () => {
    for (let i = 1; i <= 8; i++) {
      mkdirSync(join(cwd, 'many', `2025010${i}-120000`), { recursive: true });
      writeFileSync(join(cwd, 'many', `2025010${i}-120000`, 'results.json'), '{}');
    }
    const r = await cli(['report', 'many']);
    expect(r.stderr).toBe(
      'deferlab: report DIR must be one run\'s results directory (got "many", which holds 8 runs\' directories, not ' +
        'one run); give one of …, many/20250103-120000, many/20250104-120000, many/20250105-120000, ' +
        'many/20250106-120000, many/20250107-120000, many/20250108-120000 (8 in all)\n',
    );
    expect(r.status).toBe(2);
  });

  it("report DIR on ipi-storm's output directory says it holds ipi-storm.json", async () => {
    mkdirSync(join(cwd, 'ipi-out'));
    writeFileSync(join(cwd, 'ipi-out', 'ipi-storm.json'), '{}');
    const r = await cli(['report', 'ipi-out']);
    expect(r.stderr).toBe(
      'deferlab: report DIR must be a run\'s results directory, with a results.json (got "ipi-out", which holds ' +
        'ipi-storm.json: the ipi-storm scenario writes no results.json); read ipi-out/ipi-storm.json, or re-run the scenario for its table\n',
    );
    expect(r.status).toBe(2);
  });

  it('check-strategy FILE must exist', async () => {
    const r = await cli(['check-strategy', 'gone.mjs']);
    expect(r.stderr).toBe(
      `deferlab: check-strategy FILE must name an existing strategy file (got "gone.mjs", resolved to ${join(cwd, 'gone.mjs')}, which does not exist)\n`,
    );
    expect(r.status).toBe(2);
  });
});

const RUN_INSTEAD = "use 'deferlab run' for your own comparison";
const NO_TCP_LAT_OPTIONS: [string, string][] = [
  ['--msg-size', '4K'],
  ['--client-cpu', '1'],
  ['--server-cpu', '0'],
  ['--ring-size', '8M'],
];

/**
 * [scenario, argv after the name, message]: the settings a scenario chooses itself or has no use
 * for are rejected, not ignored (the real scenario definitions, nothing run).
 */
const SCENARIO_REJECTS: [string, string[], string][] = [
  [
    'cpu-hog',
    ['--strategy', 'tasklet', '--strategy', 'inline'],
    `scenario cpu-hog sets --strategy itself (it compares workqueue:wq=system with unbound:scope=system); drop --strategy, or ${RUN_INSTEAD}`,
  ],
  [
    'cpu-hog',
    ['--baseline', 'unbound'],
    `scenario cpu-hog sets --baseline itself (it compares unbound:scope=system against workqueue:wq=system); drop --baseline, or ${RUN_INSTEAD}`,
  ],
  [
    'cpu-hog',
    ['--workload', 'tcp_lat'],
    `scenario cpu-hog sets --workload itself (its workload is a CPU hog and a driver, both on CPU 0); drop --workload, or ${RUN_INSTEAD}`,
  ],
  ...NO_TCP_LAT_OPTIONS.map(([flag, value]): [string, string[], string] => [
    'cpu-hog',
    [flag, value],
    `scenario cpu-hog takes no ${flag} (its workload is a CPU hog and a driver, not tcp_lat); drop ${flag}, or ${RUN_INSTEAD}`,
  ]),
  [
    'cpu-hog',
    ['--irq-cpus', '1'],
    `scenario cpu-hog sets --irq-cpus itself (the driver's interrupts arrive on CPU 0, the hog's CPU); drop --irq-cpus, or ${RUN_INSTEAD}`,
  ],
  [
    'cpu-hog',
    ['--trigger', '16'],
    `scenario cpu-hog takes no --trigger (each interrupt queues the driver's 20 µs work item, not random.c's mix); drop --trigger, or ${RUN_INSTEAD}`,
  ],
  [
    'cpu-hog',
    ['--fastmix', '32'],
    `scenario cpu-hog takes no --fastmix (each interrupt queues the driver's 20 µs work item, not random.c's mix); drop --fastmix, or ${RUN_INSTEAD}`,
  ],
  [
    'cpu-hog',
    ['-oo', 'irq_rate:100,200'],
    `scenario cpu-hog takes no --sweep (it runs at one setting); drop --sweep, or ${RUN_INSTEAD}`,
  ],
  [
    'cpu-hog',
    ['--no-tracing'],
    `scenario cpu-hog takes no --no-tracing (its verdicts read the traced queue → start delays); drop --no-tracing, or ${RUN_INSTEAD}`,
  ],
  [
    'cpu-hog',
    ['--cpus', '1'],
    '--cpus must be at least 2 for scenario cpu-hog, whose hog holds CPU 0 while the unbound worker runs on another CPU ' +
      '(got 1); raise the CPU count to 2 or more',
  ],
  [
    'entropy',
    ['--irq-rate', '5k', '--strategy', 'inline'],
    'scenario entropy sets --strategy itself (it compares inline, workqueue, tasklet, timer, timer:deferrable=true, ' +
      `unbound, irq_work:target=next and (from kernel 6.9) bh_workqueue); drop --strategy, or ${RUN_INSTEAD}`,
  ],
  [
    'entropy',
    ['--irq-rate', '5k'],
    'scenario entropy sets --irq-rate itself (it sweeps the rate: 200, 2000, 20000 per CPU per second); ' +
      'drop --irq-rate, or choose the rates with --sweep irq_rate:V1,V2,...',
  ],
  [
    'entropy',
    ['--baseline', 'tasklet'],
    `scenario entropy sets --baseline itself (it compares each strategy's entropy with inline's); drop --baseline, or ${RUN_INSTEAD}`,
  ],
  [
    'entropy',
    ['--workload', 'tcp_lat'],
    `scenario entropy sets --workload itself (it runs background interrupts only, no application); drop --workload, or ${RUN_INSTEAD}`,
  ],
  ...NO_TCP_LAT_OPTIONS.map(([flag, value]): [string, string[], string] => [
    'entropy',
    [flag, value],
    `scenario entropy takes no ${flag} (it runs no tcp_lat, only background interrupts); drop ${flag}, or ${RUN_INSTEAD}`,
  ]),
  [
    'entropy',
    ['--sweep', 'trigger:16,1024'],
    '--sweep must sweep irq_rate for scenario entropy, which compares the strategies across interrupt rates ' +
      `(got "trigger:16,1024"); sweep irq_rate, like --sweep irq_rate:V1,V2,..., or ${RUN_INSTEAD}`,
  ],
  [
    'entropy',
    ['--cpus', '1'],
    '--cpus must be at least 2 for scenario entropy, whose irq_work(target=next) and unbound strategies need a second CPU ' +
      'to run a mix off its own (got 1); raise the CPU count to 2 or more',
  ],
  [
    'ipi-storm',
    ['--notify', 'always'],
    'scenario ipi-storm sets --notify itself (it runs both IPI policies, always and if-idle, on one machine; ' +
      `the doorbell policy stays if-idle so that only the IPI policy differs); drop --notify, or ${RUN_INSTEAD}`,
  ],
  [
    'ipi-storm',
    ['--workload', 'tcp_lat'],
    'scenario ipi-storm sets --workload itself (its workload is a producer on CPU 0 queuing items for a consumer on CPU 1); ' +
      `drop --workload, or ${RUN_INSTEAD}`,
  ],
  [
    'ipi-storm',
    ['--strategy', 'tasklet'],
    'scenario ipi-storm takes no --strategy (it compares two IPI policies, always and if-idle, not deferral strategies); ' +
      `drop --strategy, or ${RUN_INSTEAD}`,
  ],
  [
    'ipi-storm',
    ['--control'],
    `scenario ipi-storm takes no --control (it compares two IPI policies, not deferral strategies); drop --control, or ${RUN_INSTEAD}`,
  ],
  [
    'ipi-storm',
    ['--until', '3'],
    `scenario ipi-storm takes no --until (it runs --trials rounds of its own); drop --until, or ${RUN_INSTEAD}`,
  ],
  [
    'ipi-storm',
    ['--baseline', 'inline'],
    `scenario ipi-storm takes no --baseline (it compares the IPI policies always and if-idle); drop --baseline, or ${RUN_INSTEAD}`,
  ],
  ...[
    ['--irq-rate', '5k'],
    ['--irq-pattern', 'poisson'],
    ['--irq-burst', '8'],
    ['--irq-cpus', '0'],
  ].map(([flag, value]): [string, string[], string] => [
    'ipi-storm',
    [flag, value],
    `scenario ipi-storm takes no ${flag} (it raises no device interrupts: IPIs carry its work); drop ${flag}, or ${RUN_INSTEAD}`,
  ]),
  ...[
    ['--trigger', '16'],
    ['--fastmix', '32'],
  ].map(([flag, value]): [string, string[], string] => [
    'ipi-storm',
    [flag, value],
    `scenario ipi-storm takes no ${flag} (it raises no device interrupts, so random.c's fast pool never runs); drop ${flag}, or ${RUN_INSTEAD}`,
  ]),
  ...NO_TCP_LAT_OPTIONS.map(([flag, value]): [string, string[], string] => [
    'ipi-storm',
    [flag, value],
    `scenario ipi-storm takes no ${flag} (its workload is a cross-CPU queue, not tcp_lat); drop ${flag}, or ${RUN_INSTEAD}`,
  ]),
  [
    'ipi-storm',
    ['--sweep', 'trigger:16,1024'],
    `scenario ipi-storm takes no --sweep (it runs at one setting); drop --sweep, or ${RUN_INSTEAD}`,
  ],
  [
    'ipi-storm',
    ['--cpus', '1'],
    '--cpus must be at least 2 for scenario ipi-storm, whose producer runs on CPU 0 and consumer on CPU 1 (got 1); ' +
      'raise the CPU count to 2 or more',
  ],
  [
    'random-regression',
    ['--workload', 'irq_only'],
    `scenario random-regression sets --workload itself (it measures qperf's tcp_lat, as the seed did); drop --workload, or ${RUN_INSTEAD}`,
  ],
  [
    'random-regression',
    ['--strategy', 'tasklet'],
    "scenario random-regression sets --strategy itself (it compares inline (and on 5.15 inline_trylock, the bisected commit's), " +
      `workqueue, workqueue:wq=system, tasklet, timer and timer:deferrable=true, then inline with workqueue); drop --strategy, or ${RUN_INSTEAD}`,
  ],
  [
    'random-regression',
    ['--baseline', 'tasklet'],
    `scenario random-regression sets --baseline itself (it compares every strategy with the kernel's inline before the change (inline_trylock on 5.15, else inline), as the seed did); drop --baseline, or ${RUN_INSTEAD}`,
  ],
  [
    'random-regression',
    ['--msg-size', '1K'],
    'scenario random-regression sets --msg-size itself (it sweeps msg_size, 4K and 64K, then runs its rate grid at 64 bytes); ' +
      'drop --msg-size, or choose the sizes with --sweep msg_size:4K:1M:*2',
  ],
  [
    'random-regression',
    ['--no-tracing'],
    `scenario random-regression takes no --no-tracing (its verdicts compare traced one-way latencies); drop --no-tracing, or ${RUN_INSTEAD}`,
  ],
  [
    'random-regression',
    ['--cpus', '1'],
    "--cpus must be at least 2 for scenario random-regression, whose tcp_lat client and server need a CPU each (the seed's qperf) " +
      '(got 1); raise the CPU count to 2 or more',
  ],
];

describe('a scenario rejects the settings it chooses itself or has no use for: one line, exit status 2', () => {
  it.each(SCENARIO_REJECTS)('scenario %s %j', async (name, argv, message) => {
    const r = await cli(['scenario', name, ...argv], true);
    expect(r.stderr).toBe(`deferlab: ${message}\n${HINT}`);
    expect(r.status).toBe(2);
    expect(r.started).toBe(0);
  });

  it('names a setting from the config file by its field and the file', async () => {
    const r = await cli(['scenario', 'cpu-hog', '--config', config('hog.json', '{"strategies": ["tasklet"]}')], true);
    expect(r.stderr).toBe(
      'deferlab: scenario cpu-hog sets strategies itself (it compares workqueue:wq=system with unbound:scope=system); ' +
        `drop strategies in hog.json, or ${RUN_INSTEAD}\n`,
    );
    expect(r.status).toBe(2);
  });
});

const DEMO_INSTEAD = "use 'deferlab run' to compare strategies";

/** [argv after demo, message]: demo rejects the settings it would ignore. */
const DEMO_REJECTS: [string[], string][] = [
  [
    ['--strategy', 'tasklet', '--strategy', 'workqueue'],
    `demo sets --strategy itself (it runs the inline strategy only); drop --strategy, or ${DEMO_INSTEAD}`,
  ],
  [['--baseline', 'inline'], `demo takes no --baseline (it compares nothing); drop --baseline, or ${DEMO_INSTEAD}`],
  [
    ['--workload', 'tcp_lat'],
    `demo sets --workload itself (it runs background interrupts only, no application); drop --workload, or ${DEMO_INSTEAD}`,
  ],
  [
    ['--msg-size', '4K'],
    `demo takes no --msg-size (it runs no tcp_lat, only background interrupts); drop --msg-size, or ${DEMO_INSTEAD}`,
  ],
  [['--trials', '3'], `demo takes no --trials (it runs once, for --duration); drop --trials, or ${DEMO_INSTEAD}`],
  [
    ['--warmup', '1s'],
    `demo takes no --warmup (it counts from boot, with no warm-up); drop --warmup, or ${DEMO_INSTEAD}`,
  ],
  [['-oo', 'irq_rate:1k,2k'], `demo takes no --sweep (it runs once, at one setting); drop --sweep, or ${DEMO_INSTEAD}`],
  [['--out', 'x'], `demo takes no --out (it writes no files, it prints its counters); drop --out, or ${DEMO_INSTEAD}`],
];

describe('demo rejects the settings it would ignore: one line, exit status 2', () => {
  it.each(DEMO_REJECTS)('demo %j', async (argv, message) => {
    const r = await cli(['demo', ...argv]);
    expect(r.stderr).toBe(`deferlab: ${message}\n${HINT}`);
    expect(r.status).toBe(2);
    expect(r.started).toBe(0);
  });
});
