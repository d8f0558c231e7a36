/**
 * ShmLock between real threads: exact counts under contention (with and without spinning), and
 * a forced sleep: one thread holds the lock while another, with spinLimit 0, tries to take it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { newEpoch } from '../../src/clock.js';
import { LOCK_WORDS, ShmLock } from '../../src/shm/lock.js';
import { CTL_WORDS, GO, type LockWorkerData, SHARED } from './fixtures/protocol.js';
import { canaryBuffer, nextMessage, request, Threads, testSeed, until } from './helpers.js';

const threads = new Threads();
afterEach(() => threads.terminateAll());

/** The lock's futex word (ShmLock's region legend: `state`, word 0) and its contended value. */
const STATE = 0;
const HELD_WAITERS = 2;

async function setup(workers: number, spinLimit: number, seed: number) {
  const buf = canaryBuffer({ lock: LOCK_WORDS, ctl: CTL_WORDS }, seed);
  ShmLock.init(buf.i32, buf.base.lock);
  const data: LockWorkerData = {
    sab: buf.sab,
    lockBase: buf.base.lock,
    ctl: buf.base.ctl,
    spinLimit,
    epoch: newEpoch(),
  };
  const ws = Array.from({ length: workers }, () => threads.spawn('lock-worker', data));
  await Promise.all(ws.map((w) => nextMessage(w, 'ready')));
  return { buf, ws, lock: new ShmLock(buf.i32, buf.base.lock, spinLimit) };
}

describe('ShmLock across threads', () => {
  for (const spinLimit of [200, 0]) {
    it(`3 threads x 100 000 increments of a plain counter, spinLimit ${spinLimit}: the total is exact`, async () => {
      const seed = testSeed();
      const N = 3;
      const M = 100_000;
      const { buf, ws, lock } = await setup(N, spinLimit, seed);
      const done = Promise.all(ws.map((w) => request(w, { cmd: 'incr', times: M }, 'incr-done')));
      Atomics.store(buf.i32, buf.base.ctl + GO, 1);
      Atomics.notify(buf.i32, buf.base.ctl + GO);
      await done;
      await threads.terminateAll();
      const st = lock.stats();
      console.log(`lock spinLimit ${spinLimit}: ${JSON.stringify(st)}`);
      expect(buf.i32[buf.base.ctl + SHARED]).toBe(N * M);
      expect(st.acquired).toBe(N * M);
      expect(st.contended).toBeLessThanOrEqual(st.acquired);
      expect(st.slept).toBeLessThanOrEqual(st.contended);
      expect(lock.isHeld()).toBe(false);
      expect(buf.broken(), `seed ${seed}`).toEqual([]);
    });
  }

  it('a waiter with spinLimit 0 on a held lock sleeps, and its lock() reports the wait', async () => {
    const seed = testSeed();
    const { buf, ws, lock } = await setup(2, 0, seed);
    const [holder, waiter] = ws;
    await request(holder, { cmd: 'lock' }, 'locked');
    expect(lock.isHeld()).toBe(true);
    const locked = request<{ waitNs: number }>(waiter, { cmd: 'lock' }, 'locked');
    // The waiter has marked the lock contended: it is past its (empty) spin and sleeps or is
    // about to. Only then does the holder let go.
    await until(
      () => Atomics.load(buf.i32, buf.base.lock + STATE) === HELD_WAITERS,
      'the waiter to mark the lock contended',
    );
    await request(holder, { cmd: 'unlock' }, 'unlocked');
    const { waitNs } = await locked;
    expect(waitNs).toBeGreaterThan(0);
    await request(waiter, { cmd: 'unlock' }, 'unlocked');
    expect(lock.stats()).toEqual({ acquired: 2, contended: 1, slept: 1 });
    expect(lock.isHeld()).toBe(false);
    expect(buf.broken(), `seed ${seed}`).toEqual([]);
  });
});
