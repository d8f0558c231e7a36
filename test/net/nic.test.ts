/**
 * The NIC model on one thread (src/net/nic.ts): packets posted into a link's ring with their
 * arrival times, a fake clock stepped to each, the receiving CPU's preemption points taking the
 * interrupts and running NET_RX. What is checked is the driver's and net_rx_action's logic:
 * how many interrupts a message becomes under each moderation, NAPI's weight and budget, the
 * re-raise, the ACKs; never a timing.
 */
import { describe, expect, it } from 'vitest';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { CPU_FLAGS, CPU_OWNER, type CpuCounter, CpuFlag, Softirq, TaskState } from '../../src/hw/layout.js';
import { T_STATE } from '../../src/kernel/sched/rq.js';
import { KsoftirqdTask } from '../../src/kernel/softirq.js';
import { dataRegion, L_POLLED, linkRegion, P_BYTES } from '../../src/net/layout.js';
import { payloadWords } from '../../src/net/links.js';
import { fillPayload, patternSum, sealPacket, writeHeader } from '../../src/net/packet.js';
import {
  itrContainer,
  type NicOptions,
  type NicProfileName,
  nicOptions,
  TCP_IP_HEADER_BYTES,
  updateItr,
  wireNs,
} from '../../src/net/profiles.js';
import { SpscRing } from '../../src/shm/ring.js';
import { workloadOf } from '../../src/workloads/index.js';
import { oneThreadKernel } from '../kernel/helpers.js';

const MiB = 1 << 20;

/** CPU 1 (the server's: link 0's receiver) on one thread, with tcp_lat over `nic`. */
function server(nic: NicOptions, msgSize = MiB) {
  // No strategy: a trigger no test reaches keeps add_interrupt_randomness from handing off.
  const k = oneThreadKernel(
    {
      workload: tcpLatOptions({ msgSize, nic, ringBytes: 4 * MiB }),
      strategies: [],
      fastPool: { trigger: 65_535, variant: '64' },
    },
    1,
  );
  k.rt.workload = workloadOf(k.rt.opts).attach(k.rt);
  // The reader is busy elsewhere (runnable, not asleep in recv): NET_RX has no one to wake, and
  // this thread stays CPU 1's idle task throughout.
  const reader = k.mem.plan.tasks.find((t) => t.app?.kind === 'tcp_server')!.id;
  Atomics.store(k.mem.i32, k.rt.sched.rqs.tw(reader, T_STATE), TaskState.Runnable);
  const r = k.mem.R.workload;
  const ring = new SpscRing(k.mem.i32, r[dataRegion(0, 0)]);
  const link = r[linkRegion(0, 0)];
  const counter = (name: keyof typeof CpuCounter) => k.mem.counters()[name];
  /** The client's send_full of message `seq`, posted at once: each packet's arrival time as the wire model paces it from `t0`. */
  const post = (seq: number, t0: number): number[] => {
    const i32 = k.mem.i32;
    const words = Math.ceil(msgSize / 4);
    const pw = payloadWords(nic);
    const dues: number[] = [];
    let free = t0;
    for (let off = 0; off < words; off += pw) {
      const idx = ring.claim();
      expect(idx).toBeGreaterThanOrEqual(0);
      const n = writeHeader(i32, idx, seq, off, pw, words, msgSize);
      const sum = fillPayload(i32, idx, 0, n, 0);
      free += wireNs(nic, i32[idx + P_BYTES] + TCP_IP_HEADER_BYTES);
      sealPacket(i32, idx, sum, free);
      ring.publish();
      dues.push(free);
    }
    Atomics.or(i32, k.rt.ctx.cw(1, CPU_FLAGS), CpuFlag.NicPost); // the sender's doorbell
    return dues;
  };
  /** The reader: release what NAPI delivered (recv copies it out). */
  const read = () => {
    while (Atomics.load(k.mem.i32, link + L_POLLED) !== ring.consumed()) ring.release();
  };
  return { k, ring, link, counter, post, read, polled: () => Atomics.load(k.mem.i32, link + L_POLLED) };
}

/**
 * A preemption point of CPU 1's idle task; when it hands the CPU to ksoftirqd/1 (NET_RX past
 * __do_softirq's restarts), ksoftirqd runs here on this thread until it sleeps and gives the CPU
 * back, as the thread loop would host it.
 */
