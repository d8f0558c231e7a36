/**
 * One message received on one thread with a fake clock (CPU 1, link 0's receiver, tcp_lat over a
 * NIC profile with no moderation), for the GRO and socket-backlog tests: every segment posted
 * at once, the clock stepped past their arrival, CPU 1's preemption points passed until NAPI has
 * handed them all to TCP. With `owned`, the reader owns its socket throughout (lock_sock), so
 * what NET_RX hands to TCP goes onto the backlog (src/net/sock.ts).
 */
import { expect } from 'vitest';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { CPU_FLAGS, type CpuCounter, CpuFlag, TaskState } from '../../src/hw/layout.js';
import { T_STATE } from '../../src/kernel/sched/rq.js';
import { dataRegion, L_GRO, L_NAPI, L_POLLED, linkRegion, P_BYTES } from '../../src/net/layout.js';
import { payloadWords } from '../../src/net/links.js';
import { fillPayload, sealPacket, writeHeader } from '../../src/net/packet.js';
import { type NicProfileName, nicOptions, TCP_IP_HEADER_BYTES, wireNs } from '../../src/net/profiles.js';
import { sockLock } from '../../src/net/sock.js';
import { SpscRing } from '../../src/shm/ring.js';
import { workloadOf } from '../../src/workloads/index.js';
import { oneThreadKernel } from '../kernel/helpers.js';

export function receiveOne(profile: NicProfileName, msgSize: number, owned = false) {
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
  if (owned) sockLock(i32, link);
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
  for (let n = 0; n < 20 && i32[link + L_NAPI] !== packets; n++) {
    k.rt.poll();
    k.clock.ns += 1_000_000;
  }
  expect(i32[link + L_NAPI]).toBe(packets); // NAPI has handed every segment on
  const counter = (name: keyof typeof CpuCounter) => k.mem.counters()[name];
  const netNic = k.rt.workload.nic!;
  const src = netNic.tcp.source(link);
  return {
    packets,
    full: Math.floor(words / pw),
    polled: () => Atomics.load(i32, link + L_POLLED),
    held: i32[link + L_GRO],
    counter,
    /** The reader, on CPU 1: __sk_flush_backlog (true: it held segments), then release_sock. */
    flush: () => netNic.tcp.flushBacklog(1, src, k.clock.ns),
    release: () => netNic.tcp.releaseSock(1, src, k.clock.ns),
    k,
    link,
  };
}
