/**
 * The NIC of each emulated CPU, its interrupts and NAPI (net/core/dev.c's net_rx_action), over
 * the shared layout of ./layout.ts.
 *
 * An interrupt is a device event the CPU's owner evaluates itself, as it does the irq thread's
 * arrivals: packets carry the time they finish arriving (the wire model, ./profiles.ts), and
 * the NIC's vectors fire at the time their moderation rule gives (NF_RX_DUE, NF_TX_DUE; the
 * earlier in CPUF_NIC_DUE). A sender that posts a packet sets NicPost in the receiving CPU's
 * flags (kicking it if idle); its owner then recomputes the dues, and takes the interrupt at
 * its first preemption point at or after the due time (raise time = due time, so irq_entry
 * measures the machine). Nobody spins.
 *
 *   hard IRQ (take):   add_interrupt_randomness (the driver; maybe a strategy's hand-off),
 *                      mask the vector, napi_schedule: onto the poll list, raise NET_RX
 *   NET_RX (netRx):    net_rx_action: each listed NAPI polled once, up to its weight; budget
 *                      netdev_budget (300) and 2 jiffies (netdev_budget_usecs = 2 s / HZ), then
 *                      time_squeeze and a re-raise; a NAPI that used its whole weight stays on
 *                      the list (re-raise); one that did less completes and unmasks
 *   NAPI RX poll:      the earliest arrived packet of any link into this CPU (data or ACK), one
 *                      at a time: the checksum pass where the profile does it in software, the
 *                      TCP receive (cursor, ACK every second full segment, sk_data_ready's wake)
 *   NAPI TX poll:      send completions whose time has come ('vector': send CQ with its own
 *                      interrupt and NAPI; 'shared': cleaned first in the RX vector's poll)
 *
 * Context: the CPU's owner (hard IRQ, softirq), any thread that owns a CPU; never allocates.
 */

import { Vector } from '../hw/irqchip.js';
import { CPU_FLAGS, CPUF_NIC_DUE, CpuCounter, CpuFlag, GlobalCounter, Softirq } from '../hw/layout.js';
import { TlWhat } from '../hw/timeline.js';
import { St } from '../hw/trace.js';
import type { CpuContext } from '../kernel/context.js';
import type { Scheduler } from '../kernel/sched/core.js';
import type { Softirqs } from '../kernel/softirq.js';
import { LINE_WORDS } from '../shm/layout.js';
import { MpscRing } from '../shm/ring.js';
import { WasmCsum } from './csum-wasm.js';
import { GRO_BY_DEFAULT, Gro } from './gro.js';
import {
  EV_BYTES,
  EV_DUE,
  EV_SEGS,
  getTime,
  N_ITR_US,
  N_LIST_LEN,
  N_LIST0,
  N_NEXT_UPDATE,
  N_RX_BYTES,
  N_RX_ITR,
  N_RX_PKTS,
  N_SCHED,
  N_TX_BYTES,
  N_TX_ITR,
  N_TX_PKTS,
  NAPI_RX,
  NAPI_TX,
  NF_LAST_IRQ,
  NF_RX_DUE,
  NF_TX_DUE,
  NIC_WORDS,
  nicRegion,
  P_BYTES,
  P_CSUM,
  P_WORDS,
  PACKET_HEADER_WORDS,
  putTime,
  txcRegion,
} from './layout.js';
import { type LinkSpec, payloadWords, RxQueues, type RxSource } from './links.js';
import { csumFold16 } from './packet.js';
import {
  ITR_INITIAL_USECS,
  type ItrContainer,
  itrMode,
  NIC_PROFILE,
  type NicOptions,
  type NicProfile,
  TCP_IP_HEADER_BYTES,
  updateItr,
  vectorItr,
  wireNs,
} from './profiles.js';
import { TcpRx } from './tcp-rx.js';

/** netdev_budget_usecs = 2 * USEC_PER_SEC / HZ: 2 jiffies, as a jiffies deadline. */
export const NETDEV_BUDGET_JIFFIES = 2;

/**
 * IRQ numbers fed to add_interrupt_randomness: the RX (or shared) vector and the send CQ's. Labels
 * of the emulation's own choosing (a real machine's are the MSI-X vectors the driver requested);
 * random.c only mixes the number in, so any distinct values do.
 */
export function nicIrq(cpu: number, napi: number): number {
  return 64 + 2 * cpu + (napi === NAPI_TX ? 1 : 0);
}