function preempt(s: ReturnType<typeof server>): void {
  const rt = s.k.rt;
  if (rt.poll()) return;
  const ksoftirqd = s.k.mem.plan.ksoftirqd[1];
  for (let n = 0; n < 100 && Atomics.load(s.k.mem.i32, rt.ctx.cw(1, CPU_OWNER)) === ksoftirqd; n++) {
    rt.enterCpu(1, ksoftirqd);
    new KsoftirqdTask(rt, rt.softirqs, ksoftirqd, 1).run();
  }
  expect(Atomics.load(s.k.mem.i32, rt.ctx.cw(1, CPU_OWNER))).toBe(1); // back to swapper/1
  rt.enterCpu(1, 1);
}

/** Step the clock to each arrival and pass a preemption point there, as a busy CPU would. */
function deliver(s: ReturnType<typeof server>, dues: number[]): void {
  for (const d of dues) {
    if (s.k.clock.ns < d) s.k.clock.ns = d;
    preempt(s);
    s.read();
  }
  s.k.clock.ns += 1_000_000;
  preempt(s);
  s.read();
}

const nicOf = (p: NicProfileName, over: Partial<NicOptions> = {}) => ({ ...nicOptions(p), ...over });

describe('NIC interrupts', () => {
  it('a 1 MiB message over IPoIB CM with no moderation raises an RX interrupt per 64K packet (at least 16)', () => {
    const s = server(nicOf('ipoib-cm'));
    const dues = s.post(1, s.k.clock.ns);
    expect(dues.length).toBe(Math.ceil(MiB / 4 / payloadWords(nicOf('ipoib-cm'))));
    deliver(s, dues);
    expect(s.polled()).toBe(dues.length);
    expect(s.counter('nic_irqs')).toBeGreaterThanOrEqual(16);
    expect(s.counter('net_csum_errors')).toBe(0); // CM checks every packet's sum in software
  });

  it('rx-frames (with a period) makes fewer interrupts of the same message', () => {
    const off = server(nicOf('ipoib-ud'));
    deliver(off, off.post(1, off.k.clock.ns));
    const mod = server(nicOf('ipoib-ud', { rxFrames: 64, rxUsecs: 1000 }));
    deliver(mod, mod.post(1, mod.k.clock.ns));
    expect(mod.polled()).toBe(off.polled());
    expect(mod.counter('nic_irqs')).toBeLessThan(off.counter('nic_irqs'));
    // 527 packets: about 9 RX interrupts instead of one per packet (the send-completion vector
    // of the ACKs fires besides, unmoderated on both).
    expect(mod.counter('nic_irqs')).toBeLessThan(off.counter('nic_irqs') / 4);
  });

  it("ixgbe's fixed ITR spaces interrupts: no two closer than rx-usecs", () => {
    const s = server(nicOf('ixgbe', { rxUsecs: 100 }));
    const dues = s.post(1, s.k.clock.ns);
    deliver(s, dues);
    expect(s.polled()).toBe(dues.length);
    const span = dues[dues.length - 1] - dues[0];
    expect(s.counter('nic_irqs')).toBeLessThanOrEqual(Math.ceil(span / 100_000) + 2);
    expect(s.counter('nic_irqs')).toBeGreaterThan(1);
  });

  it('a packet not yet arrived is not taken: the interrupt waits for its due time', () => {
    const s = server(nicOf('ipoib-cm'));
    const dues = s.post(1, s.k.clock.ns + 50_000);
    s.k.rt.poll();
    expect(s.counter('nic_irqs')).toBe(0);
    s.k.clock.ns = dues[0];
    s.k.rt.poll();
    expect(s.counter('nic_irqs')).toBe(1);
    expect(s.polled()).toBe(1);
  });
});

