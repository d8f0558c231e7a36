/**
 * --nic-irq-cpus per profile (src/net/vectors.ts), --nodes in the resolved topology, and the
 * setup line's machine text (nodes, host cores, the measured wait share).
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { bootRssKey, flowVectors, RETA_ENTRIES, rssQueue } from '../../src/net/vectors.js';
import { nodesText } from '../../src/report/run/setup-line.js';
import type { RunResults } from '../../src/report/types.js';
import { forkCpus } from '../../src/workloads/tcp-placement.js';

describe('vector placement', () => {
  it('IPoIB: one receive vector on the first listed CPU and one send vector on the second, for every flow', () => {
    for (let i = 0; i < 8; i++)
      for (const d of [0, 1]) {
        expect(flowVectors('ipoib-cm', [3, 5, 7], i, d, 12)).toEqual({ rxCpu: 3, txCpu: 5 });
        expect(flowVectors('ipoib-ud', [4], i, d, 12)).toEqual({ rxCpu: 4, txCpu: 4 });
      }
  });

  it('ixgbe: a flow interrupts on its RSS queue pair, and flows spread over the pairs', () => {
    const cpus = [0, 1, 2, 3];
    const used = new Set<number>();
    for (let i = 0; i < 16; i++)
      for (const d of [0, 1]) {
        const v = flowVectors('ixgbe', cpus, i, d, 9);
        expect(v.rxCpu).toBe(cpus[rssQueue(i, d, 4)]);
        expect(v.txCpu).toBe(v.rxCpu);
        used.add(v.rxCpu);
      }
    expect(used.size).toBeGreaterThan(1);
    // The redirection table's round-robin: queue = entry mod queues.
    expect(rssQueue(0, 0, 1)).toBe(0);
    expect(RETA_ENTRIES).toBe(128);
  });

  it("ixgbe: each boot's RSS key (netdev_rss_key_fill) re-deals the flows over the queues; one seed, the same keys", () => {
    const cpus = Array.from({ length: 16 }, (_, c) => c);
    const deal = (key: number) => [0, 1].map((d) => flowVectors('ixgbe', cpus, 0, d, 9, key).rxCpu).join(',');
    const keys = Array.from({ length: 8 }, (_, b) => bootRssKey(12345, b));
    expect(new Set(keys).size).toBe(8);
    expect(keys).toEqual(Array.from({ length: 8 }, (_, b) => bootRssKey(12345, b))); // replayable
    expect(bootRssKey(54321, 0)).not.toBe(keys[0]);
    expect(new Set(keys.map(deal)).size).toBeGreaterThan(1); // pair 0's flows land elsewhere on some boot
    expect(deal(0)).toBe(`${rssQueue(0, 0, 16)},${rssQueue(0, 1, 16)}`); // no key: the fixed draw
    // IPoIB's vectors do not hash: the key changes nothing.
    expect(flowVectors('ipoib-cm', [3, 5], 0, 0, 9, keys[1])).toEqual({ rxCpu: 3, txCpu: 5 });
  });

  it('without a list: the receiver CPU receives and the sender completes on its own CPU', () => {
    expect(flowVectors('ixgbe', undefined, 2, 1, 6)).toEqual({ rxCpu: 6, txCpu: -1 });
  });
});

describe('fork placement of qperf pairs', () => {
  it('spreads clients and servers over the allowed CPUs, least loaded first', () => {
    const allowed = [0, 1, 2, 3, 4, 5, 6, 7];
    const load = new Map<number, number>();
    for (let i = 0; i < 8; i++) {
      const p = forkCpus(allowed, i);
      for (const c of [p.client, p.server]) load.set(c, (load.get(c) ?? 0) + 1);
      if (i < 4) expect(p.client).not.toBe(p.server);
    }
    expect([...load.values()]).toEqual(Array(8).fill(2));
    expect(forkCpus([5], 0)).toEqual({ client: 5, server: 5 });
  });
});

describe('--nodes', () => {
  it('splits the CPUs into equal nodes, each its own LLC', () => {
    const c = resolveConfig({ flags: { cpus: 16, nodes: 2 }, cwd: '/', now: new Date(0), random: () => 0.5 });
    const half = (a: number) => Array.from({ length: 8 }, (_, i) => a + i);
    expect(c.topology.numa).toEqual([half(0), half(8)]);
    expect(c.topology.cache).toEqual([half(0), half(8)]);
  });
});

describe('setup line: the machine', () => {
  const results = (wait: number, run: number) =>
    ({
      meta: { hostCores: 2, options: {} },
      points: [{ strategies: [{ counters: { host_thread_wait_ns: wait, host_thread_run_ns: run } }] }],
    }) as unknown as Pick<RunResults, 'meta' | 'points'>;
  const topo = (nodes: number) => ({ numa: Array.from({ length: nodes }, () => [0]) });
  it('names the nodes and, past the host cores, the measured share of runnable time spent waiting', () => {
    expect(nodesText({ cpus: 16, topology: topo(2) }, results(300, 100))).toBe(
      ' in 2 nodes on 2 host cores (CPU threads runnable but waiting for a host core 75% of the time they were runnable)',
    );
    expect(nodesText({ cpus: 2, topology: topo(1) }, results(300, 100))).toBe('');
  });
});
