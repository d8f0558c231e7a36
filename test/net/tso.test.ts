/**
 * TSO's size goal (src/net/tso.ts): segments per TSO skb from 5.15's tcp_tso_autosize cap, and
 * which profiles push one segment at a time. The sender's behaviour with it (one completion per
 * push) is checked with real threads in conservation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { nicOptions } from '../../src/net/profiles.js';
import { GSO_MAX_SIZE, MAX_TCP_HEADER, segsPerPush, TSO_BY_DEFAULT, tsoSegs } from '../../src/net/tso.js';

describe('TSO size goal', () => {
  it('is on for ixgbe only (IPoIB CM clears NETIF_F_TSO; UD needs IB_DEVICE_UD_TSO)', () => {
    expect(TSO_BY_DEFAULT).toEqual({ ixgbe: true, 'ipoib-cm': false, 'ipoib-ud': false });
  });

  it('ixgbe at MTU 1500 (MSS 1448): 45 segments, 65160 B, under 65536 - 1 - MAX_TCP_HEADER', () => {
    const o = nicOptions('ixgbe');
    expect(tsoSegs(o)).toBe(45);
    expect(45 * 1448).toBeLessThanOrEqual(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
    expect(46 * 1448).toBeGreaterThan(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
    expect(segsPerPush(o)).toBe(45);
  });

  it('ixgbe at MTU 9000 (MSS 8948): 7 segments; a profile without TSO pushes 1', () => {
    expect(tsoSegs({ ...nicOptions('ixgbe'), mtu: 9000 })).toBe(7);
    expect(segsPerPush(nicOptions('ipoib-cm'))).toBe(1);
    expect(segsPerPush(nicOptions('ipoib-ud'))).toBe(1);
  });

  it('never below one segment, even when the MSS exceeds the cap', () => {
    expect(tsoSegs({ ...nicOptions('ixgbe'), mtu: 65_520 })).toBe(1);
  });
});