/** The containers' counts ixgbe_set_itr consumes (zeroed after each update). */
const ITR_COUNTS = [N_RX_PKTS, N_RX_BYTES, N_TX_PKTS, N_TX_BYTES] as const;
export class Nic {
  readonly profile: NicProfile;
  private readonly adaptive: boolean;
  private readonly itrOff: boolean;
  private readonly nic: number;
  private readonly rxq: RxQueues;
  private readonly txc: MpscRing[] = [];
  private readonly fullWords: number;
  /** TCP's receive side of every data link into this NIC's CPUs, and the readers' socket calls (./tcp-rx.ts). */
  readonly tcp: TcpRx;
  private readonly rxContainer: ItrContainer = { itr: 0, packets: 0, bytes: 0, nextUpdate: 0 };
  private readonly txContainer: ItrContainer = { itr: 0, packets: 0, bytes: 0, nextUpdate: 0 };
  /** The software checksum pass (WebAssembly SIMD; ./csum-wasm.ts). */
  private readonly csum = new WasmCsum();
  /** GRO where the profile's driver has it on by default (gro.ts); null: every segment to TCP at once. */
  private readonly gro: Gro | null;

  constructor(
    private readonly ctx: CpuContext,
    readonly opts: NicOptions,
    regions: Record<string, number>,
    links: readonly LinkSpec[],
    private readonly softirqs: Softirqs,
    readonly sched: Scheduler,
    /** add_interrupt_randomness and the hand-off: the random driver's interrupt(). */
    private readonly deviceInterrupt: (irq: number, t: number) => void,
    /** Take pending hard interrupts (between packets: they are enabled in softirq context). */
    private readonly pollIrq: () => void,
    /** Set `bit` in a CPU's flags and kick it if it idles (the irqchip's flag()). */
    private readonly flagCpu: (cpu: number, bit: number) => void,
  ) {
    this.profile = NIC_PROFILE[opts.profile];
    const mode = itrMode(opts);
    this.adaptive = this.profile.moderation === 'itr' && mode === 'adaptive';
    this.itrOff = this.profile.moderation === 'itr' && mode === 'off';
    this.nic = regions[nicRegion];
    this.fullWords = payloadWords(opts);
    const i32 = ctx.i32; // the send completions' rings are MPSC: several CPUs may complete on one vector (./vectors.ts)
    for (let c = 0; c < ctx.nrCpus; c++) this.txc.push(new MpscRing(i32, regions[txcRegion(c)]));
    this.rxq = new RxQueues(i32, regions, links, ctx.nrCpus);
    this.tcp = new TcpRx(ctx, sched, this.rxq, wireNs(opts, TCP_IP_HEADER_BYTES), (c, to, due, ip, txCpu) =>
      this.posted(c, to, due, ip, txCpu),
    );
    this.gro = GRO_BY_DEFAULT[opts.profile] ? new Gro(i32, this.tcp.deliver.bind(this.tcp)) : null;
  }

  /** Lay out the NIC words. Context: main thread, before workers start. */
  static init(i32: Int32Array, f64: Float64Array, nicBase: number, cpus: number, o: NicOptions): void {
    const p = NIC_PROFILE[o.profile];
    for (let c = 0; c < cpus; c++) {
      const b = nicBase + c * NIC_WORDS;
      i32.fill(0, b, b + NIC_WORDS);
      const itr =
        p.moderation !== 'itr'
          ? 0
          : itrMode(o) === 'adaptive'
            ? ITR_INITIAL_USECS
            : itrMode(o) === 'off'
              ? 0
              : o.rxUsecs;
      i32[b + N_ITR_US] = itr;
      i32[b + N_RX_ITR] = itr;
      i32[b + N_TX_ITR] = itr;
      const f = (b + LINE_WORDS) >> 1;
      f64[f + NF_RX_DUE] = Number.POSITIVE_INFINITY;
      f64[f + NF_TX_DUE] = Number.POSITIVE_INFINITY;
      f64[f + NF_LAST_IRQ] = Number.NEGATIVE_INFINITY;
    }
  }

  private w(c: number, word: number): number {
    return this.nic + c * NIC_WORDS + word;
  }
  private f(c: number, word: number): number {
    return ((this.nic + c * NIC_WORDS + LINE_WORDS) >> 1) + word;
  }

  // =========================================================================================
  // Sending side (called by the sending task on its CPU, or by NET_RX for an ACK)
  // =========================================================================================

