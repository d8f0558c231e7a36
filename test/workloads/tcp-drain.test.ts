/**
 * tcp_lat's part of the drain (src/workloads/tcp-lat.ts busy): a request the server has read
 * whole and not yet begun to echo is an exchange in flight. Both links balance in that instant
 * (the request's L_SENT = L_READ, the reply's not begun), and busy() said nothing: a server
 * thread the host held off there let Machine.drain say quiet, and the echo's two interrupts came
 * after it (test/machine/drain.test.ts, twice on 2026-12-07 at a host load of 8-9). No thread.
 */
import { describe, expect, it } from 'vitest';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { MachineMemory } from '../../src/machine/memory.js';
import { L_READ, L_SENT, linkRegion } from '../../src/net/layout.js';
import { options } from '../machine/helpers.js';

describe('tcp_lat in the drain', () => {
  it('is busy while a request is read and its echo not begun, quiet once it is and read', () => {
    const mem = MachineMemory.build(options({ workload: tcpLatOptions({ ringBytes: 1 << 16 }) }));
    const { i32 } = mem;
    const R = mem.R.workload;
    const req = R[linkRegion(0, 0)];
    const rep = R[linkRegion(0, 1)];
    expect(mem.workload.busy(i32, R)).toBe('');
    // The client sent request 1 and the server read it whole: the echo is owed.
    Atomics.add(i32, req + L_SENT, 1);
    Atomics.add(i32, req + L_READ, 1);
    expect(mem.workload.busy(i32, R)).toBe('a tcp_lat reply is owed');
    // The server begins the echo: a message in flight until the client has read it.
    Atomics.add(i32, rep + L_SENT, 1);
    expect(mem.workload.busy(i32, R)).toBe('a tcp_lat message is in flight');
    Atomics.add(i32, rep + L_READ, 1);
    expect(mem.workload.busy(i32, R)).toBe('');
  });
});
