/**
 * One end of a tcp_lat connection (./tcp-lat.ts): its socket's sending half, send_full down to
 * the NIC (segments copied into the link's ring and pushed, one at a time or as TSO skbs:
 * src/net/tso.ts), and its receiving half, recv_full (copy-out while owning the socket, the
 * backlog processed when it runs dry: src/net/sock.ts). ClientTask and ServerTask (tcp-lat.ts)
 * are its two roles. Shared memory: src/net/layout.ts; recv's buffer: recvBufRegion below.
 * Context: the endpoint's task, on the CPU it owns; never allocates once built.
 */
import {
  dataRegion,
  L_BAD,
  L_POLLED,
  L_READ,
  L_SENT,
  linkRegion,
  P_BYTES,
  P_DUE_LO,
  P_LAST,
  P_OFFSET,
  P_SEQ,
  P_WORDS,
  PACKET_HEADER_WORDS,
  putTime,
} from '../net/layout.js';
import { payloadWords, type RxSource } from '../net/links.js';
import type { Nic } from '../net/nic.js';
import { copyOut, fillPayload, patternSum, sealPacket, writeHeader } from '../net/packet.js';
import { NIC_PROFILE, type NicOptions, TCP_IP_HEADER_BYTES, wireNs } from '../net/profiles.js';
import { sockLock } from '../net/sock.js';
import { segsPerPush } from '../net/tso.js';
import { SpscRing } from '../shm/ring.js';
import type { CpuHost } from './workload.js';

/** What an endpoint needs of tcp_lat's options. */
export interface EndpointOptions {
  msgSize: number;
  nic: NicOptions;
}

/** Words copied between preemption points: a page, as copy_{from,to}_user's fault-in granularity. */
export const COPY_CHUNK_WORDS = 1024;

/**
 * recv()'s user buffer of the endpoint of instance `i` that sends in direction `d`: the message
 * size in words. Written and read only by that endpoint's task (recv copies each packet's payload
 * into it, plain stores; nothing else touches it). It lives in the machine's shared memory, not
 * in a per-thread array, so that a 1 MiB message does not make each thread malloc and free a
 * mapped 1 MiB block: freeing one raises glibc's mmap threshold for the whole process, and the
 * malloc arenas then keep what a sweep's later threads allocate (MIN_SHM_BYTES, src/shm/layout.ts).
 */
export function recvBufRegion(i: number, d: number): string {
  return `tcp:recvbuf${i}.${d}`;
}

/** pump()'s and recv()'s results. */
export const SENT = 0;
export const PREEMPTED = 1;
export const DONE = 0;
export const NEED_DATA = 2;

/** One end of a connection: its sending half (link txDir) and receiving half (the other). */
export class Endpoint {
  private readonly tx: SpscRing;
  private readonly rx: SpscRing;
  private readonly txLink: number;
  private readonly rxLink: number;
  private readonly words: number;
  private readonly pw: number;
  private readonly softCsum: boolean;
  /** recv's user buffer: a view of its shared-memory region (recvBufRegion). */
  private readonly buf: Int32Array;
  /** The link is busy until then (ns): the next packet starts on the wire after it. */
  private linkFree = 0;
  // send_full's progress through the current message.
  private sSeq = 0;
  private sOff = 0;
  private sIdx = -1;
  private sPos = 0;
  private sSum = 0;
  // recv_full's progress.
  private rSeq = 1;
  private rOff = 0;
  private rPos = 0;
  private rSum = 0;
  private rBad = false;
  /** The reader owns its socket (lock_sock; src/net/sock.ts). */
  private rOwned = false;
  /** The receiving link as NET_RX sees it, for the reader's backlog processing. */
  private readonly rxSrc: RxSource;
  /** Segments per push: the TSO size goal where the profile's driver has TSO, else 1 (src/net/tso.ts). */
  private readonly pushSegs: number;
  /** Segments copied into the ring and not yet pushed (positions tail .. tail + sHeld - 1). */
  private sHeld = 0;

  constructor(
    protected readonly rt: CpuHost,
    private readonly nic: Nic,
    w: EndpointOptions,
    instance: number,
    txDir: number,
    protected readonly peerCpu: number,
    /** Where this end's send completions go (-1: the CPU it runs on): src/net/vectors.ts. */
    private readonly txCpu = -1,
  ) {
    const r = rt.R.workload;
    this.tx = new SpscRing(rt.i32, r[dataRegion(instance, txDir)]);
    this.rx = new SpscRing(rt.i32, r[dataRegion(instance, 1 - txDir)]);
    this.txLink = r[linkRegion(instance, txDir)];
    this.rxLink = r[linkRegion(instance, 1 - txDir)];
    this.words = Math.ceil(w.msgSize / 4);
    this.pw = payloadWords(w.nic);
    this.softCsum = NIC_PROFILE[w.nic.profile].txChecksumSoftware;
    const b = r[recvBufRegion(instance, txDir)];
    this.buf = rt.i32.subarray(b, b + this.words);
    this.bytes = w.msgSize;
    this.wire = (ip: number) => wireNs(w.nic, ip);
    this.rxSrc = nic.tcp.source(this.rxLink);
    this.pushSegs = segsPerPush(w.nic);
  }
  private readonly bytes: number;
  private readonly wire: (ipBytes: number) => number;
  /** The TX link's word: with the RX link's, an exchange's identity on the timeline (TlWhat.Exchange). */
  protected get txLinkWord(): number {
    return this.txLink;
  }
  protected get rxLinkWord(): number {
    return this.rxLink;
  }

  /** Data delivered by NAPI and not yet read. */
  readable(): boolean {
    return Atomics.load(this.rt.i32, this.rxLink + L_POLLED) !== this.rx.consumed();
  }

