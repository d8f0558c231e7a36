/**
 * seed-machine (issue #26 item 7): the sub-runs it plans from its resolved config (the seed's
 * machine, the drivers' vector placement, the ksoftirqd rule on then off), the one-line refusals
 * of a node 0 too small for 8 pairs, and the ablation's verdict from given numbers. Pure: nothing
 * is run here (the tiny end-to-end run is in scenarios.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseArgv } from '../src/cli/args.js';
import { resolveConfig } from '../src/config/schema.js';
import { SCENARIOS } from '../src/scenarios/index.js';
import type { NetPoint } from '../src/scenarios/random-regression-net.js';
import {
  ablationVerdicts,
  driverVectors,
  type MachinePoint,
  observationOf,
  SEED_GRID,
  SEED_TRIGGERS,
  seedMachinePlan,
} from '../src/scenarios/seed-machine.js';

function resolvedFor(args: string[] = []) {
  const cmd = parseArgv(['scenario', 'seed-machine', ...args], { scenarios: Object.keys(SCENARIOS) });
  if (cmd.command !== 'scenario') throw new Error(`not a scenario command: ${cmd.command}`);
  const preset = SCENARIOS['seed-machine'];
  return resolveConfig({
    flags: cmd.flags,
    preset: { name: 'seed-machine', config: preset.config },
    ...(preset.rules ? { rules: { command: 'scenario seed-machine', rules: preset.rules } } : {}),
    cwd: process.cwd(),
  });
}

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

describe('seed-machine plans the seed machine', () => {
  it('16 CPUs in 2 nodes, qperf on node 0, each NIC on its driver vectors, the rule on then off', () => {
    const c = resolvedFor();
    expect(c.cpus).toBe(16);
    expect(c.topology.numa).toEqual([range(8), range(8, 8)]);
    expect(c.kernel).toBe('5.15');
    expect(c.irq.rate).toBe(0);
    const plan = seedMachinePlan(c);
    expect(plan).toHaveLength(SEED_GRID.groups.length * 2);
    expect(plan.map((r) => r.config.softirqDefer)).toEqual([
      ...SEED_GRID.groups.map(() => true),
      ...SEED_GRID.groups.map(() => false),
    ]);
    expect(new Set(plan.map((r) => r.name)).size).toBe(plan.length);
    for (const r of plan) {
      const wl = r.config.workload;
      if (wl.kind !== 'tcp_lat') throw new Error('tcp_lat expected');
      expect(wl.appCpus).toEqual(range(8));
      expect(wl.instances).toBe(r.group.pairs);
      expect(wl.nic.profile).toBe(r.group.nic);
      expect(wl.nicIrqCpus).toEqual(r.group.nic === 'ixgbe' ? range(16) : [0, 1]);
      // 5.15's inline before the change: the bisected commit's trylock mix (issue #26 item 4).
      expect(r.config.strategies.map((s) => s.name)).toEqual(['inline_trylock', 'workqueue']);
      expect(r.config.baseline).toBe('inline_trylock');
      expect(r.config.sweep).toEqual({ param: 'trigger', values: SEED_TRIGGERS });
      expect(r.config.until).toMatchObject({ pct: 10, maxTimeMs: 15_000 });
    }
    // The seed's observations: IPoIB with one pair, ixgbe, and 8 pairs.
    expect(SEED_GRID.groups.map(observationOf)).toEqual(['ipoib', 'ipoib', 'ixgbe', 'instances', 'instances']);
  });

  it("another kernel: its own inline is the baseline (the trylock mix is 5.15's)", () => {
    for (const r of seedMachinePlan(resolvedFor(['--kernel', '6.9']))) {
      expect(r.config.strategies.map((s) => s.label)).toEqual(['inline', 'workqueue']);
      expect(r.config.baseline).toBe('inline');
    }
  });

  it('a bigger machine: qperf on its node 0, ixgbe at its 16-queue RSS limit; a msg_size sweep sizes the rings', () => {
    const c = resolvedFor(['--cpus', '32', '--nodes', '2', '--sweep', 'msg_size:4K,1M']);
    const run = seedMachinePlan(c)[2];
    const wl = run.config.workload;
    if (wl.kind !== 'tcp_lat') throw new Error('tcp_lat expected');
    expect(wl.appCpus).toEqual(range(16));
    expect(wl.nicIrqCpus).toEqual(range(16));
    expect(run.config.sweep).toEqual({ param: 'msg_size', values: [4096, 1 << 20] });
    expect(wl.ringBytes).toBe(8 << 20); // 4 messages of 1M and a header: the default 4 MiB would not do
    expect(driverVectors('ipoib-ud', 1)).toEqual([0]);
  });

  it.each([
    [
      ['--cpus', '8'],
      /^--cpus must leave NUMA node 0 at least 8 CPUs for scenario seed-machine.*\(got 8, node 0 has 4 of 8 CPUs\)/,
    ],
    [['--nodes', '4'], /^--nodes must leave NUMA node 0 at least 8 CPUs.*\(got 4, node 0 has 4 of 16 CPUs\)/],
  ])('refuses %j in one line', (args, message) => {
    expect(() => resolvedFor(args)).toThrow(message);
  });

  it('one node of 8 CPUs is enough', () => {
    expect(resolvedFor(['--cpus', '8', '--nodes', '1']).topology.numa).toEqual([range(8)]);
  });
});

/** A grid point with one boot's effect `est` (se `se`) of workqueue against the control. */
function point(nic: MachinePoint['group']['nic'], pairs: number, rule: boolean, est: number, se = 0.01): MachinePoint {
  const base: NetPoint = {
    group: { nic, instances: pairs, trigger: 64, msgSizes: [65536], observation: observationOf({ nic, pairs }) },
    size: 65536,
    mean: undefined,
    units: [{ boot: 0, n: 20, est, se }],
    tails: [0, 0, 0],
    irqsPerCpu: 0,
    handoffs: 0,
    busyShare: 0,
    lost: 0,
    lostInline: 0,
  };
  return { ...base, rule, cut: [0, 0], left: [0, 0], wait: [0, 0], hostWait: 0 };
}

