/**
 * GRO on the receive side (src/net/gro.ts), one thread, fake clock: a message's segments taken
 * in one NAPI poll reach TCP as one skb (one cursor move, one ACK check, one wake) where the
 * driver has GRO on by default (ixgbe, IPoIB datagram mode), and one by one where it does not
 * (IPoIB connected mode: ipoib_cm_handle_rx_wc → netif_receive_skb).
 */
import { describe, expect, it } from 'vitest';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { CPU_FLAGS, CpuFlag, TaskState } from '../../src/hw/layout.js';
import { T_STATE } from '../../src/kernel/sched/rq.js';
import { GRO_BY_DEFAULT } from '../../src/net/gro.js';
import { dataRegion, L_GRO, L_POLLED, linkRegion, P_BYTES } from '../../src/net/layout.js';
import { payloadWords } from '../../src/net/links.js';
import { fillPayload, sealPacket, writeHeader } from '../../src/net/packet.js';
import { type NicProfileName, nicOptions, TCP_IP_HEADER_BYTES, wireNs } from '../../src/net/profiles.js';
import { SpscRing } from '../../src/shm/ring.js';
import { workloadOf } from '../../src/workloads/index.js';
import { oneThreadKernel } from '../kernel/helpers.js';

/** CPU 1 (link 0's receiver) with tcp_lat over `profile` (no moderation); one message of `msgSize` posted. */
function receiveOne(profile: NicProfileName, msgSize: number) {
  const nic = { ...nicOptions(profile), rxUsecs: 0 };
  const k = oneThreadKernel(
    {
      workload: tcpLatOptions({ msgSize, nic, ringBytes: 4 << 20 }),
      strategies: [],
      fastPool: { trigger: 65_535, variant: '64' },
    },
    1,
  );
  k.rt.workload = workloadOf(k.rt.opts).attach(k.rt);
  const reader = k.mem.plan.tasks.find((t) => t.app?.kind === 'tcp_server')!.id;
  Atomics.store(k.mem.i32, k.rt.sched.rqs.tw(reader, T_STATE), TaskState.Runnable); // busy: no wake
  const r = k.mem.R.workload;
  const ring = new SpscRing(k.mem.i32, r[dataRegion(0, 0)]);
  const link = r[linkRegion(0, 0)];
  const i32 = k.mem.i32;
  const words = Math.ceil(msgSize / 4);
  const pw = payloadWords(nic);
  let due = k.clock.ns;
  let packets = 0;
  for (let off = 0; off < words; off += pw) {
    const idx = ring.claim();
    const n = writeHeader(i32, idx, 1, off, pw, words, msgSize);
    const sum = fillPayload(i32, idx, 0, n, 0);
    due += wireNs(nic, i32[idx + P_BYTES] + TCP_IP_HEADER_BYTES);
    sealPacket(i32, idx, sum, due);
    ring.publish();
    packets++;
  }
  Atomics.or(i32, k.rt.ctx.cw(1, CPU_FLAGS), CpuFlag.NicPost);
  // Every segment has arrived before CPU 1 passes a preemption point: the interrupt's NET_RX
  // finds them all.
  k.clock.ns = due + 1_000_000;
  for (let n = 0; n < 20 && Atomics.load(i32, link + L_POLLED) !== packets; n++) {
    k.rt.poll();
    k.clock.ns += 1_000_000;
  }
  const c = k.mem.counters();
  return {
    packets,
    full: Math.floor(words / pw),
    polled: Atomics.load(i32, link + L_POLLED),
    held: i32[link + L_GRO],
    acks: c.tcp_acks_sent,
    merged: c.gro_merged,
    polls: c.napi_polls,
  };
}

describe('GRO (napi_gro_receive) where the driver has it on by default', () => {
  it('is on for ixgbe and IPoIB datagram mode, off for IPoIB connected mode', () => {
    expect(GRO_BY_DEFAULT).toEqual({ ixgbe: true, 'ipoib-ud': true, 'ipoib-cm': false });
  });

  it('ixgbe, 8 KiB in one poll: 6 segments, one skb, one ACK (without GRO: one ACK per two full segments)', () => {
    const r = receiveOne('ixgbe', 8192);
    expect([r.packets, r.full]).toEqual([6, 5]);
    expect(r.polled).toBe(6);
    expect(r.held).toBe(0); // nothing held between polls
    expect(r.merged).toBe(5);
    expect(r.acks).toBe(1);
  });

  it('IPoIB UD, 8 KiB: the weight of 4 ends the first skb at the poll; the last segment is an skb of its own', () => {
    const r = receiveOne('ipoib-ud', 8192);
    expect([r.packets, r.full]).toEqual([5, 4]);
    expect(r.polled).toBe(5);
    expect(r.polls).toBeGreaterThanOrEqual(2);
    expect(r.merged).toBe(3); // 4 full segments merged in poll 1; the partial one alone in poll 2
    expect(r.acks).toBe(1);
  });

  it('IPoIB CM: no GRO, every segment to TCP at once (ACK every second full segment)', () => {
    const r = receiveOne('ipoib-cm', 256 * 1024);
    expect(r.polled).toBe(r.packets);
    expect(r.merged).toBe(0);
    expect(r.acks).toBe(Math.floor(r.full / 2));
  });

  it('ixgbe, 256 KiB: no skb passes GRO_MAX_SIZE (65536 B): at least 4 skbs, so at least 4 ACKs', () => {
    const r = receiveOne('ixgbe', 256 * 1024);
    expect(r.polled).toBe(r.packets);
    expect(r.acks).toBeGreaterThanOrEqual(4); // ≥ 262144 / 65536 skbs of ≥ 2 full segments each
    expect(r.acks).toBeLessThan(Math.floor(r.full / 2));
    expect(r.packets - r.merged).toBeGreaterThanOrEqual(4); // skbs: segments not merged into another
  });
});
