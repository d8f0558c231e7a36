/**
 * tcp_lat: qperf's TCP latency test re-enacted on the emulated machine, over the network path
 * of src/net/ (NIC profiles, wire time, interrupt moderation, NAPI, ACKs).
 *
 * `instances` client/server pairs; pair i's client runs on CPU (clientCpu + i) mod cpus and its
 * server on (serverCpu + i) mod cpus, so pairs spread over the CPUs and share them when there
 * are more pairs than CPUs (seed 000's "8 qperf processes"). Each pair exchanges messages of
 * `msgSize` bytes, one in flight at a time, as qperf's stream_client_lat / stream_server_lat:
 * send_full then recv_full, the server echoing each message.
 *
 * send_full (the sender's tcp_sendmsg down to the NIC): the message is cut into MSS-sized
 * segments; each is written into a slot of the link's packet ring (the payload generated as it
 * is written: a counting pattern per message that lets the receiver check every word, standing
 * for copy_from_user; with the sum computed on the way where the profile computes checksums in
 * software), and pushed: stamped with its arrival time (the link is busy until the previous
 * packet has left: wire time from ./net/profiles.ts) and posted, so that the receiving CPU's NIC
 * fires when its moderation says. Without TSO each segment is pushed as soon as it is copied;
 * with it (ixgbe: src/net/tso.ts) a TSO skb's segments are pushed together once the skb is full
 * or the message ends, with one send completion. Copies go in 4 KiB chunks with a preemption
 * point between chunks, as copy_from_user and copy_to_user let interrupts in.
 * recv_full (qperf's loop of read()): copy out whatever TCP has received, chunk by chunk, owning
 * the socket meanwhile (NET_RX backlogs what arrives, and the reader processes the backlog when
 * it runs dry: src/net/sock.ts); sleep in sk_wait_data until NET_RX delivers more; a message is
 * done when all its words are read, checked against its sequence, offsets and sum (bad ones
 * counted in the link's L_BAD). One-way latency is the round trip / 2, as qperf reports it.
 *
 * Not modelled: TCP's windows and congestion control (the sender never waits for an ACK), Nagle
 * and TSO deferral (tcp_tso_should_defer), the receive queue's coalescing, delayed ACK timers (a
 * message's last partial segment is acknowledged by the reply's data, as ping-pong traffic is).
 * Shared memory: src/net/layout.ts. The endpoints' send and receive halves: ./tcp-endpoint.ts.
 */

import { GlobalCounter, Phase } from '../hw/layout.js';
import { TlWhat } from '../hw/timeline.js';
import { St } from '../hw/trace.js';
import type { HostedTask } from '../kernel/task.js';
import {
  ACK_RECORD_WORDS,
  ackRegion,
  dataRegion,
  L_BAD,
  L_READ,
  L_SENT,
  linkRegion,
  NIC_WORDS,
  nicRegion,
  PACKET_HEADER_WORDS,
  TXC_RECORD_WORDS,
  txcRegion,
} from '../net/layout.js';
import { type LinkSpec, netCapacities, payloadWords } from '../net/links.js';
import { Nic } from '../net/nic.js';
import { describeNic, type NicOptions } from '../net/profiles.js';
import { LINE_WORDS } from '../shm/layout.js';
import { MpscRing, SpscRing } from '../shm/ring.js';
import { DONE, Endpoint, PREEMPTED, recvBufRegion } from './tcp-endpoint.js';
import { pairCpus, pairLinks, pairTasks } from './tcp-placement.js';
import type { AppTaskSpec, CpuHost, Workload, WorkloadAttachment } from './workload.js';

/**
 * qperf's tcp_lat over the network path (src/net/): `instances` client/server pairs, pair i's
 * client on CPU (clientCpu + i) mod cpus and its server on (serverCpu + i) mod cpus.
 */
export interface TcpLatOptions {
  kind: 'tcp_lat';
  msgSize: number;
  clientCpu: number;
  serverCpu: number;
  /** Each direction's packet ring (the NIC's RX ring and the socket's receive queue), bytes; at least one message's packets. */
  ringBytes: number;
  nic: NicOptions;
  instances: number;
  /** `--app-cpus`: the CPUs the tasks may run on (sorted); absent: pair i pinned as below. */
  appCpus?: number[];
  /** `--nic-irq-cpus`: the CPUs the NIC's vectors fire on (src/net/vectors.ts); absent: the receiver's. */
  nicIrqCpus?: number[];
  /** This boot's RSS hash key (netdev_rss_key_fill's draw: src/net/vectors.ts), set per machine boot by the harness; absent: 0. */
  rssKey?: number;
}

/** Links per CPU at most (each end of each pair sends on one). */
function linksPerCpu(w: TcpLatOptions, cpus: number): number {
  // Placed tasks or vectors: any CPU may complete every link's sends.
  if (w.appCpus || w.nicIrqCpus) return 2 * w.instances;
  const n = new Array<number>(cpus).fill(0);
  for (let i = 0; i < w.instances; i++) {
    const p = pairCpus(w, cpus, i);
    n[p.client]++;
    n[p.server]++;
  }
  return Math.max(1, ...n);
}

