/**
 * NIC profiles: the numbers that decide how a tcp_lat message becomes packets on a wire and
 * interrupts on a CPU. Every value is the driver's or the link's default, with its source; each
 * can be overridden (`--mtu`, `--link-rate`, `--rx-usecs`, `--rx-frames`). The sources are
 * quoted in docs/research/net.md (5.15 text where found; 6.1 where said).
 *
 * What a profile cannot run (the wire's serialisation, the card's interrupt moderation) is a
 * model: wire time is the packet's bytes on the wire over the link's data rate; moderation is
 * the driver's own rule (mlx4 CQ moderation, ixgbe's EITR with ixgbe_update_itr). Everything
 * else on the path (copies, checksums, NAPI, TCP's ACKs, the hand-offs) is run and measured.
 */

/** The NIC profiles, declared once: the CLI, the config, the checks and the help read this list. */
export const NIC_PROFILES = ['ipoib-cm', 'ipoib-ud', 'ixgbe'] as const;
export type NicProfileName = (typeof NIC_PROFILES)[number];
export const DEFAULT_NIC: NicProfileName = 'ipoib-cm';

/** IPv4 (20) + TCP with timestamps (32): a segment's payload is MTU − 52 (the MSS). */
export const TCP_IP_HEADER_BYTES = 52;

/**
 * Interrupt moderation styles:
 *   cq   mlx4 CQ moderation (cq_max_count, cq_period; mlx4_cq_modify, set by ethtool's
 *        rx-frames / rx-usecs on the IPoIB recv CQ): the event fires when rx-frames completions
 *        are waiting or rx-usecs after the first, whichever is first; 0/0 (the default: the CQ
 *        context is zeroed and nothing sets it) fires on every completion.
 *   itr  Intel's EITR: a minimum interval between the vector's interrupts. ixgbe's rx-usecs:
 *        0 off, 1 dynamic (ixgbe_update_itr adapts it after each poll), above 1 a fixed
 *        interval (ixgbe_set_coalesce). ixgbe has no rx-frames.
 */
export type ModerationStyle = 'cq' | 'itr';

export interface NicProfile {
  name: NicProfileName;
  summary: string;
  /** IP MTU in bytes. */
  mtu: number;
  /** Largest MTU the driver accepts. */
  maxMtu: number;
  /** Data rate in Gb/s (after line coding). */
  linkGbps: number;
  /** Bytes added to each IP packet before it is split into link packets (IPoIB's 4-byte encap). */
  encapBytes: number;
  /** Largest link packet payload (IB path MTU); Infinity where an IP packet is one frame. */
  linkMtu: number;
  /** Bytes on the wire per link packet beyond its payload (headers, CRCs, framing). */
  linkPacketOverhead: number;
  /** RX NAPI weight: packets one poll call takes at most. */
  rxWeight: number;
  /** TX completions: 'vector' a send CQ with its own interrupt and NAPI (weight txWeight);
   *  'shared' cleaned in the RX vector's poll (its interrupt fires for them too). */
  txCompletion: 'vector' | 'shared';
  /** TX NAPI weight ('vector') or TX clean work limit per poll ('shared'). */
  txWeight: number;
  moderation: ModerationStyle;
  /** Default rx-usecs (see ModerationStyle) and rx-frames. */
  rxUsecs: number;
  rxFrames: number;
  /** The receiver verifies TCP checksums in software (a pass over each packet's payload in NET_RX). */
  rxChecksumSoftware: boolean;
  /** The sender computes checksums in software (while it copies the payload). */
  txChecksumSoftware: boolean;
  /** What to suggest when an MTU above maxMtu is asked for. */
  maxMtuAdvice: string;
  /** The largest rx-usecs the driver takes ('itr': its EITR limit), with its source. */
  maxRxUsecs?: { value: number; source: string };
  /** Where each value comes from. */
  sources: string;
}

