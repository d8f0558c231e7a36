/**
 * The CLI's count of stop signals (src/harness/signals.ts), in-process with a fake clock: one
 * delivery counts once however many copies reach the process; a second delivery counts.
 * The real processes are checked in test/cli/reexec.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { SAME_DELIVERY_MS, SignalDeliveries } from '../../src/harness/signals.js';

function clocked(): { deliveries: SignalDeliveries; advance(ms: number): void } {
  let t = 1_000;
  return {
    deliveries: new SignalDeliveries(() => t),
    advance: (ms) => {
      t += ms;
    },
  };
}

describe('SignalDeliveries', () => {
  it('counts a signal to the process group once: its own copy and the parent’s, in either order', () => {
    const a = clocked();
    expect(a.deliveries.own('SIGTERM')).toBe(1);
    a.advance(5_000); // the parent's copy, however late
    expect(a.deliveries.forwarded()).toBe(1);

    const b = clocked();
    expect(b.deliveries.forwarded()).toBe(1);
    b.advance(5_000);
    expect(b.deliveries.own('SIGINT')).toBe(1);
  });

  it("counts GNU timeout's pair (to the pid, then to the group) once", () => {
    const { deliveries, advance } = clocked();
    expect(deliveries.own('SIGTERM')).toBe(1);
    advance(SAME_DELIVERY_MS - 1);
    expect(deliveries.own('SIGTERM')).toBe(1);
  });

  it('counts the same signal again once the copies are over: a second Ctrl-C', () => {
    const { deliveries, advance } = clocked();
    expect(deliveries.own('SIGINT')).toBe(1);
    advance(SAME_DELIVERY_MS);
    expect(deliveries.own('SIGINT')).toBe(2);
  });

  it('counts two different signals as two deliveries, however close together', () => {
    const { deliveries } = clocked();
    expect(deliveries.own('SIGINT')).toBe(1);
    expect(deliveries.own('SIGTERM')).toBe(2);
  });

  it('counts a second signal to the group: two own, two passed on', () => {
    const { deliveries, advance } = clocked();
    expect(deliveries.own('SIGINT')).toBe(1);
    expect(deliveries.forwarded()).toBe(1);
    advance(SAME_DELIVERY_MS * 10);
    expect(deliveries.forwarded()).toBe(2);
    expect(deliveries.own('SIGINT')).toBe(2);
  });

  it('counts signals to the parent alone, each passed on', () => {
    const { deliveries } = clocked();
    expect(deliveries.forwarded()).toBe(1);
    expect(deliveries.forwarded()).toBe(2);
  });
});