  /** A packet of `ipBytes` left CPU `c` for CPU `to`, its last frame arriving at `due` (`segs`
   *  frames: a TSO skb, ./tso.ts): its send completion, and the receiving CPU told to look at its
   *  NIC. With `txCpu` >= 0 the completion goes to that CPU's send vector (--nic-irq-cpus,
   *  ./vectors.ts). Context: the owner of CPU `c`. */
  posted(c: number, to: number, due: number, ipBytes: number, txCpu = -1, segs = 1): void {
    const own = txCpu < 0 || txCpu === c;
    this.postCompletion(own ? c : txCpu, to, due, ipBytes, segs);
    // Our own send-completion vector may fire for it: recompute at the next preemption point;
    // another CPU's vector: that CPU is told to look too.
    if (own) Atomics.or(this.ctx.i32, this.ctx.cw(c, CPU_FLAGS), CpuFlag.NicPost);
    else if (txCpu !== to) this.flagCpu(txCpu, CpuFlag.NicPost);
  }

  /** The send completion onto `txCpu`'s ring (dropped and counted when full); `to` told. */
  private postCompletion(txCpu: number, to: number, due: number, ipBytes: number, segs: number): void {
    const ring = this.txc[txCpu];
    const idx = ring.claim();
    if (idx >= 0) {
      putTime(this.ctx.i32, idx + EV_DUE, due);
      this.ctx.i32[idx + EV_BYTES] = ipBytes;
      this.ctx.i32[idx + EV_SEGS] = segs;
      ring.publish();
    } else {
      Atomics.add(this.ctx.i32, this.ctx.R.globalCounters + GlobalCounter.net_events_dropped, 1);
    }
    this.ctx.count(CpuCounter.nic_tx_packets, segs);
    this.flagCpu(to, CpuFlag.NicPost);
  }

  // =========================================================================================
  // Interrupts
  // =========================================================================================

  /** The NIC's vectors on CPU `c` after something changed: when does each fire next? Context: owner of `c`. */
  recompute(c: number): void {
    const i32 = this.ctx.i32;
    const f64 = this.ctx.f64;
    const sched = i32[this.w(c, N_SCHED)];
    const shared = this.profile.txCompletion === 'shared';
    let rx = Number.POSITIVE_INFINITY;
    let tx = Number.POSITIVE_INFINITY;
    if ((sched & NAPI_RX) === 0) {
      let first = this.rxq.first(c);
      if (shared) first = Math.min(first, this.firstTx(c));
      rx = this.moderate(c, first);
    }
    if (!shared && (sched & NAPI_TX) === 0) tx = this.firstTx(c);
    f64[this.f(c, NF_RX_DUE)] = rx;
    f64[this.f(c, NF_TX_DUE)] = tx;
    f64[this.ctx.cf(c, CPUF_NIC_DUE)] = Math.min(rx, tx);
  }

  /** When the vector fires for events pending since `first`, by the profile's moderation. */
  private moderate(c: number, first: number): number {
    if (first === Number.POSITIVE_INFINITY) return first;
    const o = this.opts;
    if (this.profile.moderation === 'itr') {
      if (this.itrOff) return first;
      const earliest = this.ctx.f64[this.f(c, NF_LAST_IRQ)] + this.ctx.i32[this.w(c, N_ITR_US)] * 1000;
      return Math.max(first, earliest);
    }
    if (o.rxUsecs === 0 && o.rxFrames <= 1) return first;
    const byTime = first + o.rxUsecs * 1000;
    return o.rxFrames > 1 ? Math.min(byTime, this.rxq.nth(c, o.rxFrames)) : byTime;
  }

  /** The earliest send completion waiting on CPU `c` (+Infinity: none). */
  private firstTx(c: number): number {
    const idx = this.txc[c].peek();
    return idx < 0 ? Number.POSITIVE_INFINITY : getTime(this.ctx.i32, idx + EV_DUE);
  }

  /**
   * The hard IRQ of each vector due at `now` on CPU `c`: add_interrupt_randomness (and the
   * hand-off), mask, napi_schedule. Context: hardirq on the owner of `c`.
   */
  takeIrq(c: number, now: number): void {
    const ctx = this.ctx;
    const f64 = ctx.f64;
    const rxDue = f64[this.f(c, NF_RX_DUE)];
    const txDue = f64[this.f(c, NF_TX_DUE)];
    if (rxDue <= now) this.vector(c, NAPI_RX, rxDue);
    if (txDue <= now) this.vector(c, NAPI_TX, txDue);
    this.recompute(c);
  }

