/**
 * TCP's receive side of the network path: what NAPI hands to TCP for each data link (tcp_v4_rcv:
 * onto the socket's backlog while the reader owns the socket, ./sock.ts, else tcp_v4_do_rcv at
 * once: the socket's cursor L_POLLED, __tcp_ack_snd_check's ACK, sk_data_ready's wake), and the
 * reader's side of the socket lock (__sk_flush_backlog, release_sock), which runs the same receive
 * in the reader's context. Split out of ./nic.ts, which owns the NIC's interrupts and NAPI and
 * hands skbs here (directly, or through GRO: ./gro.ts).
 *
 * Shared words: the link's L_NAPI, L_POLLED, L_SEGS and L_SOCK, and the ACK ring (./layout.ts).
 * Context: NET_RX on the receiving CPU (deliver), or the reading task on the CPU it owns (the
 * socket calls); never allocates.
 */
import { CpuCounter, GlobalCounter, TaskState } from '../hw/layout.js';
import type { CpuContext } from '../kernel/context.js';
import type { Scheduler } from '../kernel/sched/core.js';
import type { SpscRing } from '../shm/ring.js';
import { EV_BYTES, EV_DUE, L_NAPI, L_POLLED, L_SEGS, putTime } from './layout.js';
import type { RxQueues, RxSource } from './links.js';
import { TCP_IP_HEADER_BYTES } from './profiles.js';
import { backlogAdd, backlogFull, backlogSegs, sockRelease, sockTake } from './sock.js';

/** Nic.posted: a packet of `ipBytes` left CPU `c` for CPU `to`, arriving at `due`. */
export type Post = (c: number, to: number, due: number, ipBytes: number, txCpu: number) => void;

export class TcpRx {
  constructor(
    private readonly ctx: CpuContext,
    private readonly sched: Scheduler,
    private readonly rxq: RxQueues,
    /** An ACK's wire time (ns): wireNs of a bare TCP/IP header. */
    private readonly ackWireNs: number,
    /** Where an ACK goes once queued: the NIC's send path (its completion, the receiver told). */
    private readonly post: Post,
  ) {}

  /**
   * An skb of `n` segments (`full` MSS-sized) of `s` handed to TCP (one segment without GRO):
   * tcp_v4_rcv, onto the socket's backlog while the reader owns the socket (./sock.ts), else TCP's
   * receive at once. Context: NET_RX on CPU `c`.
   */
  deliver(c: number, s: RxSource, n: number, full: number, now: number): void {
    const i32 = this.ctx.i32;
    i32[s.link + L_NAPI] = (i32[s.link + L_NAPI] + n) | 0;
    if (backlogAdd(i32, s.link, n, full)) this.ctx.count(CpuCounter.tcp_backlog);
    else this.tcpReceive(c, s, n, full, now);
  }

  /** TCP's receive (tcp_v4_do_rcv) of `n` segments of `s`: the socket's cursor, the ACK check, the wake. */
  private tcpReceive(c: number, s: RxSource, n: number, full: number, now: number): void {
    const i32 = this.ctx.i32;
    const pos = Atomics.load(i32, s.link + L_POLLED);
    Atomics.store(i32, s.link + L_POLLED, (pos + n) | 0);
    // __tcp_ack_snd_check: ACK once more than one full segment is unacknowledged.
    const segs = i32[s.link + L_SEGS] + full;
    i32[s.link + L_SEGS] = segs;
    if (full > 0 && segs >= 2) {
      i32[s.link + L_SEGS] = 0;
      this.sendAck(c, s, now);
    }
    // sk_data_ready → sock_def_readable: wake the reader if it sleeps (Dekker pair with
    // sleepCurrent's store of Sleeping and its re-check of L_POLLED).
    // sock_def_readable wakes with wake_up_interruptible_sync_poll: WF_SYNC (placement reads it).
    if (this.sched.rqs.state(s.receiver) === TaskState.Sleeping) this.sched.wakeUp(s.receiver, true);
  }

  /** The data link whose words start at `link`, for its reader's socket calls. Construction time only. */
  source(link: number): RxSource {
    return this.rxq.source(link);
  }

  /**
   * __sk_flush_backlog by the reader that owns `s`'s socket, running on CPU `c`: TCP's receive of
   * the backlog, in the reader's context (its ACK leaves from CPU `c`). True if it held segments.
   * Context: the reading task, on the CPU it owns.
   */
  flushBacklog(c: number, s: RxSource, now: number): boolean {
    const v = sockTake(this.ctx.i32, s.link);
    const n = backlogSegs(v);
    if (n === 0) return false;
    this.ctx.count(CpuCounter.tcp_backlog_runs);
    this.tcpReceive(c, s, n, backlogFull(v), now);
    return true;
  }

  /** release_sock by the reader: the backlog processed, then ownership dropped. Context: as flushBacklog. */
  releaseSock(c: number, s: RxSource, now: number): void {
    // Each retry follows a backlog NET_RX added meanwhile, which the flush processes.
    while (!sockRelease(this.ctx.i32, s.link)) this.flushBacklog(c, s, now);
  }

  private sendAck(c: number, s: RxSource, now: number): void {
    const ring = s.ack as SpscRing;
    const idx = ring.claim();
    if (idx < 0) {
      // A full ACK ring: counted; the next ACK covers it (ACKs are cumulative).
      Atomics.add(this.ctx.i32, this.ctx.R.globalCounters + GlobalCounter.net_events_dropped, 1);
      return;
    }
    const due = now + this.ackWireNs;
    putTime(this.ctx.i32, idx + EV_DUE, due);
    this.ctx.i32[idx + EV_BYTES] = TCP_IP_HEADER_BYTES;
    ring.publish();
    this.ctx.count(CpuCounter.tcp_acks_sent);
    this.post(c, s.ackCpu, due, TCP_IP_HEADER_BYTES, s.ackTxCpu);
  }
}