  /** Start sending message `seq` (the drain counts it from here). */
  begin(seq: number): void {
    this.sSeq = seq;
    this.sOff = 0;
    this.sIdx = -1;
    Atomics.add(this.rt.i32, this.txLink + L_SENT, 1);
  }

  /** send_full, continued: SENT when the whole message is on the wire, PREEMPTED when the task
   *  lost the CPU at a preemption point (call again when it runs). Each segment is copied into
   *  the ring unpublished; a push (every `pushSegs` segments, and at the message's end) puts them
   *  on the wire together: one segment at a time without TSO, a TSO skb with it (src/net/tso.ts). */
  pump(): number {
    const rt = this.rt;
    const i32 = rt.i32;
    for (;;) {
      if (this.sIdx < 0) {
        const idx = this.tx.claimAhead(this.sHeld);
        if (idx < 0)
          throw new Error('tcp_lat: packet ring full with one message in flight (ring smaller than a message)');
        writeHeader(i32, idx, this.sSeq, this.sOff, this.pw, this.words, this.bytes);
        this.sIdx = idx;
        this.sPos = 0;
        this.sSum = 0;
      }
      const idx = this.sIdx;
      const n = i32[idx + P_WORDS];
      while (this.sPos < n) {
        const end = Math.min(n, this.sPos + COPY_CHUNK_WORDS);
        this.sSum = fillPayload(i32, idx, this.sPos, end, this.sSum);
        this.sPos = end;
        if (end < n && !rt.poll()) return PREEMPTED;
      }
      sealPacket(i32, idx, this.softCsum ? this.sSum : 0, 0); // its arrival time is set at the push
      this.sIdx = -1;
      this.sOff += n;
      this.sHeld++;
      const last = this.sOff === this.words;
      if (last || this.sHeld === this.pushSegs) this.push(last);
      if (last) return SENT;
      if (!rt.poll()) return PREEMPTED;
    }
  }

  /** tcp_push of the held segments: paced onto the wire from now, published, one send completion. */
  private push(last: boolean): void {
    const rt = this.rt;
    const i32 = rt.i32;
    const tail = this.tx.produced();
    let due = 0;
    let ip = 0;
    for (let k = 0; k < this.sHeld; k++) {
      const idx = this.tx.slotAt(tail + k);
      const frame = i32[idx + P_BYTES] + TCP_IP_HEADER_BYTES;
      due = Math.max(rt.now(), this.linkFree) + this.wire(frame);
      this.linkFree = due;
      putTime(i32, idx + P_DUE_LO, due);
      ip += frame;
    }
    this.tx.publishMany(this.sHeld);
    this.nic.posted(rt.cpu, this.peerCpu, due, ip, this.txCpu, this.sHeld);
    this.sHeld = 0;
    if (last && rt.ctx.timeline.on) rt.ctx.timeline.sent(rt.cpu, this.txLink, this.sSeq, Math.min(rt.now(), due), due);
  }

  /** recv_full, continued: DONE when a whole message has been read, NEED_DATA when nothing is
   *  delivered (sleep until NET_RX wakes the task), PREEMPTED as for pump(). The reader owns the
   *  socket from its first copy until it has nothing left to read (src/net/sock.ts): NET_RX puts
   *  what arrives meanwhile on the backlog, which the reader processes before it sleeps or
   *  returns, in its own context. A preempted reader keeps the socket, as a kernel task does. */
  recv(): number {
    const rt = this.rt;
    const i32 = rt.i32;
    const buf = this.buf;
    for (;;) {
      if (!this.readable()) {
        if (!this.rOwned) return NEED_DATA;
        // tcp_recvmsg with the receive queue empty: __sk_flush_backlog, then (nothing came)
        // release_sock before sk_wait_data sleeps.
        if (this.nic.tcp.flushBacklog(rt.cpu, this.rxSrc, rt.now())) continue;
        this.unlock();
        if (this.readable()) continue; // what the release processed, or NET_RX received since
        return NEED_DATA;
      }
      if (!this.rOwned) {
        sockLock(i32, this.rxLink);
        this.rOwned = true;
      }
      const idx = this.rx.peek();
      const n = i32[idx + P_WORDS];
      if (this.rPos === 0 && (i32[idx + P_SEQ] !== this.rSeq || i32[idx + P_OFFSET] !== this.rOff)) this.rBad = true;
      const p = idx + PACKET_HEADER_WORDS;
      const o = this.rOff;
      while (this.rPos < n) {
        const end = Math.min(n, this.rPos + COPY_CHUNK_WORDS);
        this.rSum = copyOut(i32, buf, p, o, this.rPos, end, this.rSeq, this.rSum);
        this.rPos = end;
        if (end < n && !rt.poll()) return PREEMPTED;
      }
      const last = i32[idx + P_LAST] === 1;
      this.rx.release();
      this.rOff += n;
      this.rPos = 0;
      if (last || this.rOff >= this.words) {
        if (this.rOff !== this.words || this.rSum !== patternSum(this.rSeq, this.words) || !last) this.rBad = true;
        if (this.rBad) Atomics.add(i32, this.rxLink + L_BAD, 1);
        this.unlock(); // recv returns: release_sock (the backlog's ACKs leave from this CPU)
        Atomics.add(i32, this.rxLink + L_READ, 1);
        this.rSeq++;
        this.rOff = 0;
        this.rSum = 0;
        this.rBad = false;
        return DONE;
      }
      if (!rt.poll()) return PREEMPTED;
    }
  }

  /** release_sock: the backlog processed, ownership dropped. */
  private unlock(): void {
    this.nic.tcp.releaseSock(this.rt.cpu, this.rxSrc, this.rt.now());
    this.rOwned = false;
  }
}