export const NIC_PROFILE: Record<NicProfileName, NicProfile> = {
  'ipoib-cm': {
    name: 'ipoib-cm',
    summary: 'IPoIB connected mode on a ConnectX-3 (mlx4), 4X QDR: MTU 65520, 32 Gb/s data, no CQ moderation',
    mtu: 65520,
    maxMtu: 65520,
    maxMtuAdvice: 'IPOIB_CM_MTU is the largest IPoIB MTU',
    linkGbps: 32,
    encapBytes: 4,
    linkMtu: 2048,
    linkPacketOverhead: 26,
    rxWeight: 4,
    txCompletion: 'vector',
    txWeight: 64,
    moderation: 'cq',
    rxUsecs: 0,
    rxFrames: 0,
    rxChecksumSoftware: true,
    txChecksumSoftware: true,
    sources:
      'IPOIB_CM_MTU 0x10000-0x10 (ipoib.h); 4X QDR 40 Gb/s signalling, 8b/10b = 32 Gb/s data; IB MTU 2048 assumed (the seed does not say; UD MTU 2044 implies it); RC packet LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B (ib_pack.h, IBA 7.8.2); recv NAPI weight IPOIB_NUM_WC = 4, send NAPI MAX_SEND_CQE = 64 (ipoib_napi_add, 5.15); every send signaled, send CQ on its own vector (ipoib_verbs.c); no CQ moderation unless ethtool sets it (mlx4_cq_alloc, ipoib_set_coalesce); CM RX leaves CHECKSUM_NONE and CM clears NETIF_F_IP_CSUM (ipoib_cm.c, ipoib_fix_features)',
  },
  'ipoib-ud': {
    name: 'ipoib-ud',
    summary: 'IPoIB datagram mode on a ConnectX-3 (mlx4), IB MTU 2048: MTU 2044, 32 Gb/s data, no CQ moderation',
    mtu: 2044,
    maxMtu: 4092,
    maxMtuAdvice: 'use --nic ipoib-cm for MTUs up to 65520',
    linkGbps: 32,
    encapBytes: 4,
    linkMtu: 2048,
    linkPacketOverhead: 34,
    rxWeight: 4,
    txCompletion: 'vector',
    txWeight: 64,
    moderation: 'cq',
    rxUsecs: 0,
    rxFrames: 0,
    rxChecksumSoftware: false,
    txChecksumSoftware: false,
    sources:
      "IPOIB_UD_MTU(ib_mtu) = ib_mtu - IPOIB_ENCAP_LEN (ipoib.h); UD packet LRH 8 + BTH 12 + DETH 8 + ICRC 4 + VCRC 2 = 34 B plus the 4-byte encap; NAPI weights and TX completions as ipoib-cm; checksum offload assumed (NETIF_F_RXCSUM when the HCA reports IB_DEVICE_UD_IP_CSUM, which ConnectX-3 firmware normally does; not confirmed for the seed's card)",
  },
  ixgbe: {
    name: 'ixgbe',
    summary: 'Intel 82599 10GbE (ixgbe): MTU 1500, 10 Gb/s, adaptive ITR (rx-usecs 1)',
    mtu: 1500,
    maxMtu: 9710,
    maxMtuAdvice: 'ixgbe jumbo frames stop at 9710',
    maxRxUsecs: { value: 1022, source: 'IXGBE_MAX_EITR' },
    linkGbps: 10,
    encapBytes: 0,
    linkMtu: Number.POSITIVE_INFINITY,
    linkPacketOverhead: 38,
    rxWeight: 64,
    txCompletion: 'shared',
    txWeight: 256,
    moderation: 'itr',
    rxUsecs: 1,
    rxFrames: 0,
    rxChecksumSoftware: false,
    txChecksumSoftware: false,
    sources:
      'ETH_DATA_LEN 1500, max_mtu IXGBE_MAX_JUMBO_FRAME_SIZE 9728 - 18; preamble 7 + SFD 1 + MAC 14 + FCS 4 + IFG 12 = 38 B per frame; NAPI weight 64 (netif_napi_add, 5.15); TX cleaned in ixgbe_poll with work limit IXGBE_DEFAULT_TX_WORK 256; rx_itr_setting = 1 (dynamic, ixgbe_sw_init), initial EITR IXGBE_20K_ITR (50 µs), ixgbe_update_itr bounds 10..126 µs; RX/TX checksum offload and TSO on by default',
  },
};