describe('NAPI and net_rx_action', () => {
  it('IPoIB polls at most its weight (4) per call; a full-weight poll stays listed and NET_RX is raised again', () => {
    const s = server(nicOf('ipoib-ud'));
    const dues = s.post(1, s.k.clock.ns);
    s.k.clock.ns = dues[dues.length - 1] + 1; // everything has arrived: one interrupt, then NAPI
    const nic = s.k.rt.workload.nic!;
    nic.recompute(1);
    // Take the interrupt by hand (no irq_exit): the poll list holds the RX NAPI, NET_RX raised.
    s.k.rt.ctx.hardirq++; // the hard IRQ only raises NET_RX; the test runs it
    nic.takeIrq(1, s.k.clock.ns);
    s.k.rt.ctx.hardirq--;
    expect(s.k.rt.softirqs.pending(1) & (1 << Softirq.NetRx)).not.toBe(0);
    s.k.rt.ctx.softirq++; // as __do_softirq would be running
    let before = s.polled();
    for (let run = 0; run < 20; run++) {
      nic.netRx(1);
      const got = s.polled() - before;
      before = s.polled();
      expect(got).toBeLessThanOrEqual(4);
      expect(got).toBe(4);
    }
    s.k.rt.ctx.softirq--;
    expect(s.counter('napi_full_weight')).toBe(20);
    expect(s.counter('net_rx_reraises')).toBe(20);
    expect(s.k.rt.softirqs.pending(1) & (1 << Softirq.NetRx)).not.toBe(0);
  });

  it('stops at netdev_budget (time_squeeze) and leaves the rest for the re-raised NET_RX', () => {
    // 8 pairs: 8 links into CPU 1 would still be one NAPI; the budget is met with a small
    // netdev_budget instead (net.core.netdev_budget is a sysctl).
    const s = server({ ...nicOf('ixgbe', { rxUsecs: 0 }), netdevBudget: 16 });
    const dues = s.post(1, s.k.clock.ns);
    s.k.clock.ns = dues[dues.length - 1] + 1;
    const nic = s.k.rt.workload.nic!;
    nic.recompute(1);
    s.k.rt.ctx.hardirq++; // the hard IRQ only raises NET_RX; the test runs it
    nic.takeIrq(1, s.k.clock.ns);
    s.k.rt.ctx.hardirq--;
    s.k.rt.ctx.softirq++;
    const before = s.polled();
    nic.netRx(1);
    s.k.rt.ctx.softirq--;
    // One poll of weight 64 (the kernel checks the budget after each poll), then the squeeze.
    expect(s.polled() - before).toBe(64);
    expect(s.counter('net_time_squeeze')).toBe(1);
    expect(s.counter('net_rx_reraises')).toBe(1);
  });

  it('ACKs every second full segment, on the sender: ACK packets reach CPU 0', () => {
    const s = server(nicOf('ixgbe', { rxUsecs: 0 }));
    const dues = s.post(1, s.k.clock.ns);
    deliver(s, dues);
    const full = Math.floor(MiB / 4 / payloadWords(nicOf('ixgbe')));
    expect(s.counter('tcp_acks_sent')).toBe(Math.floor(full / 2));
  });
});

describe('the payload pattern', () => {
  it("a message's words, written packet by packet, sum to patternSum (the reader's check)", () => {
    const i32 = new Int32Array(64 + 1000);
    for (const [seq, words] of [
      [1, 1],
      [7, 999],
      [123456789, 1000],
    ]) {
      let sum = 0;
      for (let off = 0; off < words; off += 100) {
        const n = writeHeader(i32, 0, seq, off, 100, words, words * 4);
        sum = fillPayload(i32, 0, 0, n, sum);
      }
      expect(sum | 0).toBe(patternSum(seq, words));
      expect(patternSum(seq + 1, words)).not.toBe(sum | 0);
    }
  });
});

describe('ixgbe_update_itr', () => {
  it('latency mode for a few small packets, bulk for many large ones, +2 µs for 4..47', () => {
    const c = itrContainer();
    c.packets = 2;
    c.bytes = 200;
    c.nextUpdate = 10;
    updateItr(c, 50, 10);
    expect(c.itr & 0x80).toBe(0x80); // LATENCY
    expect(c.itr & 0x7f).toBeLessThan(50);
    c.packets = 300;
    c.bytes = 300 * 1500;
    c.nextUpdate = 11;
    updateItr(c, 50, 11);
    expect(c.itr & 0x80).toBe(0); // BULK
    c.packets = 10;
    c.bytes = 10 * 1500;
    c.nextUpdate = 12;
    updateItr(c, 50, 12);
    expect(c.itr).toBe(52);
    c.nextUpdate = 0; // stale: more than a jiffy since the last update
    c.packets = 10;
    updateItr(c, 50, 12);
    expect(c.itr).toBe(10 | 0x80);
  });
});
