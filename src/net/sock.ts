/**
 * The socket lock as TCP's receive meets it: the reader owns the socket while it is in
 * tcp_recvmsg (lock_sock), and a segment that arrives meanwhile goes onto the socket's backlog
 * instead of through TCP's receive; the reader processes the backlog, in its own context and on
 * its own CPU, when it runs out of queued data (__sk_flush_backlog, or release_sock before
 * sk_wait_data sleeps) and when it returns (release_sock → __release_sock → sk_backlog_rcv).
 *
 * Sources (linux-stable v5.15): net/ipv4/tcp_ipv4.c tcp_v4_rcv (`bh_lock_sock_nested(sk); if
 * (!sock_owned_by_user(sk)) ret = tcp_v4_do_rcv(sk, skb); else if (tcp_add_backlog(sk, skb))
 * goto discard_and_relse;`), tcp_add_backlog (an skb in sequence with the backlog's tail is
 * coalesced into it: skb_try_coalesce), net/ipv4/tcp.c tcp_recvmsg_locked (`if (copied >=
 * target) { __sk_flush_backlog(sk); } else { sk_wait_data(...) }`), net/core/sock.c
 * __release_sock and sk_wait_data (sk_wait_event releases the socket before it sleeps).
 *
 * What the lab keeps of it: the segments of the backlog (how many, and whether more than one of
 * them was full: all __tcp_ack_snd_check needs), in the link's L_SOCK word with the ownership
 * bit (layout.ts). Differences: every skb of a backlog is coalesced into one, so the reader's
 * processing makes one ACK check where the kernel makes one per skb skb_try_coalesce could not
 * merge (its MAX_SKB_FRAGS limit stops most large skbs): a backlog of k such skbs sends one ACK
 * here and up to k in one burst there. The backlog's limit (sk_rcvbuf + sk_sndbuf, then
 * TCPBacklogDrop) is not reached: the lab has no window, and a ping-pong's backlog is at most one
 * message. ACKs arriving while the socket is owned take the same path in the kernel; here they
 * carry no state (no window), so NAPI consumes them at once.
 *
 * Ordering: only the reader takes and drops ownership; NET_RX adds to the backlog only with a
 * compareExchange that finds ownership set, and runs TCP's receive itself only after a load that
 * finds it clear. The reader drops ownership only with a compareExchange from "owned, backlog
 * empty", so a segment is either backlogged (and the reader, whose later compareExchange sees
 * it, processes it) or received by NET_RX, never both and never neither. The party that wins a
 * change sees the plain writes (L_SEGS) the other made before its own change.
 *
 * Context: sockLock/sockTake/sockRelease by the reading task; backlogAdd by NET_RX on the
 * receiving CPU. Never allocates.
 */
import { L_SOCK } from './layout.js';

/** Bit 0: the reader owns the socket. */
export const SOCK_OWNED = 1;
const FULL_SHIFT = 1;
const FULL_MASK = 3;
const SEGS_SHIFT = 3;
/** Bits 3-23 count the backlog's segments (up to 2^21 - 1): more than a packet ring can hold
 *  (src/net/links.ts caps a ring at 2^20 slots), so the count never overflows into bit 24. */

/** The backlog's segments in a value of L_SOCK. */
export function backlogSegs(v: number): number {
  return v >>> SEGS_SHIFT;
}

/** Full segments in the backlog, saturating at 2 (more than one full segment: __tcp_ack_snd_check ACKs). */
export function backlogFull(v: number): number {
  return (v >>> FULL_SHIFT) & FULL_MASK;
}

/** lock_sock by the reader. The word is 0 when unowned (a backlog exists only while owned). */
export function sockLock(i32: Int32Array, link: number): void {
  Atomics.or(i32, link + L_SOCK, SOCK_OWNED);
}

/**
 * tcp_v4_rcv on NET_RX: onto the backlog if the reader owns the socket (true), else false and
 * the caller runs TCP's receive itself. Retries only when the reader changed the word meanwhile.
 */
export function backlogAdd(i32: Int32Array, link: number, segs: number, full: number): boolean {
  const w = link + L_SOCK;
  for (;;) {
    const v = Atomics.load(i32, w);
    if ((v & SOCK_OWNED) === 0) return false;
    const n = backlogSegs(v) + segs;
    const f = Math.min(2, backlogFull(v) + full);
    const next = (n << SEGS_SHIFT) | (f << FULL_SHIFT) | SOCK_OWNED;
    if (Atomics.compareExchange(i32, w, v, next) === v) return true;
  }
}

/**
 * The reader takes the backlog and keeps ownership (__sk_flush_backlog): the L_SOCK value it took
 * (read it with backlogSegs/backlogFull; 0 segments: the backlog was empty).
 */
export function sockTake(i32: Int32Array, link: number): number {
  const w = link + L_SOCK;
  for (;;) {
    const v = Atomics.load(i32, w);
    if (v === SOCK_OWNED) return v;
    if (Atomics.compareExchange(i32, w, v, SOCK_OWNED) === v) return v;
  }
}

/** release_sock's last step: drop ownership if the backlog is empty (true), else false (take it first). */
export function sockRelease(i32: Int32Array, link: number): boolean {
  return Atomics.compareExchange(i32, link + L_SOCK, SOCK_OWNED, 0) === SOCK_OWNED;
}