/** The NIC a tcp_lat machine runs: a profile with the user's overrides applied. */
export interface NicOptions {
  profile: NicProfileName;
  mtu: number;
  linkGbps: number;
  rxUsecs: number;
  rxFrames: number;
  /** net.core.netdev_budget (sysctl; net/core/dev.c: 300): packets per net_rx_action run. */
  netdevBudget: number;
}

/** netdev_budget's default (net/core/dev.c). */
export const NETDEV_BUDGET = 300;

export function nicOptions(profile: NicProfileName, over: Partial<Omit<NicOptions, 'profile'>> = {}): NicOptions {
  const p = NIC_PROFILE[profile];
  return {
    profile,
    mtu: over.mtu ?? p.mtu,
    linkGbps: over.linkGbps ?? p.linkGbps,
    rxUsecs: over.rxUsecs ?? p.rxUsecs,
    rxFrames: over.rxFrames ?? p.rxFrames,
    netdevBudget: over.netdevBudget ?? NETDEV_BUDGET,
  };
}

/** ixgbe's ITR modes from rx-usecs (ixgbe_set_coalesce): 0 off, 1 dynamic, >1 fixed µs. */
export function itrMode(o: NicOptions): 'off' | 'adaptive' | 'fixed' {
  return o.rxUsecs === 0 ? 'off' : o.rxUsecs === 1 ? 'adaptive' : 'fixed';
}

/** TCP payload per segment (the MSS). */
export function mss(o: NicOptions): number {
  return o.mtu - TCP_IP_HEADER_BYTES;
}

/** Segments a message of `bytes` becomes. */
export function segmentsPerMessage(o: NicOptions, bytes: number): number {
  return Math.max(1, Math.ceil(bytes / mss(o)));
}

/** Bytes on the wire for an IP packet of `ipBytes` (its link packets, headers and framing). */
export function wireBytes(o: NicOptions, ipBytes: number): number {
  const p = NIC_PROFILE[o.profile];
  const framed = ipBytes + p.encapBytes;
  const linkPackets = Number.isFinite(p.linkMtu) ? Math.ceil(framed / p.linkMtu) : 1;
  return framed + linkPackets * p.linkPacketOverhead;
}

/** Serialisation time (ns) of an IP packet of `ipBytes` at the link's data rate: the wire model. */
export function wireNs(o: NicOptions, ipBytes: number): number {
  return (wireBytes(o, ipBytes) * 8) / o.linkGbps;
}

/** One line for the setup line and reports. */
export function describeNic(o: NicOptions): string {
  const p = NIC_PROFILE[o.profile];
  const changed: string[] = [];
  if (o.mtu !== p.mtu) changed.push(`MTU ${o.mtu}`);
  if (o.linkGbps !== p.linkGbps) changed.push(`${o.linkGbps} Gb/s`);
  const mod =
    p.moderation === 'itr'
      ? { off: 'ITR off', adaptive: 'adaptive ITR', fixed: `ITR ${o.rxUsecs} µs` }[itrMode(o)]
      : o.rxUsecs === 0 && o.rxFrames === 0
        ? 'no moderation'
        : `rx-usecs ${o.rxUsecs} rx-frames ${o.rxFrames}`;
  const base = changed.length > 0 ? `${o.profile} (${changed.join(', ')})` : o.profile;
  return `${base}, ${mod}`;
}

