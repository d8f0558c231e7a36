/**
 * TCP's socket backlog (src/net/sock.ts): segments NET_RX hands to TCP while the reader owns the
 * socket are queued, not received: the reader cannot read them, no ACK leaves, until the reader
 * processes the backlog in its own context (__sk_flush_backlog, release_sock). One thread, fake
 * clock; the word protocol on its own, then through the NIC. No timing is asserted.
 */
import { describe, expect, it } from 'vitest';
import { L_SOCK } from '../../src/net/layout.js';
import {
  backlogAdd,
  backlogFull,
  backlogSegs,
  SOCK_OWNED,
  sockLock,
  sockRelease,
  sockTake,
} from '../../src/net/sock.js';
import { receiveOne } from './receive.js';

describe('the L_SOCK word', () => {
  const word = () => {
    const i32 = new Int32Array(new SharedArrayBuffer(64));
    return { i32, v: () => Atomics.load(i32, L_SOCK) };
  };

  it('an unowned socket takes no backlog: NET_RX receives itself', () => {
    const w = word();
    expect(backlogAdd(w.i32, 0, 3, 1)).toBe(false);
    expect(w.v()).toBe(0);
  });

  it('an owned socket backlogs: segments add up, full ones saturate at 2, ownership stays', () => {
    const w = word();
    sockLock(w.i32, 0);
    expect(backlogAdd(w.i32, 0, 3, 1)).toBe(true);
    expect(backlogAdd(w.i32, 0, 45, 44)).toBe(true);
    expect(backlogAdd(w.i32, 0, 1, 0)).toBe(true);
    expect(backlogSegs(w.v())).toBe(49);
    expect(backlogFull(w.v())).toBe(2);
    expect(w.v() & SOCK_OWNED).toBe(SOCK_OWNED);
  });

  it('release fails while a backlog waits; take empties it and keeps ownership; then release succeeds', () => {
    const w = word();
    sockLock(w.i32, 0);
    backlogAdd(w.i32, 0, 2, 1);
    expect(sockRelease(w.i32, 0)).toBe(false);
    const taken = sockTake(w.i32, 0);
    expect([backlogSegs(taken), backlogFull(taken)]).toEqual([2, 1]);
    expect(w.v()).toBe(SOCK_OWNED);
    expect(backlogSegs(sockTake(w.i32, 0))).toBe(0); // nothing more
    expect(sockRelease(w.i32, 0)).toBe(true);
    expect(w.v()).toBe(0);
    expect(backlogAdd(w.i32, 0, 1, 1)).toBe(false); // unowned again
  });
});

describe('the backlog through the NIC', () => {
  it('IPoIB CM, 256 KiB while the reader owns the socket: nothing readable, no ACK, until the reader flushes', () => {
    const r = receiveOne('ipoib-cm', 256 * 1024, true);
    expect(r.polled()).toBe(0); // TCP has received nothing: the reader cannot copy
    expect(r.counter('tcp_backlog')).toBe(r.packets); // no GRO in CM: one skb per segment
    expect(r.counter('tcp_acks_sent')).toBe(0);
    expect(r.flush()).toBe(true);
    expect(r.polled()).toBe(r.packets);
    // The backlog is coalesced into one skb (tcp_add_backlog): one ACK check, more than one full segment.
    expect(r.counter('tcp_acks_sent')).toBe(1);
    expect(r.counter('tcp_backlog_runs')).toBe(1);
    expect(r.flush()).toBe(false); // empty now
    r.release();
    expect(Atomics.load(r.k.mem.i32, r.link + L_SOCK)).toBe(0);
  });

  it('the same message with the socket not owned: TCP receives at once, one ACK per two full segments', () => {
    const r = receiveOne('ipoib-cm', 256 * 1024, false);
    expect(r.polled()).toBe(r.packets);
    expect(r.counter('tcp_backlog')).toBe(0);
    expect(r.counter('tcp_acks_sent')).toBe(Math.floor(r.full / 2));
  });

  it('ixgbe, 8 KiB owned: one GRO skb on the backlog; release_sock processes it before dropping ownership', () => {
    const r = receiveOne('ixgbe', 8192, true);
    expect(r.counter('tcp_backlog')).toBe(1);
    expect(r.polled()).toBe(0);
    r.release();
    expect(r.polled()).toBe(r.packets);
    expect(r.counter('tcp_acks_sent')).toBe(1);
    expect(r.counter('tcp_backlog_runs')).toBe(1);
    expect(Atomics.load(r.k.mem.i32, r.link + L_SOCK)).toBe(0);
  });
});
