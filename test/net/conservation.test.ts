/**
 * Conservation across the network path, with real threads: every message tcp_lat sends is read
 * once, whole, in order and intact (the reader checks each message's sequence, offsets and sum:
 * src/workloads/tcp-lat.ts), under several strategies switched in one machine, every NIC
 * profile, several pairs sharing CPUs, and background interrupts, hand-offs and NAPI all at
 * once. Behaviour only: no timing is asserted, and each strategy's stretch lasts until its pairs
 * have exchanged messages (a count), not for a length of time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { L_READ, L_SENT, linkRegion } from '../../src/net/layout.js';
import { type NicProfileName, nicOptions, segmentsPerMessage } from '../../src/net/profiles.js';
import { segsPerPush } from '../../src/net/tso.js';
import { tcpBadMessages } from '../../src/workloads/tcp-lat.js';
import { builtin, drain, Machine, options, Phase, runUntil } from '../machine/helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

const CASES: Array<{ nic: NicProfileName; msgSize: number; instances: number }> = [
  { nic: 'ipoib-cm', msgSize: 200_003, instances: 1 }, // 4 packets of 64K and a tail, odd bytes
  { nic: 'ipoib-ud', msgSize: 9_001, instances: 3 }, // 5 packets; 3 pairs on 2 CPUs
  { nic: 'ixgbe', msgSize: 70_000, instances: 2 }, // 49 packets, adaptive ITR
];

describe('tcp_lat over the network path', () => {
  it.each(CASES)(
    'reads every message once, whole and in order: $nic, $msgSize B, $instances pair(s)',
    async ({ nic, msgSize, instances }) => {
      const workload = tcpLatOptions({ msgSize, nic: nicOptions(nic), instances, ringBytes: 1 << 20 });
      m = await Machine.boot(
        options({
          irq: { rate: 20_000, pattern: 'poisson', burstSize: 8, cpus: [0, 1] },
          workload,
          strategies: [builtin('inline'), builtin('workqueue'), builtin('tasklet')],
        }),
      );
      const machine = m;
      for (let round = 0; round < 6; round++) {
        m.setActiveStrategy(round % 3);
        const from = m.counters().app_messages;
        await runUntil(m, `round ${round}: ${2 * instances} messages`, () => {
          const c = machine.counters();
          return c.app_messages >= from + 2 * instances && c.nic_irqs > 0;
        });
        m.setPhase(Phase.Drain);
        await drain(m);
        m.setPhase(Phase.Pause);
      }
      const c = m.counters();
      expect(c.app_messages).toBeGreaterThan(0);
      expect(tcpBadMessages(workload, m.i32, m.R.workload)).toBe(0);
      expect(c.net_csum_errors).toBe(0);
      for (let i = 0; i < instances; i++)
        for (let d = 0; d < 2; d++) {
          const l = m.R.workload[linkRegion(i, d)];
          expect(Atomics.load(m.i32, l + L_READ), `pair ${i} direction ${d}`).toBe(Atomics.load(m.i32, l + L_SENT));
        }
      // Each exchange read both ways: requests read by servers = replies read by clients = sent.
      let reqs = 0;
      let reps = 0;
      for (let i = 0; i < instances; i++) {
        reqs += Atomics.load(m.i32, m.R.workload[linkRegion(i, 0)] + L_READ);
        reps += Atomics.load(m.i32, m.R.workload[linkRegion(i, 1)] + L_READ);
      }
      expect(reqs).toBe(c.app_messages);
      expect(reps).toBe(c.app_messages);
      expect(c.mixes).toBe(c.handoffs); // and the deferred mixes ran once each
      expect(c.nic_irqs).toBeGreaterThan(0);
      // On the wire: every message's segments and every ACK once; send completions one per push
      // (a TSO skb where the driver has TSO: src/net/tso.ts) and per ACK, all cleaned by the drain.
      const segs = segmentsPerMessage(workload.nic, msgSize);
      const pushes = Math.ceil(segs / segsPerPush(workload.nic));
      expect(c.net_events_dropped).toBe(0);
      expect(c.nic_tx_packets).toBe(2 * c.app_messages * segs + c.tcp_acks_sent);
      expect(c.nic_tx_completions).toBe(2 * c.app_messages * pushes + c.tcp_acks_sent);
      // Each backlog a reader processed held at least one skb NET_RX put there (src/net/sock.ts).
      expect(c.tcp_backlog_runs).toBeLessThanOrEqual(c.tcp_backlog);
    },
    60_000,
  );
});
