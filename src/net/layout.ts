/**
 * Shared-memory layout of the network path (src/net/): one NIC per emulated CPU (its RX queue
 * and send queue, the interrupt vectors affine to that CPU), and per tcp_lat connection two
 * directed links (0: client → server, 1: server → client), each a packet ring with its ACK ring.
 *
 * Ownership codes as in src/hw/layout.ts: O = written only by whoever owns the CPU named
 * (ownership hand-off orders it), R = read by other threads (their loads say which pairing).
 *
 * NIC region "net:nic", NIC_WORDS per CPU:
 *   line 0 (Int32)
 *     N_SCHED       O  NAPI instances scheduled on this CPU (bit NAPI_RX, NAPI_TX). A scheduled
 *                      NAPI's interrupt is masked (the hard IRQ masks it and schedules the poll;
 *                      napi_complete unmasks it).
 *     N_LIST_LEN,   O  sd->poll_list: NAPI ids in poll order (at most two).
 *     N_LIST0..1
 *     N_ITR_US      O  the vector's interrupt throttle interval (µs; ixgbe's EITR).
 *     N_RX_ITR..    O  ixgbe_update_itr's two ring containers: itr (µs | LATENCY), packets and
 *     N_NEXT_UPDATE    bytes since the last update, and the jiffy by which the next must come.
 *   line 1 (Float64 from (base + LINE_WORDS) / 2)
 *     NF_RX_DUE     O  when the RX vector fires next (ns; +Infinity: masked or nothing pending).
 *     NF_TX_DUE     O  the same for the send-completion vector ('vector' profiles).
 *     NF_LAST_IRQ   O  when the RX (or shared) vector last fired: ITR's interval starts there.
 *   The earlier of the two dues is also kept in the CPU's CPUF_NIC_DUE (machine layout), which
 *   every preemption point and the idle task read (the owner's own loads: no ordering needed).
 *
 * Packet ring "net:data<i>.<d>" (SpscRing, src/shm/ring.ts): producer = the sending task (on
 * its CPU's thread), consumer = the receiving task, which releases a slot once it has copied
 * the payload out. Between them NAPI on the receiving CPU walks the ring with the link's
 * L_POLLED cursor: a slot is the NIC's RX descriptor until polled, the socket's until read.
 *   slot words: P_SEQ message number, P_OFFSET word offset in the message, P_WORDS payload
 *   words, P_BYTES payload bytes, P_DUE_LO/HI arrival time at the receiving NIC (ns: the wire
 *   model), P_LAST 1 on a message's last segment, P_CSUM the payload's checksum (the ones'-complement
 *   sum folded to 16 bits, packet.ts csumFold16) when the sender computes checksums in software; then the payload words.
 * ACK ring "net:ack<i>.<d>" (SpscRing): ACKs for link (i, d)'s data, produced by NET_RX on the
 *   data's receiving CPU, consumed by NAPI on the data's sending CPU. Record: due lo, hi, bytes.
 * Send-completion ring "net:txc<c>" (MpscRing): one record (due lo, hi, bytes, segments) per
 *   packet whose send completion CPU c's vector raises (a TSO skb is one packet of several
 *   segments on the wire: ./tso.ts); producers = the senders of those packets (tasks and
 *   NET_RX's ACKs on any CPU: with --nic-irq-cpus several CPUs complete on one vector, ./vectors.ts),
 *   each claiming a slot by the ring's compareExchange and publishing it (src/shm/ring.ts);
 *   consumer = NAPI on CPU c.
 * Link words "net:link<i>.<d>" (one line):
 *   L_POLLED  TCP's receive cursor: segments on the socket's receive queue or read (what the
 *             reader may copy). Written (Atomics.store) by TCP's receive: NET_RX on the receiving
 *             CPU while the socket is not owned, or the reader processing its backlog while it
 *             owns it; L_SOCK orders the two (./sock.ts). Atomics.load by the reader.
 *   L_SEGS    full segments received since the last ACK: written by whoever runs TCP's receive,
 *             under the same L_SOCK rule as L_POLLED (plain: L_SOCK's compareExchange orders it).
 *   L_SENT    Atomics.add by the sending task when a message's first packet is claimed;
 *   L_READ    Atomics.add by the receiving task when it has read a whole message. The drain
 *             (Atomics.load) waits for L_SENT = L_READ on every link, and for link 0's L_READ
 *             (requests read by the server) = link 1's L_SENT (echoes begun): a reply owed.
 *   L_BAD     Atomics.add by the receiving task: messages that arrived corrupt, out of order or
 *             twice (sequence, offset or checksum wrong). Conservation tests read it.
 */