export function tcpRegions(w: TcpLatOptions, cpus: number): Record<string, number> {
  const cap = netCapacities(w.nic, w.msgSize, w.ringBytes, linksPerCpu(w, cpus));
  const r: Record<string, number> = { [nicRegion]: NIC_WORDS * cpus };
  for (let c = 0; c < cpus; c++) r[txcRegion(c)] = MpscRing.wordsFor(cap.txc, TXC_RECORD_WORDS);
  for (let i = 0; i < w.instances; i++) {
    for (let d = 0; d < 2; d++) {
      r[dataRegion(i, d)] = SpscRing.wordsFor(cap.data, PACKET_HEADER_WORDS + payloadWords(w.nic));
      r[ackRegion(i, d)] = SpscRing.wordsFor(cap.ack, ACK_RECORD_WORDS);
      r[linkRegion(i, d)] = LINE_WORDS;
      r[recvBufRegion(i, d)] = Math.ceil(w.msgSize / 4);
    }
  }
  return r;
}

function tcpInit(
  w: TcpLatOptions,
  cpus: number,
  i32: Int32Array,
  regions: Record<string, number>,
  words: (base: number) => number | undefined,
): void {
  const cap = netCapacities(w.nic, w.msgSize, w.ringBytes, linksPerCpu(w, cpus));
  Nic.init(i32, new Float64Array(i32.buffer), regions[nicRegion], cpus, w.nic);
  for (let c = 0; c < cpus; c++)
    MpscRing.init(i32, regions[txcRegion(c)], cap.txc, TXC_RECORD_WORDS, words(regions[txcRegion(c)]));
  for (let i = 0; i < w.instances; i++) {
    for (let d = 0; d < 2; d++) {
      const data = regions[dataRegion(i, d)];
      SpscRing.init(i32, data, cap.data, PACKET_HEADER_WORDS + payloadWords(w.nic), words(data));
      SpscRing.init(i32, regions[ackRegion(i, d)], cap.ack, ACK_RECORD_WORDS, words(regions[ackRegion(i, d)]));
      i32.fill(0, regions[linkRegion(i, d)], regions[linkRegion(i, d)] + LINE_WORDS);
    }
  }
}

const active = (p: Phase) => p === Phase.Warmup || p === Phase.Measure;

const IDLE = 0;
const SENDING = 1;
const RECEIVING = 2;

class ClientTask extends Endpoint implements HostedTask {
  readonly startsOnPhase = true;
  private state = IDLE;
  private sentAt = 0;
  private seq = 0;
  private readonly recheckReply: () => boolean;
  private readonly recheckPhase: () => boolean;
  constructor(
    rt: CpuHost,
    nic: Nic,
    w: TcpLatOptions,
    instance: number,
    readonly id: number,
    peerCpu: number,
    txCpu = -1,
  ) {
    super(rt, nic, w, instance, 0, peerCpu, txCpu);
    this.recheckReply = () => this.readable() || rt.isStopping();
    this.recheckPhase = () => active(rt.phase) || rt.isStopping();
  }
  run(): void {
    const rt = this.rt;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      if (this.state === SENDING) {
        if (this.pump() === PREEMPTED) return;
        this.state = RECEIVING;
        continue;
      }
      if (this.state === RECEIVING) {
        const r = this.recv();
        if (r === PREEMPTED) return;
        if (r === DONE) {
          // --host-stalls: did the exchange overlap a host stall on either end's CPU?
          rt.ctx.recordSample(
            St.OneWay,
            St.OneWayHost,
            (rt.now() - this.sentAt) / 2,
            this.sentAt,
            rt.cpu,
            this.peerCpu,
          );
          rt.ctx.timeline.end(TlWhat.Exchange, rt.cpu, this.rxLinkWord, this.seq);
          this.state = IDLE;
          continue;
        }
        if (rt.sched.sleepCurrent(this.recheckReply)) return;
        continue;
      }
      if (!active(rt.phase)) {
        if (rt.sched.sleepCurrent(this.recheckPhase)) return;
        continue;
      }
      // A generation step (C_GEN_INFLIGHT): a message starts only if the phase, read again after
      // entering, still generates; once begun (L_SENT) the drain waits for its reply.
      if (!rt.genEnter()) continue;
      this.sentAt = rt.now();
      rt.ctx.timeline.exchange(rt.cpu, this.txLinkWord, this.rxLinkWord, this.seq + 1, this.sentAt);
      this.begin(++this.seq);
      rt.genExit();
      rt.globalCount(GlobalCounter.app_messages);
      this.state = SENDING;
    }
  }
}

class ServerTask extends Endpoint implements HostedTask {
  private sending = false;
  private seq = 0;
  private readonly recheck: () => boolean;
  constructor(
    rt: CpuHost,
    nic: Nic,
    w: TcpLatOptions,
    instance: number,
    readonly id: number,
    peerCpu: number,
    txCpu = -1,
  ) {
    super(rt, nic, w, instance, 1, peerCpu, txCpu);
    this.recheck = () => this.readable() || rt.isStopping();
  }
  run(): void {
    const rt = this.rt;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      if (this.sending) {
        if (this.pump() === PREEMPTED) return;
        this.sending = false;
        continue;
      }
      const r = this.recv();
      if (r === PREEMPTED) return;
      if (r === DONE) {
        // Echo at once, as qperf's server does.
        this.begin(++this.seq);
        this.sending = true;
        continue;
      }
      if (rt.sched.sleepCurrent(this.recheck)) return;
    }
  }
}