  private vector(c: number, napi: number, due: number): void {
    const ctx = this.ctx;
    const t = ctx.now();
    ctx.count(CpuCounter.irq_entries);
    ctx.count(CpuCounter.nic_irqs);
    ctx.tracer.record(St.IrqEntry, t - due);
    ctx.timeline.begin(TlWhat.Irq, c, napi === NAPI_RX ? Vector.Net : Vector.NetTx, nicIrq(c, napi), t);
    ctx.timeline.nicDue(c, napi, t, due);
    if (napi === NAPI_RX) ctx.f64[this.f(c, NF_LAST_IRQ)] = t;
    this.deviceInterrupt(nicIrq(c, napi), t);
    this.schedule(c, napi);
    // The clock is read again only for what records it (the timeline reads it itself when on).
    if (ctx.tracer.on) ctx.tracer.record(St.Hardirq, ctx.now() - t);
    ctx.timeline.end(TlWhat.Irq, c, napi === NAPI_RX ? Vector.Net : Vector.NetTx);
  }

  /** napi_schedule: mask (the bit), onto the poll list, raise NET_RX. */
  private schedule(c: number, napi: number): void {
    const i32 = this.ctx.i32;
    const s = this.w(c, N_SCHED);
    if ((i32[s] & napi) !== 0) return;
    i32[s] |= napi;
    const len = this.w(c, N_LIST_LEN);
    i32[this.w(c, N_LIST0) + i32[len]] = napi;
    i32[len]++;
    this.softirqs.raise(Softirq.NetRx);
  }

  // =========================================================================================
  // NET_RX
  // =========================================================================================

