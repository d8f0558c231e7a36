/**
 * tcp_lat: qperf's TCP latency test re-enacted on the emulated machine.
 *
 * A client task on one CPU and a server task on another exchange messages of `msgSize` bytes,
 * one in flight at a time, as qperf does. Sending copies the message into a shared ring (the
 * wire and the receiver's DMA buffer), then raises a NIC interrupt on the receiving CPU. Its
 * hard-IRQ handler runs add_interrupt_randomness (and maybe a strategy hand-off) and raises
 * NET_RX; the NET_RX softirq marks the message delivered and wakes the receiving task, which
 * sleeps in recv between messages; the task copies the message out. One-way latency is the
 * round trip / 2, as qperf reports it.
 *
 * Region legend ("tcp:ring0" client→server, "tcp:ring1" server→client: SpscRing, see
 * src/shm/ring.ts; the producer is the sending task, the consumer the receiving task):
 *   slot words: 0 seq, 1 length in bytes, 2..3 send time (lo, hi), then the payload words.
 * "tcp:state" (Int32 words):
 *   DELIVERED+d  Atomics.store by the receiving CPU's owner in NET_RX (the ring's tail it has
 *                delivered up to); Atomics.load by the receiving task. d = direction 0/1.
 *   SEQ          plain, written only by the client task: messages sent.
 */

import { Vector } from '../machine/irqchip.js';
import { CpuCounter, GlobalCounter, Phase } from '../machine/layout.js';
import type { WorkloadOptions } from '../machine/options.js';
import type { Runtime } from '../machine/runtime.js';
import type { HostedTask } from '../machine/tasks.js';
import { St } from '../machine/trace.js';
import { LINE_WORDS } from '../shm/layout.js';
import { SpscRing } from '../shm/ring.js';
import type { Workload, WorkloadAttachment } from './workload.js';

const HDR = 4;
const DELIVERED = 0;
/** IRQ numbers of the two NIC queues (fed to add_interrupt_randomness). */
const NIC_IRQ = 40;
const TWO_32 = 4294967296;

export function tcpSlotWords(msgSize: number): number {
  return HDR + Math.ceil(msgSize / 4);
}

/** Ring capacity for `ringBytes` of slots: a power of two, at least 2. */
export function tcpRingCapacity(msgSize: number, ringBytes: number): number {
  const slots = Math.max(2, Math.floor(ringBytes / (tcpSlotWords(msgSize) * 4)));
  return 2 ** Math.floor(Math.log2(slots));
}

export function tcpRegions(msgSize: number, ringBytes: number): Record<string, number> {
  const cap = tcpRingCapacity(msgSize, ringBytes);
  const words = SpscRing.wordsFor(cap, tcpSlotWords(msgSize));
  return { 'tcp:ring0': words, 'tcp:ring1': words, 'tcp:state': LINE_WORDS };
}

export function tcpInit(
  i32: Int32Array,
  regions: Record<string, number>,
  msgSize: number,
  ringBytes: number,
  words: (base: number) => number | undefined,
): void {
  const cap = tcpRingCapacity(msgSize, ringBytes);
  SpscRing.init(i32, regions['tcp:ring0'], cap, tcpSlotWords(msgSize), words(regions['tcp:ring0']));
  SpscRing.init(i32, regions['tcp:ring1'], cap, tcpSlotWords(msgSize), words(regions['tcp:ring1']));
  i32.fill(0, regions['tcp:state'], regions['tcp:state'] + LINE_WORDS);
}

/** One end of the connection, shared by the client and the server. */
class Endpoint {
  readonly tx: SpscRing;
  readonly rx: SpscRing;
  private readonly buf: Int32Array;
  private readonly words: number;
  constructor(
    protected readonly rt: Runtime,
    readonly msgSize: number,
    readonly txDir: number,
    protected readonly state: number,
    readonly peerCpu: number,
  ) {
    const r = rt.R.workload;
    this.tx = new SpscRing(rt.i32, r[`tcp:ring${txDir}`]);
    this.rx = new SpscRing(rt.i32, r[`tcp:ring${1 - txDir}`]);
    this.words = Math.ceil(msgSize / 4);
    this.buf = new Int32Array(this.words);
    for (let i = 0; i < this.words; i++) this.buf[i] = (i * 2654435761) | 0;
  }

  /** A message is delivered and not yet read. */
  readable(): boolean {
    const delivered = Atomics.load(this.rt.i32, this.state + DELIVERED + (1 - this.txDir));
    return delivered !== this.rx.consumed();
  }

  /** send(): copy into the wire ring, raise the NIC interrupt on the peer. Returns false if the ring is full. */
  send(seq: number, t: number): boolean {
    const idx = this.tx.claim();
    if (idx < 0) return false;
    const i32 = this.rt.i32;
    i32[idx] = seq;
    i32[idx + 1] = this.msgSize;
    i32[idx + 2] = (t % TWO_32) | 0;
    i32[idx + 3] = Math.floor(t / TWO_32);
    const buf = this.buf;
    const base = idx + HDR;
    for (let i = 0; i < this.words; i++) i32[base + i] = buf[i];
    this.tx.publish();
    this.rt.chip.raise(this.peerCpu, Vector.Net, NIC_IRQ + this.txDir, t);
    return true;
  }

  /** recv(): copy the oldest delivered message out. Returns its send time, or -1 if none. */
  recv(): number {
    if (!this.readable()) return -1;
    const idx = this.rx.peek();
    if (idx < 0) return -1;
    const i32 = this.rt.i32;
    const t = (i32[idx + 2] >>> 0) + i32[idx + 3] * TWO_32;
    const buf = this.buf;
    const base = idx + HDR;
    let x = 0;
    for (let i = 0; i < this.words; i++) {
      const v = i32[base + i];
      buf[i] = v;
      x ^= v;
    }
    this.rx.release();
    return t + (x & 0); // x keeps the copy observable
  }
}

