/**
 * Bad input through every layer, in this process (test/fixtures/cli-main.ts: main() with the
 * real commands): a flag, a config file, a strategy file (loaded and constructed in a thread of
 * its own, as a run does), a scenario's or demo's option, a command's arguments. Each is exit
 * status 2, one line naming the problem (and at most the pointer to --help), no stack trace and
 * nothing run. test/cli/e2e.test.ts runs one case per layer through `node bin/deferlab.js` too;
 * test/cli/validation.test.ts holds the exact message of each rule.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { USAGE_HINT } from '../../src/cli/main.js';
import { stackLines } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-bad-input-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
};
const notJson = file('not-json.json', '{ "cpus": 2, }\n');
const unknownKey = file('unknown-key.json', '{ "cpu": 2 }\n');
const wrongType = file('wrong-type.json', '{ "trials": "many" }\n');
const aFile = file('a-file.txt', 'not a directory\n');
mkdirSync(join(tmp, 'some-run'), { recursive: true });
const aResultsFile = file('some-run/results.json', '{}\n');
const yamlFile = file('lab.yaml', 'cpus: 4\n');
const twiceFile = file('twice.json', '{ "trials": 3,\n  "trials": 4 }\n');
const emptyDir = join(tmp, 'empty');
mkdirSync(emptyDir);
// Broken strategy files, in a directory whose package.json makes .ts files ES modules (so each
// case tests its own problem; a plain directory is tested below, with a good strategy).
const bad = join(tmp, 'bad');
mkdirSync(bad);
writeFileSync(join(bad, 'package.json'), '{ "type": "module" }\n');
const syntaxError = join(bad, 'syntax-error.ts');
writeFileSync(syntaxError, 'export default class Broken {\n  handoff( {\n');
const noExport = join(bad, 'no-export.ts');
writeFileSync(noExport, 'const helper = 1;\nexport const answer = helper + 41;\n');
const noHandoff = join(bad, 'no-handoff.ts');
writeFileSync(noHandoff, 'export default class NoHandoff {\n  run(): void {}\n}\n');
const ctorThrows = join(bad, 'ctor-throws.ts');
writeFileSync(
  ctorThrows,
  "export default class CtorThrows {\n  constructor() {\n    throw new Error('ctor says no');\n  }\n  handoff(): boolean {\n    return true;\n  }\n}\n",
);

interface BadCase {
  name: string;
  args: string[];
  /** Each must match the message (the first stderr line). */
  expect: RegExp[];
}

/** `run ARGS --no-output`: nothing would be written even if validation let it through. */
const run = (...args: string[]) => ['run', ...args, '--no-output'];

