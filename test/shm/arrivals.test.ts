/**
 * Arrivals (src/hw/irqchip.ts): an idle CPU that found its arrival ring empty sleeps with no
 * deadline, and only the irq thread's kick on ARRIVAL_FIRST wakes it. Real threads: a producer
 * publishing one arrival at a time and a consumer that empties the ring and sleeps between them
 * race the "was the ring empty?" decision against the consumer's last release, 100 000 times (a first version of publish() lost a wakeup in about half of
 * the runs of 50 000).
 * Every arrival is taken once, in order, and no sleep misses one.
 */
import { afterEach, expect, it } from 'vitest';
import { ARRIVAL_RECORD_WORDS } from '../../src/hw/layout.js';
import { DOORBELL_WORDS, Doorbell } from '../../src/shm/doorbell.js';
import { SpscRing } from '../../src/shm/ring.js';
import {
  type ArrivalsConsumerResult,
  type ArrivalsData,
  type ArrivalsProducerResult,
  CTL_WORDS,
} from './fixtures/protocol.js';
import { canaryBuffer, startTogether, Threads, testSeed } from './helpers.js';

const threads = new Threads();
afterEach(() => threads.terminateAll());

/** A sleep() that long with an arrival already published is a lost wakeup, not a slow machine. */
const SLEEP_TIMEOUT_MS = 2000;
/** Small, so that the producer also meets a full ring. */
const CAPACITY = 8;

it('every arrival is taken once, in order, and an idle consumer is always woken for the next', async () => {
  const seed = testSeed();
  const records = 100_000;
  const ringWords = SpscRing.wordsFor(CAPACITY, ARRIVAL_RECORD_WORDS);
  const buf = canaryBuffer({ ring: ringWords, bell: DOORBELL_WORDS, ctl: CTL_WORDS }, seed);
  SpscRing.init(buf.i32, buf.base.ring, CAPACITY, ARRIVAL_RECORD_WORDS, ringWords);
  Doorbell.init(buf.i32, buf.base.bell);
  const data: ArrivalsData = {
    sab: buf.sab,
    ringBase: buf.base.ring,
    bellBase: buf.base.bell,
    ctl: buf.base.ctl,
    records,
    seed,
    sleepTimeoutMs: SLEEP_TIMEOUT_MS,
  };
  const [took, gave] = await startTogether(threads, ['arrivals-consumer', 'arrivals-producer'], data, 120_000);
  const c = (await took) as ArrivalsConsumerResult;
  const p = (await gave) as ArrivalsProducerResult;
  console.log(`arrivals: ${JSON.stringify({ seed, ...c, ...p })}`);
  expect(c.lost, `seed ${seed}: lost wakeups (a sleep timed out with an arrival published)`).toBe(0);
  expect(c.consumed).toBe(records);
  expect(c.outOfOrder).toBe(0);
  // The race is run only if the consumer slept often between arrivals.
  expect(c.sleeps).toBeGreaterThan(records / 20);
  expect(buf.broken(), `seed ${seed}`).toEqual([]);
}, 150_000);