// ---------------------------------------------------------------------------------------------
// ixgbe's adaptive ITR (drivers/net/ethernet/intel/ixgbe/ixgbe_main.c, ixgbe_update_itr and
// ixgbe_set_itr, Alexander Duyck's v4.15 rewrite, in 5.15): a port, in µs.
// ---------------------------------------------------------------------------------------------
export const ITR_ADAPTIVE_MIN_INC = 2;
export const ITR_ADAPTIVE_MIN_USECS = 10;
export const ITR_ADAPTIVE_MAX_USECS = 126;
export const ITR_ADAPTIVE_LATENCY = 0x80;
/** IXGBE_20K_ITR: a vector's EITR starts at 50 µs (ixgbe_alloc_q_vector). */
export const ITR_INITIAL_USECS = 50;

/** A ring container's adaptive state (ixgbe_ring_container: itr with its LATENCY flag). */
export interface ItrContainer {
  /** µs | ITR_ADAPTIVE_LATENCY. */
  itr: number;
  packets: number;
  bytes: number;
  /** jiffies by which the next update must come, else the counts are stale. */
  nextUpdate: number;
}

export function itrContainer(): ItrContainer {
  return { itr: ITR_ADAPTIVE_MIN_USECS | ITR_ADAPTIVE_LATENCY, packets: 0, bytes: 0, nextUpdate: 0 };
}

/**
 * ixgbe_update_itr at a 10 Gb/s link: the container's new itr from the packets and bytes since
 * the last update, given the vector's current interval `vectorItrUs`. Mutates `c`.
 */
export function updateItr(c: ItrContainer, vectorItrUs: number, jiffies: number): void {
  c.itr = nextItr(c, vectorItrUs, jiffies);
  c.nextUpdate = jiffies + 1;
  c.bytes = 0;
  c.packets = 0;
}

/** The body of ixgbe_update_itr: each `goto clear_counts` is a return. */
function nextItr(c: ItrContainer, vectorItrUs: number, jiffies: number): number {
  const packets = c.packets;
  const bytes = c.bytes;
  if (jiffies - c.nextUpdate > 0) return ITR_ADAPTIVE_MIN_USECS | ITR_ADAPTIVE_LATENCY; // time_after
  if (packets === 0)
    return Math.min(vectorItrUs + ITR_ADAPTIVE_MIN_INC, ITR_ADAPTIVE_MAX_USECS) + (c.itr & ITR_ADAPTIVE_LATENCY);
  let mode = 0; // IXGBE_ITR_ADAPTIVE_BULK
  if (packets < 4 && bytes < 9000) mode = ITR_ADAPTIVE_LATENCY;
  else if (packets < 48) return Math.min(vectorItrUs + ITR_ADAPTIVE_MIN_INC, ITR_ADAPTIVE_MAX_USECS);
  else if (packets < 96) return vectorItrUs;
  else if (packets < 256) return Math.max(vectorItrUs >> 1, ITR_ADAPTIVE_MIN_USECS);
  // adjust_by_size
  let avg = Math.floor(bytes / packets);
  if (avg <= 60) avg = 5120;
  else if (avg <= 316) avg = avg * 40 + 2720;
  else if (avg <= 1084) avg = avg * 15 + 11452;
  else if (avg < 1968) avg = avg * 5 + 22420;
  else avg = 32256;
  if ((mode & ITR_ADAPTIVE_LATENCY) !== 0) avg >>= 1;
  return mode + Math.ceil(avg / (ITR_ADAPTIVE_MIN_INC * 256)) * ITR_ADAPTIVE_MIN_INC;
}

/** ixgbe_set_itr: the vector's interval (µs) is the smaller of its two containers', flag dropped. */
export function vectorItr(rx: ItrContainer, tx: ItrContainer): number {
  return Math.min(rx.itr, tx.itr) & ~ITR_ADAPTIVE_LATENCY;
}
