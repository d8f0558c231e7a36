/**
 * GRO on the receive side (src/net/gro.ts), one thread, fake clock: a message's segments taken
 * in one NAPI poll reach TCP as one skb (one cursor move, one ACK check, one wake) where the
 * driver has GRO on by default (ixgbe, IPoIB datagram mode), and one by one where it does not
 * (IPoIB connected mode: ipoib_cm_handle_rx_wc → netif_receive_skb).
 */
import { describe, expect, it } from 'vitest';
import { GRO_BY_DEFAULT } from '../../src/net/gro.js';
import { receiveOne } from './receive.js';

describe('GRO (napi_gro_receive) where the driver has it on by default', () => {
  it('is on for ixgbe and IPoIB datagram mode, off for IPoIB connected mode', () => {
    expect(GRO_BY_DEFAULT).toEqual({ ixgbe: true, 'ipoib-ud': true, 'ipoib-cm': false });
  });

  it('ixgbe, 8 KiB in one poll: 6 segments, one skb, one ACK (without GRO: one ACK per two full segments)', () => {
    const r = receiveOne('ixgbe', 8192);
    expect([r.packets, r.full]).toEqual([6, 5]);
    expect(r.polled()).toBe(6);
    expect(r.held).toBe(0); // nothing held between polls
    expect(r.counter('gro_merged')).toBe(5);
    expect(r.counter('tcp_acks_sent')).toBe(1);
  });

  it('IPoIB UD, 8 KiB: the weight of 4 ends the first skb at the poll; the last segment is an skb of its own', () => {
    const r = receiveOne('ipoib-ud', 8192);
    expect([r.packets, r.full]).toEqual([5, 4]);
    expect(r.polled()).toBe(5);
    expect(r.counter('napi_polls')).toBeGreaterThanOrEqual(2);
    expect(r.counter('gro_merged')).toBe(3); // 4 full segments merged in poll 1; the partial one alone in poll 2
    expect(r.counter('tcp_acks_sent')).toBe(1);
  });

  it('IPoIB CM: no GRO, every segment to TCP at once (ACK every second full segment)', () => {
    const r = receiveOne('ipoib-cm', 256 * 1024);
    expect(r.polled()).toBe(r.packets);
    expect(r.counter('gro_merged')).toBe(0);
    expect(r.counter('tcp_acks_sent')).toBe(Math.floor(r.full / 2));
  });

  it('ixgbe, 256 KiB: no skb passes GRO_MAX_SIZE (65536 B): at least 4 skbs, so at least 4 ACKs', () => {
    const r = receiveOne('ixgbe', 256 * 1024);
    expect(r.polled()).toBe(r.packets);
    expect(r.counter('tcp_acks_sent')).toBeGreaterThanOrEqual(4); // ≥ 262144 / 65536 skbs of ≥ 2 full segments each
    expect(r.counter('tcp_acks_sent')).toBeLessThan(Math.floor(r.full / 2));
    expect(r.packets - r.counter('gro_merged')).toBeGreaterThanOrEqual(4); // skbs: segments not merged into another
  });
});