const BAD_INPUT: BadCase[] = [
  { name: 'cpus 0', args: run('--cpus', '0'), expect: [/--cpus/, /integer from 1 to 64/, /\(got 0\)/] },
  {
    name: 'host-helpers not a mode',
    args: run('--host-helpers', 'bogus'),
    expect: [/--host-helpers must be one of nice, idle, leave/, /got "bogus"/],
  },
  { name: 'cpus not a number', args: run('--cpus', 'abc'), expect: [/--cpus/, /integer/, /got "abc"/] },
  { name: 'cpus above 64', args: run('--cpus', '65'), expect: [/--cpus/, /1 to 64/, /got 65/] },
  { name: 'cpus fractional', args: run('--cpus', '1.5'), expect: [/--cpus/, /integer/, /got 1\.5/] },
  { name: 'trials 0', args: run('--trials', '0'), expect: [/--trials/, /1 to 1000/, /got 0/] },
  { name: 'trials above 1000', args: run('--trials', '1001'), expect: [/--trials/, /1 to 1000/, /got 1001/] },
  { name: 'duration 0', args: run('--duration', '0'), expect: [/--duration/, /from 50ms to 600s/, /got 0/] },
  { name: 'duration too short', args: run('--duration', '10ms'), expect: [/--duration/, /50ms/, /got "10ms"/] },
  { name: 'duration too long', args: run('--duration', '601s'), expect: [/--duration/, /600s/, /got "601s"/] },
  {
    name: 'duration unknown unit',
    args: run('--duration', '5parsecs'),
    expect: [/--duration/, /1500ms, 1\.5s or 2min, from 50ms to 600s/, /"5parsecs"/],
  },
  { name: 'duration in hours', args: run('--duration', '1.5h'), expect: [/--duration/, /1\.5s/, /"1\.5h"/] },
  { name: 'warmup negative', args: run('--warmup', '-1s'), expect: [/--warmup/, /duration/, /"-1s"/] },
  { name: 'HZ 200', args: run('--hz', '200'), expect: [/--hz/, /100, 250, 300, 1000/, /got 200/] },
  { name: 'watchdog too short', args: run('--watchdog', '50ms'), expect: [/--watchdog/, /100ms to 60s/, /"50ms"/] },
  { name: 'unknown flag', args: run('--bogus'), expect: [/unknown option --bogus/, /'run'/] },
  {
    name: 'flag missing its value',
    args: ['run', '--cpus'],
    expect: [/--cpus needs a value/, /--cpus 4/, /got nothing/],
  },
  {
    name: 'sweep (-oo) missing its value',
    args: ['run', '-oo'],
    expect: [/-oo \(--sweep\) needs a value, like -oo msg_size/],
  },
  { name: 'switch given a value', args: run('--no-tracing=1'), expect: [/--no-tracing takes no value/] },
  { name: 'stray argument', args: run('extra'), expect: [/'run' takes no arguments/, /"extra"/] },
  {
    name: 'unknown subcommand',
    args: ['frobnicate'],
    expect: [/unknown command "frobnicate"/, /run, list, check-strategy/],
  },
  { name: 'help on an unknown command', args: ['help', 'bogus'], expect: [/unknown command "bogus"/] },
  {
    name: 'unknown strategy',
    args: run('--strategy', 'nosuch'),
    expect: [/--strategy/, /built-in strategy/, /"nosuch"/, /\.\/nosuch\.ts/],
  },
  {
    name: 'missing strategy file',
    args: run('--strategy', join(tmp, 'missing.ts')),
    expect: [/--strategy/, /existing strategy file/, /missing\.ts/, /does not exist/],
  },
  {
    name: 'duplicate strategy',
    args: run('--strategy', 'inline', '--strategy', 'inline'),
    expect: [/same strategy twice/, /inline/],
  },
  {
    name: 'baseline not among the strategies',
    args: run('--strategy', 'inline', '--strategy', 'tasklet', '--baseline', 'workqueue'),
    expect: [/--baseline/, /inline, tasklet/, /got "workqueue"/],
  },
  {
    name: 'msg-size larger than the ring',
    args: run('--msg-size', '8M', '--ring-size', '4M'),
    expect: [/--msg-size/, /at most the ring size/, /--ring-size 4M/, /"8M"/],
  },
  { name: 'msg-size 0', args: run('--msg-size', '0'), expect: [/--msg-size/, /from 1/, /got 0/] },
  {
    name: 'ring size not a power of two',
    args: run('--ring-size', '3000'),
    expect: [/--ring-size/, /power of two/, /got 3000/],
  },
  { name: 'sweep that never ends (*1)', args: run('--sweep', 'msg_size:4K:1M:*1'), expect: [/--sweep/, /never ends/] },
  { name: 'sweep that never ends (+0)', args: run('--sweep', 'irq_rate:1k:2k:+0'), expect: [/--sweep/, /never ends/] },
  {
    name: 'sweep too long',
    args: run('--sweep', 'trigger:1:1000:+1'),
    expect: [/--sweep/, /at most 64 points/, /1000/],
  },
  {
    name: 'sweep min above max',
    args: run('--sweep', 'msg_size:1M:4K:*2'),
    expect: [/--sweep/, /min no larger than max/],
  },
  {
    name: 'sweep of an unknown parameter',
    args: run('--sweep', 'bogus:1:2:+1'),
    expect: [/--sweep/, /msg_size, irq_rate, trigger/],
  },
  {
    name: 'sweep beyond the ring',
    args: run('--sweep', 'msg_size:4K:16K:*2', '--ring-size', '8K'),
    expect: [/--sweep/, /ring size/, /16K/],
  },
  {
    name: 'topology names a CPU above --cpus',
    args: run('--cpus', '2', '--topology', 'smt=0-1/2-3'),
    expect: [/--topology smt/, /CPU 2 is too high/],
  },
  {
    name: 'more CPUs than the topology describes',
    args: run('--cpus', '3', '--topology', 'smt=0-1'),
    expect: [/--cpus 3/, /larger than the topology describes/],
  },
  { name: 'irq rate too high', args: run('--irq-rate', '3M'), expect: [/--irq-rate/, /2000000/, /"3M"/] },
  {
    name: 'irq pattern unknown',
    args: run('--irq-pattern', 'wave'),
    expect: [/--irq-pattern/, /constant, poisson, bursts/, /"wave"/],
  },
  { name: 'irq burst 1', args: run('--irq-burst', '1'), expect: [/--irq-burst/, /2 to 4096/] },
  { name: 'irq cpus out of range', args: run('--irq-cpus', '0,5'), expect: [/--irq-cpus/, /CPU 5 is too high/] },
  { name: 'seed negative', args: run('--seed', '-1'), expect: [/--seed/, /uint32/, /got -1/] },
  {
    name: 'client and server on one CPU',
    args: run('--client-cpu', '1', '--server-cpu', '1'),
    expect: [/--client-cpu and --server-cpu/, /different/],
  },
  { name: 'tcp_lat on one CPU', args: run('--cpus', '1'), expect: [/--server-cpu/, /tcp_lat needs 2 CPUs/] },
  {
    name: '--out with --no-output',
    args: ['run', '--out', join(tmp, 'never'), '--no-output'],
    expect: [/--out and --no-output/],
  },
  { name: 'fastmix 16', args: run('--fastmix', '16'), expect: [/--fastmix/, /64 or 32/, /got 16/] },
  {
    name: 'until not a percentage',
    args: run('--until', 'x'),
    expect: [/--until/, /percentage from 0\.1 to 100/, /got "x"/],
  },
  { name: 'until above 100', args: run('--until', '101'), expect: [/--until/, /0\.1 to 100/, /got 101/] },
  { name: 'max-time without until', args: run('--max-time', '5min'), expect: [/--max-time/, /--until is not given/] },
  {
    name: 'max-time beside --until off',
    args: ['scenario', 'cpu-hog', '--until', 'off', '--max-time', '10s'],
    expect: [/--max-time/, /--until is off; give --until PCT/],
  },
  {
    name: 'max-time too long',
    args: run('--until', '3', '--max-time', '1441min'),
    expect: [/--max-time/, /from 1s to 86400s/, /"1441min"/],
  },
  { name: 'demo with --control', args: ['demo', '--control'], expect: [/demo takes no --control/] },
  {
    name: 'config file that does not exist',
    args: run('--config', join(tmp, 'nonexistent.json')),
    expect: [/--config/, /existing file/, /nonexistent\.json/],
  },
  {
    name: 'config file not JSON',
    args: run('--config', notJson),
    expect: [/not-json\.json is not valid JSON/, /line 1, column \d+/, /no trailing commas/],
  },
  {
    name: 'config file with an unknown key',
    args: run('--config', unknownKey),
    expect: [/cpu in .*unknown-key\.json/, /not a known setting/, /did you mean cpus/],
  },
  {
    name: 'config file with a wrong type',
    args: run('--config', wrongType),
    expect: [/trials in .*wrong-type\.json/, /integer/, /"many"/],
  },
  {
    name: 'check-strategy: syntax error',
    args: ['check-strategy', syntaxError],
    // The problem itself (esbuild's "file:line:col: ERROR: ..."), not only "Transform failed".
    expect: [/syntax-error\.ts/, /failed to load/, /syntax-error\.ts:\d+:\d+|Expected/],
  },
  {
    name: 'check-strategy: no export',
    args: ['check-strategy', noExport],
    expect: [/no-export\.ts/, /exports no strategy class/, /handoff/],
  },
  {
    name: 'check-strategy: class without handoff',
    args: ['check-strategy', noHandoff],
    expect: [/no-handoff\.ts/, /no handoff\(k, d\) method/],
  },
  {
    name: 'check-strategy: constructor throws',
    args: ['check-strategy', ctorThrows],
    expect: [/ctor-throws\.ts/, /constructor threw/, /ctor says no/],
  },
  {
    name: 'check-strategy: missing file',
    args: ['check-strategy', join(tmp, 'missing.ts')],
    expect: [/check-strategy FILE/, /missing\.ts/, /does not exist/],
  },
  {
    name: 'check-strategy: unknown option of a built-in',
    args: ['check-strategy', 'timer:bogus=1'],
    expect: [/check-strategy must give timer only its own options: deferrable/, /timer has no option bogus/],
  },
  {
    name: 'check-strategy: --option not key=value',
    args: ['check-strategy', 'inline', '--option', 'bogus'],
    expect: [/--option/, /key=value/, /"bogus"/],
  },
  { name: 'check-strategy without FILE', args: ['check-strategy'], expect: [/'check-strategy' needs a strategy FILE/] },
  {
    name: 'run: unknown option of a built-in',
    args: run('--strategy', 'timer:bogus=1', '--strategy', 'inline'),
    expect: [/--strategy must give timer only its own options: deferrable/, /timer has no option bogus/],
  },
  {
    name: 'run: unknown option of the only built-in, before the baseline',
    args: run('--strategy', 'timer:bogus=1', '--baseline', 'inline'),
    expect: [/--strategy must give timer only its own options/, /"timer:bogus=1"/],
  },
  {
    name: 'run: bad option value of a built-in',
    args: run('--strategy', 'workqueue:wq=bogus', '--strategy', 'inline'),
    expect: [/strategy workqueue/, /wq must be one of highpri, system/, /"bogus"/],
  },
  {
    name: 'run: strategy file whose constructor throws',
    args: run('--strategy', ctorThrows, '--strategy', 'inline'),
    expect: [/ctor-throws\.ts/, /constructor threw/, /ctor says no/],
  },
  {
    name: 'report: directory without results.json',
    args: ['report', emptyDir],
    expect: [/results\.json does not exist/, /output directory of a `deferlab run`/],
  },
  {
    name: 'report: no such directory',
    args: ['report', join(tmp, 'nonexistent')],
    expect: [/report DIR/, /does not exist/],
  },
  { name: 'report: a file, not a directory', args: ['report', aFile], expect: [/report DIR/, /is not a directory/] },
  {
    name: "report: a run's results.json, not its directory",
    args: ['report', aResultsFile],
    expect: [/is not a directory/, /give the directory that holds it: deferlab report .*some-run$/],
  },
  {
    name: 'report: a directory that holds runs, not one (no scenario claimed)',
    args: ['report', tmp],
    expect: [
      /report DIR must be one run's results directory/,
      /holds a run directory \(a scenario's sub-runs, or runs of their own\), not one run/,
      /give one of .*some-run/,
    ],
  },
  { name: 'report without DIR', args: ['report'], expect: [/'report' needs a results DIR/] },
  {
    name: 'unknown scenario',
    args: ['scenario', 'nosuch'],
    expect: [/scenario must be one of/, /cpu-hog/, /"nosuch"/],
  },
  { name: 'list with an argument', args: ['list', 'extra'], expect: [/'list' takes no arguments/, /"extra"/] },
  {
    name: 'unknown scenario, asking for its help',
    args: ['scenario', 'nosuch', '--help'],
    expect: [/scenario must be one of/, /"nosuch"/],
  },
  {
    name: 'scenario: a NIC option its workload (no tcp_lat) would ignore',
    args: ['scenario', 'cpu-hog', '--instances', '2'],
    expect: [/scenario cpu-hog takes no --instances/, /not tcp_lat/],
  },
  {
    // It once was parsed, validated and ignored: a run with no hog said nothing of it.
    name: 'run: --hogs, which no workload of its uses',
    args: run('--hogs', 'thread'),
    expect: [/run takes no --hogs/, /runs no CPU hog/, /scenario cpu-hog --hogs/],
  },
  {
    name: 'a scenario without hogs: --hogs',
    args: ['scenario', 'entropy', '--hogs', 'cpu'],
    expect: [/scenario entropy takes no --hogs/],
  },
  {
    name: 'demo: a NIC option it would ignore',
    args: ['demo', '--nic', 'ixgbe'],
    expect: [/demo takes no --nic/, /runs no tcp_lat/],
  },
  {
    name: 'scenario without NAME',
    args: ['scenario'],
    expect: [/'scenario' needs a scenario NAME/, /random-regression, ipi-storm, cpu-hog, seed-machine or entropy/],
  },
  {
    name: 'scenario: an option it sets itself',
    args: ['scenario', 'cpu-hog', '--strategy', 'tasklet', '--no-output'],
    expect: [/scenario cpu-hog sets --strategy itself/, /drop --strategy/, /'deferlab run'/],
  },
  {
    name: 'scenario: too few CPUs',
    args: ['scenario', 'cpu-hog', '--cpus', '1', '--no-output'],
    expect: [/--cpus must be at least 2 for scenario cpu-hog/, /got 1/],
  },
  {
    name: 'scenario: node 0 too small for its 8 pairs',
    args: ['scenario', 'seed-machine', '--nodes', '4', '--no-output'],
    expect: [/--nodes must leave NUMA node 0 at least 8 CPUs for scenario seed-machine/, /node 0 has 4 of 16 CPUs/],
  },
  {
    name: 'scenario: a setting its sweep replaces',
    args: ['scenario', 'seed-machine', '--trigger', '128', '--no-output'],
    expect: [/--trigger 128 has no effect beside scenario seed-machine's sweep trigger:64,1024/, /--sweep trigger:128/],
  },
  {
    name: 'a setting the sweep replaces',
    args: run('--msg-size', '4K', '--sweep', 'msg_size:64,128'),
    expect: [/--msg-size 4K has no effect beside --sweep msg_size:64,128/, /drop --msg-size/],
  },
  {
    name: 'demo: an option it would ignore',
    args: ['demo', '--strategy', 'tasklet', '--strategy', 'workqueue'],
    expect: [/demo sets --strategy itself/, /inline strategy only/],
  },
  {
    name: 'config file in YAML',
    args: run('--config', yamlFile),
    expect: [/lab\.yaml is not valid JSON: config files are JSON, not YAML/, /convert .*lab\.yaml to JSON/],
  },
  {
    name: 'empty --config',
    args: run('--config', ''),
    expect: [/^deferlab: --config must not be empty \(got ""\)/],
  },
  { name: 'empty report DIR', args: ['report', ''], expect: [/^deferlab: report DIR must not be empty \(got ""\)/] },
  {
    name: 'empty check-strategy FILE',
    args: ['check-strategy', ''],
    expect: [/^deferlab: check-strategy FILE must not be empty \(got ""\)/],
  },
  {
    name: 'config file with a key given twice',
    args: run('--config', twiceFile),
    expect: [/trials in .*twice\.json is given twice \(lines 1 and 2\)/],
  },
];

describe('bad input: exit 2, one line naming the problem, nothing run', () => {
  it('has at least 30 cases, with unique names', () => {
    expect(BAD_INPUT.length).toBeGreaterThanOrEqual(30);
    expect(new Set(BAD_INPUT.map((c) => c.name)).size).toBe(BAD_INPUT.length);
  });
  it.each(BAD_INPUT.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const r = await runMain(c.args, tmp);
    const lines = r.stderr.trimEnd().split('\n');
    expect(r.ranUntilStopped, `the input was accepted and a command ran (stderr: ${r.stderr})`).toBe(false);
    expect.soft(r.status, `exit status (stderr: ${r.stderr})`).toBe(2);
    expect.soft(stackLines(r.stderr), 'no stack trace').toEqual([]);
    expect.soft(lines[0]).toMatch(/^deferlab: \S/);
    // The message, then at most the pointer to --help.
    expect.soft(lines.slice(1), `stderr:\n${r.stderr}`).toEqual(lines.length > 1 ? [USAGE_HINT] : []);
    for (const re of c.expect) expect.soft(lines[0]).toMatch(re);
    expect.soft(r.stdout, 'nothing was run').toBe('');
  });
});
