/**
 * Bad input of the machine's placement flags (--nodes, --app-cpus, --nic-irq-cpus, and
 * --instances against the allowed CPUs): exit status 2, one line naming the problem, nothing run.
 * In this process, as test/cli/bad-input.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { USAGE_HINT } from '../../src/cli/main.js';
import { stackLines } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-placement-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const run = (...args: string[]) => ['run', '--cpus', '16', ...args, '--no-output'];

const CASES: { name: string; args: string[]; expect: RegExp[] }[] = [
  {
    name: 'nodes not dividing the CPUs',
    args: run('--nodes', '3'),
    expect: [/^deferlab: --nodes must divide the CPU count \(--cpus 16\)/, /got 3/, /use 2, 4, 8 or 1/],
  },
  {
    name: 'more nodes than CPUs',
    args: ['run', '--cpus', '2', '--nodes', '4', '--no-output'],
    expect: [/--nodes/, /got 4/],
  },
  {
    name: 'nodes against a described numa level',
    args: run('--nodes', '2', '--topology', 'numa=0-3/4-7/8-11/12-15'),
    expect: [/--nodes says 2 nodes but --topology numa describes 4/],
  },
  {
    name: 'app CPUs outside the machine',
    args: run('--app-cpus', '8-16'),
    expect: [/--app-cpus must list CPU ids from 0 to 15/, /CPU 16 is not on the machine/],
  },
  {
    name: 'empty app CPU mask',
    args: run('--app-cpus', ''),
    expect: [/--app-cpus must be "all" or a list of CPU ids/],
  },
  { name: 'app CPU range backwards (empty)', args: run('--app-cpus', '7-0'), expect: [/--app-cpus/, /"7-0"/] },
  {
    name: 'more pairs than allowed CPUs',
    args: run('--app-cpus', '0-3', '--instances', '5'),
    expect: [/--instances 5 pairs need at least one allowed CPU each, but --app-cpus allows 4 \(0,1,2,3\)/],
  },
  {
    name: 'app CPUs with a pinned client',
    args: run('--app-cpus', '0-7', '--client-cpu', '2'),
    expect: [/--client-cpu pins a task, but --app-cpus lets the scheduler place/],
  },
  {
    name: 'vectors on CPUs the machine lacks',
    args: run('--nic-irq-cpus', '0,17'),
    expect: [/--nic-irq-cpus must list CPU ids from 0 to 15/, /CPU 17 is not on the machine/],
  },
  { name: 'empty vector mask', args: run('--nic-irq-cpus', ','), expect: [/--nic-irq-cpus must be "all" or a list/] },
  {
    name: 'app CPUs for irq_only',
    args: run('--workload', 'irq_only', '--app-cpus', '0-3'),
    expect: [/--app-cpus applies only to the tcp_lat workload/],
  },
];

describe('placement flags: bad input is exit 2 and one line', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const r = await runMain(c.args, tmp);
    const lines = r.stderr.trimEnd().split('\n');
    expect(r.ranUntilStopped, `the input was accepted and a command ran (stderr: ${r.stderr})`).toBe(false);
    expect.soft(r.status, `exit status (stderr: ${r.stderr})`).toBe(2);
    expect.soft(stackLines(r.stderr), 'no stack trace').toEqual([]);
    expect.soft(lines.slice(1), `stderr:\n${r.stderr}`).toEqual(lines.length > 1 ? [USAGE_HINT] : []);
    for (const re of c.expect) expect.soft(lines[0]).toMatch(re);
    expect.soft(r.stdout, 'nothing was run').toBe('');
  });
});
