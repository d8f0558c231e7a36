/**
 * TSO on the send side: where the driver has it on by default, tcp_sendmsg builds skbs of up to
 * a size goal of many segments and pushes each whole (tcp_push → tcp_write_xmit → one
 * ndo_start_xmit); the NIC cuts it into MSS-sized frames, which leave back to back, and completes
 * it once. Without TSO the size goal is one MSS and each segment is pushed as soon as it is
 * copied (tcp_sendmsg_locked: `if (skb == tcp_send_head(sk)) tcp_push_one(sk, mss_now)`), so
 * copy and wire overlap segment by segment.
 *
 * What changes in the lab (src/workloads/tcp-lat.ts, Endpoint.pump): the segments of one TSO skb
 * are copied into the link's ring unpublished, and published together when the skb is full or the
 * message ends; their arrival times are paced from that moment (the wire model, ./profiles.ts),
 * and one send completion carries them all (its segment count is what ixgbe_clean_tx_irq adds to
 * the ITR container: `total_packets += tx_buffer->gso_segs`).
 *
 * Where the drivers enable it (TSO_BY_DEFAULT): ixgbe sets NETIF_F_TSO | NETIF_F_TSO6 in
 * netdev->features (ixgbe_probe) and it stays on; IPoIB connected mode clears NETIF_F_TSO
 * (ipoib_main.c, ipoib_fix_features: `if (test_bit(IPOIB_FLAG_ADMIN_CM, &priv->flags)) features
 * &= ~(NETIF_F_IP_CSUM | NETIF_F_TSO)`); IPoIB datagram mode has it only when the HCA reports IB_DEVICE_UD_TSO
 * (ipoib_set_dev_features; mlx4 reports it with MLX4_DEV_CAP_FLAG_BLH): the seed does not say
 * which HCA, so the UD profile leaves it off, as its checksum offload is an assumption already.
 *
 * Context: the sending task; constants only.
 */
import type { NicProfileName } from './profiles.js';
import { mss, type NicOptions } from './profiles.js';

/** Whether each NIC profile's driver sends with TSO by default. */
export const TSO_BY_DEFAULT: Readonly<Record<NicProfileName, boolean>> = {
  'ipoib-cm': false, // ipoib_fix_features clears NETIF_F_TSO in connected mode
  'ipoib-ud': false, // only with IB_DEVICE_UD_TSO, which the seed's HCA is not known to report
  ixgbe: true, // ixgbe_probe: NETIF_F_TSO | NETIF_F_TSO6
};

/** GSO_MAX_SIZE (include/linux/netdevice.h, 5.15): sk_gso_max_size of a device that does not lower it (ixgbe does not). */
export const GSO_MAX_SIZE = 65536;

/**
 * MAX_TCP_HEADER = 128 + MAX_HEADER (include/net/tcp.h); MAX_HEADER = LL_MAX_HEADER + 48 with IP
 * tunnels built (a distribution kernel's CONFIG_NET_IPIP=m), LL_MAX_HEADER 96 with CONFIG_WLAN
 * and without CONFIG_MAC80211_MESH (include/linux/netdevice.h). The configuration is the seed
 * kernel's unknown; every MAX_TCP_HEADER from 161 to 375 bytes gives the same 45 segments at
 * ixgbe's MSS of 1448.
 */
export const MAX_TCP_HEADER = 128 + 96 + 48;

/**
 * Segments per TSO skb: 5.15's tcp_tso_autosize, `min(sk_pacing_rate >> sk_pacing_shift,
 * sk_gso_max_size - 1 - MAX_TCP_HEADER) / mss`, taking the cap. The lab has no congestion window
 * or pacing rate: in a ping-pong's steady state cwnd covers a message, and the pacing term
 * (sk_pacing_shift 10: about 1 ms of data at tcp_update_pacing_rate's 200% of cwnd · mss per RTT
 * in slow start, 120% after) exceeds the cap at any RTT below 2 · 1448 · cwnd / (1024 · 65263)
 * s: 0.43 ms at the initial cwnd of 10 (0.26 ms at 120%), more as cwnd grows.
 * v5.18's tcp_tso_autosize (65466904b015, "tcp: adjust TSO packet sizes based on min_rtt") caps at
 * sk_gso_max_size itself: the same count unless a multiple of the MSS falls in (65263, 65536].
 */
export function tsoSegs(o: NicOptions): number {
  return Math.max(1, Math.floor((GSO_MAX_SIZE - 1 - MAX_TCP_HEADER) / mss(o)));
}

/** Segments per skb the sender pushes for profile `o`: the TSO size goal, or 1 without TSO. */
export function segsPerPush(o: NicOptions): number {
  return TSO_BY_DEFAULT[o.profile] ? tsoSegs(o) : 1;
}
