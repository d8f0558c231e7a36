/**
 * The links of the network path and what each CPU's NIC receives from them: the rings' sizes, and
 * the RX side of a NIC as its poll sees it (every data link into the CPU, read at its L_NAPI
 * cursor, and every ACK ring back to it, read at its head; packets of one link arrive in order).
 * Shared words: ./layout.ts. Context: whoever owns the CPU; never allocates once built.
 */
import { SpscRing } from '../shm/ring.js';
import { ackRegion, dataRegion, getTime, L_GRO, L_NAPI, linkRegion, P_DUE_LO, PACKET_HEADER_WORDS } from './layout.js';
import { mss, type NicOptions } from './profiles.js';

/** One directed link of a connection, as its two ends see it. */
export interface LinkSpec {
  instance: number;
  dir: number;
  /** CPU of the sending task and of the receiving task. */
  fromCpu: number;
  toCpu: number;
  /** Task id of the receiving task (NET_RX wakes it). */
  receiver: number;
  /** CPU whose NIC takes this link's ACKs (the reverse flow's receive vector); default fromCpu. */
  ackRxCpu?: number;
  /** CPU whose send-completion vector an ACK of this link completes on; -1 or absent: the CPU that sent it. */
  ackTxCpu?: number;
}

/** Payload words per packet: the MSS in whole words. */
export function payloadWords(o: NicOptions): number {
  return Math.max(1, Math.floor(mss(o) / 4));
}

/**
 * Ring capacities (powers of two), sized so that no ring fills in a ping-pong of one message per
 * link: the data ring holds a whole message's packets (or `ringBytes` of slots, if more: the
 * socket's receive buffer); the ACK ring one message's ACKs (one per two segments) plus slack;
 * the send-completion ring two messages' packets for every link the CPU sends on. Not a driver's
 * ring sizes (IPoIB's 256, ixgbe's 512 descriptors): with no TCP window the sender never waits,
 * so a smaller ring would drop what the kernel would have throttled (net_events_dropped counts it).
 */
export function netCapacities(o: NicOptions, msgBytes: number, ringBytes: number, linksPerCpu: number) {
  const pkts = Math.ceil(Math.ceil(msgBytes / 4) / payloadWords(o));
  const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(2, n)));
  const slotBytes = (PACKET_HEADER_WORDS + payloadWords(o)) * 4;
  const data = Math.max(pow2(pkts), 2 ** Math.floor(Math.log2(Math.max(2, ringBytes / slotBytes))));
  return {
    packets: pkts,
    data: Math.min(data, 1 << 20),
    ack: pow2(pkts / 2 + 2),
    txc: pow2(2 * pkts * linksPerCpu + 8),
  };
}

/** A ring a CPU's RX poll reads: a data link's (at its cursor) or an ACK ring (at its head). */
export interface RxSource {
  ring: SpscRing;
  /** Link words (data sources) or -1 (ACK rings). */
  link: number;
  receiver: number;
  /** The ACK ring this data link's receiver answers into, and the CPU it goes to. */
  ack: SpscRing | null;
  ackCpu: number;
  /** Where the ACK's send completion goes (-1: the CPU running NET_RX): ./vectors.ts. */
  ackTxCpu: number;
}

/** Every CPU's RX sources, and the queries moderation and NAPI make of them. */
export class RxQueues {
  private readonly rx: RxSource[][] = [];
  /** Each data link's source by its link word (the reader's view of its socket: ./sock.ts). */
  private readonly byLink = new Map<number, RxSource>();
  /** nth()'s merge cursors, one per RX source of a CPU. */
  private readonly cursors: Int32Array;
  /** The record index arrived() found (valid after it returns a source). */
  idx = -1;

