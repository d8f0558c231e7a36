/**
 * Doorbell: no lost wakeup over 10^5 sleep/wake races between real threads under 'if-idle',
 * and 'if-idle' sends fewer notifies than 'always' to a consumer that mostly polls.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { newEpoch } from '../../src/clock.js';
import { DOORBELL_WORDS, Doorbell, type NotifyPolicy } from '../../src/shm/doorbell.js';
import {
  CTL_WORDS,
  type DoorbellData,
  type DoorbellMode,
  type SleeperResult,
  type WakerResult,
} from './fixtures/protocol.js';
import { canaryBuffer, startTogether, Threads, testSeed } from './helpers.js';

const threads = new Threads();
afterEach(() => threads.terminateAll());

/** A sleep() that long with the counter already advanced is a lost wakeup, not a slow machine. */
const SLEEP_TIMEOUT_MS = 2000;

async function run(policy: NotifyPolicy, mode: DoorbellMode, cycles: number, minSleeps: number, seed: number) {
  const buf = canaryBuffer({ bell: DOORBELL_WORDS, ctl: CTL_WORDS }, seed);
  Doorbell.init(buf.i32, buf.base.bell);
  const data: DoorbellData = {
    sab: buf.sab,
    bellBase: buf.base.bell,
    ctl: buf.base.ctl,
    policy,
    mode,
    cycles,
    minSleeps,
    seed,
    sleepTimeoutMs: SLEEP_TIMEOUT_MS,
    epoch: newEpoch(),
  };
  const [slept, woke] = await startTogether(threads, ['doorbell-sleeper', 'doorbell-waker'], data);
  // The sleeper first: if it gave up on lost wakeups the waker is stuck and would only time out.
  const s = (await slept) as SleeperResult;
  expect(s.lost, `seed ${seed}: lost wakeups (timeouts with the counter already advanced)`).toBe(0);
  const w = (await woke) as WakerResult;
  // 'strict' stops on the sleeper's word, so the waker may have made one more advance.
  expect(w.rings - s.seen, 'counter advances the sleeper did not see').toBeLessThanOrEqual(mode === 'strict' ? 1 : 0);
  expect(w.rings - s.seen).toBeGreaterThanOrEqual(0);
  expect(buf.broken(), `seed ${seed}`).toEqual([]);
  await threads.terminateAll();
  return { s, w, stats: new Doorbell(buf.i32, buf.base.bell, policy).stats() };
}

describe('Doorbell across threads', () => {
  it("'if-idle': 100 000 sleeps racing a waker, no lost wakeup", async () => {
    const seed = testSeed();
    const minSleeps = 100_000;
    // Cap on counter advances: if the sleeper slept in fewer than 1 in 5 cycles, fail, since
    // the test would no longer race the wait against the wake.
    const { s, w, stats } = await run('if-idle', 'strict', 5 * minSleeps, minSleeps, seed);
    console.log(`doorbell strict: ${JSON.stringify({ seed, ...s, ...stats, rings: w.rings, notified: w.notified })}`);
    expect(s.sleeps).toBe(minSleeps);
    expect(stats.sent + stats.avoided).toBe(w.rings);
    expect(stats.sent).toBe(w.notified);
    expect(stats.sleeps).toBe(s.sleeps);
    // Under 'if-idle' every notify consumed one announced sleep.
    expect(stats.sent).toBeLessThanOrEqual(s.prepares);
    // wokenNsAgo: a wait a notify ended reads the time its waker stored before notifying. Each
    // notify wakes at most one wait, and a sleeper that slept 10^5 times was woken by some; the
    // readings lie inside the run (not garbage from the word's 100 ns units wrapping modulo
    // 2^32), allowing the two threads' clock calibration 1 ms.
    expect(s.notified).toBeGreaterThan(0);
    expect(s.notified).toBeLessThanOrEqual(stats.sent);
    expect(s.minWokenNs).toBeGreaterThanOrEqual(-1e6);
    expect(s.maxWokenNs).toBeLessThanOrEqual(s.runNs + 1e6);
  });

  it("'if-idle' sends fewer notifies than 'always' to a consumer that mostly polls", async () => {
    const seed = testSeed();
    const cycles = 20_000;
    const idle = await run('if-idle', 'busy', cycles, 0, seed);
    const always = await run('always', 'busy', cycles, 0, seed);
    console.log(
      `doorbell busy: ${JSON.stringify({ seed, ifIdle: idle.stats, always: always.stats, prepares: [idle.s.prepares, always.s.prepares] })}`,
    );
    expect(always.stats.sent).toBe(cycles);
    expect(always.stats.avoided).toBe(0);
    expect(idle.stats.sent + idle.stats.avoided).toBe(cycles);
    // The busy sleeper prepares at most once per fourth counter value: a bound that holds on
    // any schedule, and 'if-idle' notifies only a prepared sleeper.
    expect(idle.s.prepares).toBeLessThanOrEqual(cycles / 4 + 1);
    expect(idle.stats.sent).toBeLessThanOrEqual(idle.s.prepares);
    expect(idle.stats.sent).toBeLessThan(always.stats.sent);
  });
});