describe("seed-machine's ablation verdicts (rule on minus rule off, given numbers)", () => {
  // Partners with effects of their own, and the rule-off half in another order: a mix-up of the
  // two halves' indexes, or a dropped partner term, changes the verdicts.
  const grid = (onIpoib: number, offIpoib: number) => [
    point('ipoib-cm', 1, true, onIpoib + 0.03),
    point('ixgbe', 1, true, 0.03),
    point('ipoib-cm', 8, true, 0.03),
    point('ipoib-cm', 8, false, -0.02),
    point('ixgbe', 1, false, -0.02),
    point('ipoib-cm', 1, false, offIpoib - 0.02),
  ];

  it('a regression over IPoIB that the rule alone makes: both contrasts reproduced', () => {
    const v = ablationVerdicts(grid(0.2, 0));
    expect(v).toHaveLength(2);
    for (const x of v) expect(x.outcome, x.detail).toBe('reproduced');
    expect(v[0].detail).toContain('1 matched point pair: ixgbe 64K@64');
    expect(v[1].detail).toContain('1 matched point pair: ipoib-cm×8 64K@64');
  });

  it('the same regression with the rule off: not what the rule makes', () => {
    for (const x of ablationVerdicts(grid(0.2, 0.2))) expect(x.outcome, x.detail).toBe('not reproduced');
  });

  it('a partner that regresses as much as IPoIB with the rule: no difference for the rule to make', () => {
    const v = ablationVerdicts(
      grid(0.2, 0).map((p) =>
        p.rule && p.group.nic === 'ixgbe' ? { ...p, units: [{ boot: 0, n: 20, est: 0.23, se: 0.01 }] } : p,
      ),
    );
    expect(v[0].outcome, v[0].detail).toBe('not reproduced'); // IPoIB minus ixgbe: 0 on, 0 off
    expect(v[1].outcome, v[1].detail).toBe('reproduced'); // 1 pair minus 8: +0.2 on, 0 off
  });

  it('without the other half of the grid: inconclusive, and says why', () => {
    const v = ablationVerdicts(grid(0.2, 0).filter((p) => p.rule));
    for (const x of v) {
      expect(x.outcome).toBe('inconclusive');
      expect(x.detail).toContain('no matched points with the rule on and off');
    }
  });
});