  constructor(
    private readonly i32: Int32Array,
    regions: Record<string, number>,
    links: readonly LinkSpec[],
    cpus: number,
  ) {
    for (let c = 0; c < cpus; c++) this.rx.push([]);
    for (const l of links) {
      const ack = new SpscRing(i32, regions[ackRegion(l.instance, l.dir)]);
      const data: RxSource = {
        ring: new SpscRing(i32, regions[dataRegion(l.instance, l.dir)]),
        link: regions[linkRegion(l.instance, l.dir)],
        receiver: l.receiver,
        ack,
        ackCpu: l.ackRxCpu ?? l.fromCpu,
        ackTxCpu: l.ackTxCpu ?? -1,
      };
      this.rx[l.toCpu].push(data);
      this.byLink.set(data.link, data);
      this.rx[l.ackRxCpu ?? l.fromCpu].push({ ring: ack, link: -1, receiver: -1, ack: null, ackCpu: -1, ackTxCpu: -1 });
    }
    this.cursors = new Int32Array(Math.max(1, ...this.rx.map((r) => r.length)));
  }

  /** The data link whose link words start at `link` (a reader's own link; construction time only). */
  source(link: number): RxSource {
    const s = this.byLink.get(link);
    if (s === undefined) throw new Error(`net: no data link at word ${link}`);
    return s;
  }

  /** The record a source's poll would take next, or -1. */
  head(s: RxSource): number {
    if (s.link < 0) return s.ring.peek();
    // NAPI's cursor: what it handed to TCP (L_NAPI) and what GRO holds in this poll (L_GRO, gro.ts).
    const pos = (this.i32[s.link + L_NAPI] + this.i32[s.link + L_GRO]) | 0;
    return pos === s.ring.produced() ? -1 : s.ring.slotAt(pos);
  }

  /** When the record at `idx` of source `s` finishes arriving (ns). */
  dueOf(s: RxSource, idx: number): number {
    return getTime(this.i32, s.link >= 0 ? idx + P_DUE_LO : idx);
  }

  /** Arrival time of the earliest packet waiting for CPU `c`'s RX poll (+Infinity: none). */
  first(c: number): number {
    const src = this.rx[c];
    let first = Number.POSITIVE_INFINITY;
    for (let k = 0; k < src.length; k++) {
      const idx = this.head(src[k]);
      if (idx < 0) continue;
      const due = this.dueOf(src[k], idx);
      if (due < first) first = due;
    }
    return first;
  }

  /** The arrival time of the n-th waiting packet, over all links (+Infinity: fewer wait). */
  nth(c: number, n: number): number {
    const src = this.rx[c];
    const i32 = this.i32;
    const cur = this.cursors;
    for (let k = 0; k < src.length; k++) {
      const s = src[k];
      cur[k] = s.link >= 0 ? i32[s.link + L_NAPI] : s.ring.consumed();
    }
    // Each link's packets arrive in order: merge, advancing the earliest cursor each step.
    let due = Number.POSITIVE_INFINITY;
    for (let taken = 0; taken < n; taken++) {
      let best = Number.POSITIVE_INFINITY;
      let bestK = -1;
      for (let k = 0; k < src.length; k++) {
        const s = src[k];
        if (cur[k] === s.ring.produced()) continue;
        const d = this.dueOf(s, s.ring.slotAt(cur[k]));
        if (d < best) {
          best = d;
          bestK = k;
        }
      }
      if (bestK < 0) return Number.POSITIVE_INFINITY;
      cur[bestK] = (cur[bestK] + 1) | 0;
      due = best;
    }
    return due;
  }

  /**
   * The source of the earliest packet that has arrived on CPU `c` by `now` (its record index in
   * {@link idx}), or null: what a completion queue would hand the poll next.
   */
  arrived(c: number, now: number): RxSource | null {
    const src = this.rx[c];
    let best: RxSource | null = null;
    let bestDue = now;
    for (let k = 0; k < src.length; k++) {
      const idx = this.head(src[k]);
      if (idx < 0) continue;
      const due = this.dueOf(src[k], idx);
      if (due <= bestDue) {
        best = src[k];
        this.idx = idx;
        bestDue = due;
      }
    }
    return best;
  }
}