  /** net_rx_action on CPU `c`. Context: softirq on the owner of `c`. */
  netRx(c: number): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const len = this.w(c, N_LIST_LEN);
    const l0 = this.w(c, N_LIST0);
    // The list is taken (list_splice_init); NAPIs scheduled meanwhile go onto a fresh one.
    const n = i32[len];
    const a = i32[l0];
    const b = i32[l0 + 1];
    i32[len] = 0;
    const limit = ctx.jiffies() + NETDEV_BUDGET_JIFFIES;
    let budget = this.opts.netdevBudget;
    let repoll0 = 0;
    let repoll1 = 0;
    let left0 = 0;
    for (let k = 0; k < n; k++) {
      const napi = k === 0 ? a : b;
      const weight = napi === NAPI_RX ? this.profile.rxWeight : this.profile.txWeight;
      ctx.count(CpuCounter.napi_polls);
      const work = napi === NAPI_RX ? this.pollRx(c, weight) : this.pollTxNapi(c, weight);
      budget -= work;
      if (work >= weight) {
        ctx.count(CpuCounter.napi_full_weight);
        if (repoll0 === 0) repoll0 = napi;
        else repoll1 = napi;
      }
      if (budget <= 0 || ctx.jiffies() - limit >= 0) {
        ctx.count(CpuCounter.net_time_squeeze);
        if (k === 0 && n > 1) left0 = b;
        break;
      }
    }
    // Unpolled ones first, then those scheduled meanwhile, then the repoll list.
    const fresh = i32[len];
    const f0 = fresh > 0 ? i32[l0] : 0;
    const f1 = fresh > 1 ? i32[l0 + 1] : 0;
    let m = 0;
    if (left0 !== 0) i32[l0 + m++] = left0;
    if (f0 !== 0) i32[l0 + m++] = f0;
    if (f1 !== 0) i32[l0 + m++] = f1;
    if (repoll0 !== 0) i32[l0 + m++] = repoll0;
    if (repoll1 !== 0) i32[l0 + m++] = repoll1;
    i32[len] = m;
    if (m > 0) {
      ctx.count(CpuCounter.net_rx_reraises);
      this.softirqs.mark(c, Softirq.NetRx);
    }
  }

  /** The RX NAPI's poll (with ixgbe's TX clean first where completions share the vector). */
  private pollRx(c: number, weight: number): number {
    const ctx = this.ctx;
    const shared = this.profile.txCompletion === 'shared';
    let txLeft = false;
    if (shared) txLeft = this.cleanTx(c, this.profile.txWeight) >= this.profile.txWeight;
    let work = 0;
    const rxq = this.rxq;
    while (work < weight) {
      const now = ctx.now();
      const best = rxq.arrived(c, now);
      if (best === null) break;
      if (best.link >= 0) this.receive(c, best, rxq.idx, now);
      else this.ackReceived(c, best);
      work++;
      this.pollIrq();
    }
    this.gro?.flushAll(c, ctx.now()); // napi_gro_flush at the poll's end (gro.ts)
    if (work < weight && !txLeft) this.complete(c, NAPI_RX);
    return shared && txLeft ? weight : work;
  }

  /** A data packet: the checksum pass (software profiles), TCP's receive, the ACK, the wake. */
  private receive(c: number, s: RxSource, idx: number, now: number): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const words = i32[idx + P_WORDS];
    // CHECKSUM_NONE (ipoib-cm): the stack's csum_partial pass over the payload. Offloading
    // profiles skip it as their drivers do: ixgbe_rx_checksum sets CHECKSUM_UNNECESSARY from the
    // descriptor's L4 checksum status (ixgbe_main.c), ipoib UD sets it when the HCA reports
    // IB_DEVICE_UD_IP_CSUM (ipoib_ib.c, ipoib_ib_handle_rx_wc).
    if (this.profile.rxChecksumSoftware) {
      const sum = this.csum.words(i32, idx + PACKET_HEADER_WORDS, words, this.fullWords);
      if (csumFold16(sum) !== i32[idx + P_CSUM]) ctx.count(CpuCounter.net_csum_errors);
    }
    const bytes = i32[idx + P_BYTES];
    i32[this.w(c, N_RX_PKTS)]++;
    i32[this.w(c, N_RX_BYTES)] += bytes + TCP_IP_HEADER_BYTES;
    ctx.count(CpuCounter.net_rx_packets);
    const full = words === this.fullWords;
    if (this.gro !== null) ctx.count(CpuCounter.gro_merged, this.gro.receive(c, s, full, bytes, now));
    else this.tcp.deliver(c, s, 1, full ? 1 : 0, now);
  }

  /** tcp_ack on the data's sender: the ACK is consumed (no window is modelled). */
  private ackReceived(c: number, s: RxSource): void {
    const i32 = this.ctx.i32;
    i32[this.w(c, N_RX_PKTS)]++;
    i32[this.w(c, N_RX_BYTES)] += TCP_IP_HEADER_BYTES;
    s.ring.release();
    this.ctx.count(CpuCounter.net_rx_packets);
  }

  /** The send CQ's NAPI ('vector' profiles). */
  private pollTxNapi(c: number, weight: number): number {
    const work = this.cleanTx(c, weight);
    if (work < weight) this.complete(c, NAPI_TX);
    return work;
  }

  /** Free up to `limit` send completions whose time has come. */
  private cleanTx(c: number, limit: number): number {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const ring = this.txc[c];
    const now = ctx.now();
    let n = 0;
    while (n < limit) {
      const idx = ring.peek();
      if (idx < 0 || getTime(i32, idx + EV_DUE) > now) break;
      i32[this.w(c, N_TX_PKTS)] += i32[idx + EV_SEGS]; // ixgbe_clean_tx_irq: total_packets += gso_segs
      i32[this.w(c, N_TX_BYTES)] += i32[idx + EV_BYTES];
      ring.release();
      n++;
    }
    if (n > 0) ctx.count(CpuCounter.nic_tx_completions, n);
    return n;
  }

  /** napi_complete_done: off the poll list's bit, ITR update (ixgbe), unmask (recompute). */
  private complete(c: number, napi: number): void {
    const i32 = this.ctx.i32;
    i32[this.w(c, N_SCHED)] &= ~napi;
    if (this.adaptive && napi === NAPI_RX) this.setItr(c);
    this.recompute(c);
  }

  /** ixgbe_set_itr: both containers updated, the vector's interval the smaller. */
  private setItr(c: number): void {
    const i32 = this.ctx.i32;
    const j = this.ctx.jiffies();
    const rx = this.rxContainer;
    const tx = this.txContainer;
    const cur = i32[this.w(c, N_ITR_US)];
    rx.itr = i32[this.w(c, N_RX_ITR)];
    rx.packets = i32[this.w(c, N_RX_PKTS)];
    rx.bytes = i32[this.w(c, N_RX_BYTES)];
    rx.nextUpdate = i32[this.w(c, N_NEXT_UPDATE)];
    tx.itr = i32[this.w(c, N_TX_ITR)];
    tx.packets = i32[this.w(c, N_TX_PKTS)];
    tx.bytes = i32[this.w(c, N_TX_BYTES)];
    tx.nextUpdate = rx.nextUpdate;
    updateItr(tx, cur, j);
    updateItr(rx, cur, j);
    i32[this.w(c, N_RX_ITR)] = rx.itr;
    i32[this.w(c, N_TX_ITR)] = tx.itr;
    for (const word of ITR_COUNTS) i32[this.w(c, word)] = 0;
    i32[this.w(c, N_NEXT_UPDATE)] = rx.nextUpdate;
    i32[this.w(c, N_ITR_US)] = vectorItr(rx, tx);
  }
}