import { LINE_WORDS } from '../shm/layout.js';

export const NIC_WORDS = 2 * LINE_WORDS;
export const N_SCHED = 0;
export const N_LIST_LEN = 1;
export const N_LIST0 = 2;
export const N_ITR_US = 4;
export const N_RX_ITR = 5;
export const N_RX_PKTS = 6;
export const N_RX_BYTES = 7;
export const N_TX_ITR = 8;
export const N_TX_PKTS = 9;
export const N_TX_BYTES = 10;
export const N_NEXT_UPDATE = 11;
export const NF_RX_DUE = 0;
export const NF_TX_DUE = 1;
export const NF_LAST_IRQ = 2;

/** NAPI instance ids (bits of N_SCHED). */
export const NAPI_RX = 1;
export const NAPI_TX = 2;

export const P_SEQ = 0;
export const P_OFFSET = 1;
export const P_WORDS = 2;
export const P_BYTES = 3;
export const P_DUE_LO = 4;
export const P_DUE_HI = 5;
export const P_LAST = 6;
export const P_CSUM = 7;
export const PACKET_HEADER_WORDS = 8;

export const ACK_RECORD_WORDS = 3;
export const TXC_RECORD_WORDS = 4;

export const L_POLLED = 0;
export const L_SEGS = 1;
export const L_SENT = 2;
export const L_READ = 3;
export const L_BAD = 4;
/** O of the receiving CPU (plain): segments its NAPI polled and GRO holds, not yet handed to TCP
 *  (src/net/gro.ts); the NAPI cursor is L_NAPI + L_GRO. 0 between polls. */
export const L_GRO = 5;
/** O of the receiving CPU (plain): segments its NAPI has handed to TCP, whether TCP's receive ran
 *  at once (L_POLLED) or the skb went onto the socket's backlog (L_SOCK). Read only by that CPU's
 *  NAPI and moderation (the RX ring's "polled" cursor). */
export const L_NAPI = 6;
/**
 * The socket's lock as TCP's receive sees it (./sock.ts): bit 0 the reader owns the socket
 * (lock_sock in tcp_recvmsg), bits 1-2 full segments in the backlog (saturating at 2: all that
 * __tcp_ack_snd_check needs), bits 3-23 segments in the backlog. Only the reader sets and clears
 * ownership; NET_RX adds to the backlog only while it is owned; every change is an
 * Atomics.compareExchange (or Atomics.or to take ownership of an empty, unowned word), so the
 * party that wins a change sees the other's plain writes before it (L_POLLED, L_SEGS).
 */
export const L_SOCK = 7;

// Times in two words: the shared memory's convention (src/shm/layout.ts).
export { getTime, putTime, TWO_32 } from '../shm/layout.js';

/** A NIC event record (send completions, ACKs on the wire): its due time, then the bytes it carries. */
export const EV_DUE = 0;
export const EV_BYTES = 2;
/** Send completions only: the segments the packet left as (more than one for a TSO skb: ./tso.ts). */
export const EV_SEGS = 3;

/** Region names. */
export const nicRegion = 'net:nic';
export const dataRegion = (i: number, d: number) => `net:data${i}.${d}`;
export const ackRegion = (i: number, d: number) => `net:ack${i}.${d}`;
export const linkRegion = (i: number, d: number) => `net:link${i}.${d}`;
export const txcRegion = (c: number) => `net:txc${c}`;