/** tcp_lat as a Workload (src/workloads/workload.ts). */
export { COPY_CHUNK_WORDS, recvBufRegion } from './tcp-endpoint.js';

export function tcpLat(w: TcpLatOptions, cpus: number): Workload {
  const pairs = w.instances === 1 ? '' : `${w.instances} pairs, `;
  return {
    kind: 'tcp_lat',
    describe: () =>
      w.instances === 1
        ? `tcp_lat ${w.msgSize} B between CPU ${w.clientCpu} and CPU ${w.serverCpu} over ${describeNic(w.nic)}`
        : `tcp_lat ${w.msgSize} B, ${pairs}spread over ${cpus} CPUs, over ${describeNic(w.nic)}`,
    regions: () => tcpRegions(w, cpus),
    init: (i32, regions, words) => tcpInit(w, cpus, i32, regions, words),
    tasks: () => {
      const out: AppTaskSpec[] = [];
      for (let i = 0; i < w.instances; i++) out.push(...pairTasks(w, cpus, i));
      return out;
    },
    attach: (rt) => tcpAttach(rt, w),
    // A message is in flight from its first packet (L_SENT) until its reader has it all (L_READ),
    // and ACKs and send completions still in a NIC's rings are not done either.
    busy(i32, regions) {
      for (let i = 0; i < w.instances; i++) {
        // A request read whole and its echo not yet begun: the server replies whatever the phase
        // (ServerTask), so the reply is owed. Between its L_READ (link 0) and its L_SENT (link 1)
        // both links balance, and a server thread the host held off there let the drain say
        // quiet and then sent (test/machine/drain.test.ts: "interrupts N -> N+2 after the drain",
        // the reply's receive interrupt and its send completion, twice at a host load of 8-9).
        // The reply's L_SENT is read first: the server adds L_READ before it.
        const replied = Atomics.load(i32, regions[linkRegion(i, 1)] + L_SENT);
        if (Atomics.load(i32, regions[linkRegion(i, 0)] + L_READ) !== replied) return 'a tcp_lat reply is owed';
        for (let d = 0; d < 2; d++) {
          const l = regions[linkRegion(i, d)];
          if (Atomics.load(i32, l + L_SENT) !== Atomics.load(i32, l + L_READ)) return 'a tcp_lat message is in flight';
          if (new SpscRing(i32, regions[ackRegion(i, d)]).length() > 0) return 'a TCP ACK is in flight';
        }
      }
      for (let c = 0; c < cpus; c++)
        if (new MpscRing(i32, regions[txcRegion(c)]).length() > 0) return 'a send completion is pending';
      return '';
    },
  };
}

/** Messages read corrupt, out of order or twice, summed over links (conservation checks). */
export function tcpBadMessages(w: TcpLatOptions, i32: Int32Array, regions: Record<string, number>): number {
  let n = 0;
  for (let i = 0; i < w.instances; i++)
    for (let d = 0; d < 2; d++) n += Atomics.load(i32, regions[linkRegion(i, d)] + L_BAD);
  return n;
}

/** Per-thread attachment: the NIC, hosted tasks for this thread and the NET_RX action. */
function tcpAttach(rt: CpuHost, w: TcpLatOptions): WorkloadAttachment {
  const links: LinkSpec[] = [];
  const clients: number[] = [];
  const servers: number[] = [];
  for (let i = 0; i < w.instances; i++) {
    const c = rt.plan.tasks.find((t) => t.app?.kind === 'tcp_client' && t.app.instance === i);
    const s = rt.plan.tasks.find((t) => t.app?.kind === 'tcp_server' && t.app.instance === i);
    if (!c || !s) throw new Error(`tcp_lat: pair ${i}'s client or server task missing from the plan`);
    clients.push(c.id);
    servers.push(s.id);
    links.push(...pairLinks(w, i, c, s));
  }
  const nic = new Nic(
    rt.ctx,
    w.nic,
    rt.R.workload,
    links,
    rt.softirqs,
    rt.sched,
    (irq, t) => rt.driver.interrupt(irq, t),
    () => rt.pollIrq(),
    (cpu, bit) => rt.chip.flag(cpu, bit),
  );
  return {
    nic,
    netRx(rt2: CpuHost) {
      nic.netRx(rt2.cpu);
    },
    task(id: number) {
      const ci = clients.indexOf(id);
      if (ci >= 0) return new ClientTask(rt, nic, w, ci, id, links[2 * ci].toCpu, links[2 * ci + 1].ackTxCpu ?? -1);
      const si = servers.indexOf(id);
      if (si >= 0) return new ServerTask(rt, nic, w, si, id, links[2 * si + 1].toCpu, links[2 * si].ackTxCpu ?? -1);
      return undefined;
    },
  };
}
