/**
 * A 16-CPU machine in two nodes on this small host, with real threads: qperf pairs placed by the
 * scheduler within --app-cpus (select.ts) and the NIC's vectors where --nic-irq-cpus puts them
 * (src/net/vectors.ts). Every message is read once, whole and in order; every hand-off runs once;
 * no application task ever sits on a CPU outside its allowed ones; and tasks did move (a count
 * waited for, not a time).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { nodeGroups } from '../../src/config/placement.js';
import { DEFAULT_IDLE } from '../../src/machine/options.js';
import { L_READ, L_SENT, linkRegion } from '../../src/net/layout.js';
import type { NicProfileName } from '../../src/net/profiles.js';
import { tcpBadMessages } from '../../src/workloads/tcp-lat.js';
import { builtin, drain, Machine, options, Phase, runUntil } from '../machine/helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

const CPUS = 16;
const CASES: { nic: NicProfileName; instances: number; appCpus: number[]; nicIrqCpus: number[] }[] = [
  { nic: 'ipoib-cm', instances: 8, appCpus: [0, 1, 2, 3, 4, 5, 6, 7], nicIrqCpus: [0] },
  { nic: 'ixgbe', instances: 3, appCpus: [2, 3, 4, 9], nicIrqCpus: [0, 1, 8, 15] },
];

describe('16 CPUs in 2 nodes: placed pairs, placed vectors', () => {
  it.each(CASES)(
    '$nic, $instances pairs on CPUs $appCpus, vectors on $nicIrqCpus: conserved, inside the mask, moved',
    async ({ nic, instances, appCpus, nicIrqCpus }) => {
      const workload = { ...tcpLatOptions({ nic, instances, msgSize: 64 }), appCpus, nicIrqCpus };
      const nodes = nodeGroups(CPUS, 2);
      m = await Machine.boot(
        options({
          cpus: CPUS,
          topology: { smt: Array.from({ length: CPUS }, (_, c) => [c]), cache: nodes, numa: nodes },
          irq: { rate: 2000, pattern: 'constant', burstSize: 8, cpus: [0, 8] },
          idle: { ...DEFAULT_IDLE, policy: 'halt' },
          workload,
          strategies: [builtin('inline'), builtin('workqueue')],
        }),
      );
      const machine = m;
      const apps = m.plan.tasks.filter((t) => t.kind === 'app');
      expect(apps).toHaveLength(2 * instances);
      expect(apps.every((t) => !t.bound && t.allowed?.join() === appCpus.join())).toBe(true);
      for (let round = 0; round < 2; round++) {
        m.setActiveStrategy(round);
        const from = m.counters();
        await runUntil(m, `round ${round}: ${2 * instances} messages and a migration`, () => {
          const c = machine.counters();
          return c.app_messages >= from.app_messages + 2 * instances && c.wakeup_migrations > 0;
        });
        m.setPhase(Phase.Drain);
        await drain(m);
        m.setPhase(Phase.Pause);
        for (const t of apps) expect(appCpus, `${t.name}'s CPU`).toContain(m.taskCpu(t.id));
      }
      const c = m.counters();
      expect(tcpBadMessages(workload, m.i32, m.R.workload)).toBe(0);
      for (let i = 0; i < instances; i++)
        for (let d = 0; d < 2; d++) {
          const l = m.R.workload[linkRegion(i, d)];
          expect(Atomics.load(m.i32, l + L_READ), `pair ${i} direction ${d}`).toBe(Atomics.load(m.i32, l + L_SENT));
        }
      expect(c.mixes).toBe(c.handoffs);
      expect(c.works_run).toBe(c.works_queued);
      // The vectors fired only where they were put.
      for (let cpu = 0; cpu < CPUS; cpu++)
        if (!nicIrqCpus.includes(cpu)) expect(m.cpuCounters(cpu).nic_irqs, `NIC interrupts on CPU ${cpu}`).toBe(0);
      // And the host's view of the threads was read.
      expect(m.countersWithHost().host_thread_run_ns).toBeGreaterThan(0);
    },
    120_000,
  );
});