const active = (p: Phase) => p === Phase.Warmup || p === Phase.Measure;

class ClientTask extends Endpoint implements HostedTask {
  readonly startsOnPhase = true;
  private waiting = false;
  private sentAt = 0;
  private seq = 0;
  private readonly recheckReply: () => boolean;
  private readonly recheckPhase: () => boolean;
  constructor(
    rt: Runtime,
    readonly id: number,
    msgSize: number,
    state: number,
    peerCpu: number,
  ) {
    super(rt, msgSize, 0, state, peerCpu);
    this.recheckReply = () => this.readable() || rt.isStopping();
    this.recheckPhase = () => active(rt.phase) || rt.isStopping();
  }
  /** Messages in flight (for drain checks). */
  get inFlight(): boolean {
    return this.waiting;
  }
  run(): void {
    const rt = this.rt;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      if (this.waiting) {
        const t = this.recv();
        if (t >= 0) {
          const now = rt.now();
          rt.tracer.record(St.OneWay, (now - this.sentAt) / 2);
          this.waiting = false;
          continue;
        }
        if (rt.sched.sleepCurrent(this.recheckReply)) return;
        continue;
      }
      if (!active(rt.phase)) {
        if (rt.sched.sleepCurrent(this.recheckPhase)) return;
        continue;
      }
      // A generation step (C_GEN_INFLIGHT): a message is sent only if the phase, read again
      // after entering, still generates, so none is sent after the drain looked.
      if (!rt.genEnter()) continue;
      const now = rt.now();
      this.sentAt = now;
      const sent = this.send(++this.seq, now);
      rt.genExit();
      if (!sent) throw new Error('tcp_lat: client ring full with one message in flight');
      rt.globalCount(GlobalCounter.app_messages);
      this.waiting = true;
    }
  }
}

class ServerTask extends Endpoint implements HostedTask {
  private readonly recheck: () => boolean;
  constructor(
    rt: Runtime,
    readonly id: number,
    msgSize: number,
    state: number,
    peerCpu: number,
  ) {
    super(rt, msgSize, 1, state, peerCpu);
    this.recheck = () => this.readable() || rt.isStopping();
  }
  run(): void {
    const rt = this.rt;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      const t = this.recv();
      if (t >= 0) {
        // Echo at once, as qperf's server does.
        while (!this.send(0, rt.now())) {
          if (!rt.poll()) return;
        }
        continue;
      }
      if (rt.sched.sleepCurrent(this.recheck)) return;
    }
  }
}

type TcpOptions = Extract<WorkloadOptions, { kind: 'tcp_lat' }>;

/** tcp_lat as a Workload (src/workloads/workload.ts). */
export function tcpLat(w: TcpOptions): Workload {
  return {
    kind: 'tcp_lat',
    describe: () => `tcp_lat ${w.msgSize} B between CPU ${w.clientCpu} and CPU ${w.serverCpu}`,
    regions: () => tcpRegions(w.msgSize, w.ringBytes),
    init: (i32, regions, words) => tcpInit(i32, regions, w.msgSize, w.ringBytes, words),
    tasks: () => [
      { kind: 'tcp_client', cpu: w.clientCpu, peerCpu: w.serverCpu },
      { kind: 'tcp_server', cpu: w.serverCpu, peerCpu: w.clientCpu },
    ],
    attach: (rt) => tcpAttach(rt, w),
    // An exchange ends when the client consumes the reply, in NET_RX after the reply's
    // interrupt was handled (and its hand-off published): requests sent = replies consumed.
    busy(i32, regions) {
      const req = new SpscRing(i32, regions['tcp:ring0']);
      const rep = new SpscRing(i32, regions['tcp:ring1']);
      return req.produced() !== rep.consumed() ? 'a tcp_lat message is in flight' : '';
    },
  };
}

/** Per-thread attachment: hosted tasks for this thread and the NET_RX action. */
function tcpAttach(rt: Runtime, w: TcpOptions): WorkloadAttachment {
  const state = rt.R.workload['tcp:state'];
  const rings = [new SpscRing(rt.i32, rt.R.workload['tcp:ring0']), new SpscRing(rt.i32, rt.R.workload['tcp:ring1'])];
  const client = rt.plan.tasks.find((t) => t.app?.kind === 'tcp_client');
  const server = rt.plan.tasks.find((t) => t.app?.kind === 'tcp_server');
  if (!client || !server) throw new Error('tcp_lat: client or server task missing from the plan');
  return {
    // NET_RX: deliver what arrived for the task of this CPU and wake it (napi poll → sock → wake).
    netRx(rt2: Runtime) {
      const c = rt2.cpu;
      const dir = c === w.serverCpu ? 0 : c === w.clientCpu ? 1 : -1;
      if (dir < 0) return;
      const tail = rings[dir].produced();
      const prev = Atomics.load(rt2.i32, state + DELIVERED + dir);
      if (tail === prev) return;
      Atomics.store(rt2.i32, state + DELIVERED + dir, tail);
      rt2.count(CpuCounter.net_rx_packets, (tail - prev) | 0);
      rt2.sched.wakeUp(dir === 0 ? server.id : client.id);
    },
    task(id: number) {
      if (id === client.id) return new ClientTask(rt, id, w.msgSize, state, w.serverCpu);
      if (id === server.id) return new ServerTask(rt, id, w.msgSize, state, w.clientCpu);
      return undefined;
    },
  };
}
