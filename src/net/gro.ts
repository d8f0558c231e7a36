/**
 * GRO, receive side (5.15 net/core/dev.c napi_gro_receive → dev_gro_receive → inet_gro_receive →
 * tcp4_gro_receive / tcp_gro_receive in net/ipv4/tcp_offload.c), as the lab's NAPI RX poll
 * (nic.ts, pollRx) uses it: the in-order segments of one flow taken in one poll are merged into
 * one skb, and TCP's receive (the socket's cursor, __tcp_ack_snd_check, sk_data_ready's wake)
 * runs once per merged skb instead of once per segment.
 *
 * Where the drivers enable it (GRO_BY_DEFAULT): ixgbe hands every packet to napi_gro_receive
 * (ixgbe_rx_skb) and NETIF_F_GRO is on by default (NETIF_F_SOFT_FEATURES, set for every device by
 * register_netdevice); IPoIB datagram mode hands UD receives to napi_gro_receive
 * (ipoib_ib_handle_rx_wc); IPoIB connected mode does not: ipoib_cm_handle_rx_wc calls
 * netif_receive_skb.
 *
 * Emulates tcp_gro_receive's rules for the lab's traffic (one flow per link, in order, equal
 * timestamps within a message):
 *   - a segment is appended to its flow's held skb unless that skb would reach GRO_MAX_SIZE
 *     (skb_gro_receive: `p->len + len >= gro_max_size` → -E2BIG: the held skb is flushed and the
 *     segment starts a new one);
 *   - a segment shorter than the MSS is appended and then flushes the skb (out_check_final:
 *     `flush = len < mss`; a message's last segment also carries PSH, which flushes as well);
 *   - the poll's end flushes every held skb (napi_complete_done → napi_gro_flush).
 * Differences: 5.15's napi_poll, after a poll that used its whole weight, flushes only skbs
 * older than a jiffy at HZ >= 1000 (`napi_gro_flush(n, HZ >= 1000)`); here every poll's end
 * flushes all. MAX_GRO_SKBS (8 flows held at once) is not reached: a CPU receives on at most a
 * few links. Headers are not rewritten (the lab's packets have none).
 *
 * Shared words: L_GRO of each link (src/net/layout.ts): segments polled and held, not yet handed
 * to TCP; the NAPI cursor is L_NAPI + L_GRO. Always 0 between polls.
 *
 * Context: NET_RX on the receiving CPU's owner; never allocates after construction.
 */
import { L_GRO } from './layout.js';
import type { RxSource } from './links.js';
import type { NicProfileName } from './profiles.js';

/** GRO_MAX_SIZE (include/linux/netdevice.h, 5.15): 65536 bytes of payload per merged skb. */
export const GRO_MAX_SIZE = 65536;

/** Whether each NIC profile's driver hands receives to napi_gro_receive with GRO on by default. */
export const GRO_BY_DEFAULT: Readonly<Record<NicProfileName, boolean>> = {
  'ipoib-cm': false, // ipoib_cm_handle_rx_wc → netif_receive_skb
  'ipoib-ud': true, // ipoib_ib_handle_rx_wc → napi_gro_receive
  ixgbe: true, // ixgbe_rx_skb → napi_gro_receive; NETIF_F_GRO in NETIF_F_SOFT_FEATURES
};

/** Hand `n` segments (`full` of them MSS-sized) of source `s` to TCP. */
export type Deliver = (c: number, s: RxSource, n: number, full: number, now: number) => void;

/** Held skbs of one poll: at most this many flows (links into one CPU). */
const MAX_HELD = 16;

export class Gro {
  /** The sources with a held skb in this poll, and what each holds. */
  private readonly held: (RxSource | null)[] = new Array(MAX_HELD).fill(null);
  private readonly full = new Int32Array(MAX_HELD);
  private readonly bytes = new Float64Array(MAX_HELD);
  private nHeld = 0;

  constructor(
    private readonly i32: Int32Array,
    private readonly deliver: Deliver,
  ) {}

  /**
   * napi_gro_receive of one data segment of `s` (`isFull`: MSS-sized). Returns the segments it
   * merged into an skb already held (0 or 1), for the `gro_merged` counter.
   */
  receive(c: number, s: RxSource, isFull: boolean, bytes: number, now: number): number {
    const i32 = this.i32;
    let k = this.indexOf(s);
    if (k >= 0 && this.bytes[k] + bytes >= GRO_MAX_SIZE) {
      this.flush(c, k, now); // skb_gro_receive: -E2BIG
      k = -1;
    }
    let merged = 0;
    if (k < 0) {
      k = this.nHeld++;
      this.held[k] = s;
      this.full[k] = 0;
      this.bytes[k] = 0;
    } else merged = 1;
    i32[s.link + L_GRO]++;
    if (isFull) this.full[k]++;
    this.bytes[k] += bytes;
    if (!isFull) this.flush(c, k, now); // a short segment (a message's last, with PSH) ends the skb
    return merged;
  }

  /** napi_gro_flush at the poll's end: every held skb to TCP, in the order they were started. */
  flushAll(c: number, now: number): void {
    while (this.nHeld > 0) this.flush(c, 0, now);
  }

  private indexOf(s: RxSource): number {
    for (let k = 0; k < this.nHeld; k++) if (this.held[k] === s) return k;
    return -1;
  }

  /** Hand held skb `k` to TCP and drop it from the list (order kept). */
  private flush(c: number, k: number, now: number): void {
    const s = this.held[k] as RxSource;
    const n = this.i32[s.link + L_GRO];
    this.i32[s.link + L_GRO] = 0;
    const full = this.full[k];
    for (let j = k + 1; j < this.nHeld; j++) {
      this.held[j - 1] = this.held[j];
      this.full[j - 1] = this.full[j];
      this.bytes[j - 1] = this.bytes[j];
    }
    this.held[--this.nHeld] = null;
    this.deliver(c, s, n, full, now);
  }
}
