/**
 * SpscRing and MpscRing: real producer and consumer threads push sequence-numbered records
 * through small rings (so that full rings really refuse), the consumer checks every record
 * (loss, duplication, reordering within a producer and torn records all fail), refusals are
 * counted on both sides, and canary words around every ring are intact afterwards.
 * Same-thread tests drive the free-running positions across many laps and across 2^31.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MpscRing, SpscRing } from '../../src/shm/ring.js';
import {
  CTL_WORDS,
  GO,
  prng,
  RECORD_WORDS,
  type RingConsumerData,
  type RingConsumerResult,
  type RingKind,
  type RingProducerData,
  type RingProducerResult,
} from './fixtures/protocol.js';
import { canaryBuffer, nextMessage, Threads, testSeed } from './helpers.js';

const threads = new Threads();
afterEach(() => threads.terminateAll());

/**
 * Refused claims in a row before a producer naps, empty peeks in a row before the consumer
 * naps. A nap is an Atomics.wait of ~0.1 ms: too many make the test slow (a consumer that naps
 * at every empty peek turns 10^6 records into seconds), and more spinning only costs CPU.
 */
const SPIN = { retry: 256, idle: 4096 };

/** Run `producers` producer threads and one consumer thread over one ring; check everything. */
async function stress(kind: RingKind, producers: number, perProducer: number, capacity: number): Promise<void> {
  const seed = testSeed();
  const Ring = kind === 'spsc' ? SpscRing : MpscRing;
  const words = Ring.wordsFor(capacity, RECORD_WORDS);
  const buf = canaryBuffer({ ring: words, ctl: CTL_WORDS }, seed);
  const ringBase = buf.base.ring;
  const ctl = buf.base.ctl;
  Ring.init(buf.i32, ringBase, capacity, RECORD_WORDS, buf.map.regions.ring.words);

  const consumer = threads.spawn('ring-consumer', {
    sab: buf.sab,
    kind,
    ringBase,
    ctl,
    producers,
    waitForRefusal: true,
    idleSpin: SPIN.idle,
  } satisfies RingConsumerData);
  const ps = Array.from({ length: producers }, (_, id) =>
    threads.spawn('ring-producer', {
      sab: buf.sab,
      kind,
      ringBase,
      ctl,
      id,
      count: perProducer,
      seed: (seed + id * 0x9e3779b9) >>> 0,
      retrySpin: SPIN.retry,
    } satisfies RingProducerData),
  );
  await Promise.all([consumer, ...ps].map((w) => nextMessage(w, 'ready')));
  const consumed = nextMessage<RingConsumerResult>(consumer, 'done');
  const produced = Promise.all(ps.map((w) => nextMessage<RingProducerResult>(w, 'done')));
  Atomics.store(buf.i32, ctl + GO, 1);
  Atomics.notify(buf.i32, ctl + GO);
  const [c, p] = await Promise.all([consumed, produced]);

  const total = producers * perProducer;
  expect(c.errors, `seed ${seed}: ${c.errorCount} bad records`).toEqual([]);
  expect(c.errorCount).toBe(0);
  expect(c.total, 'records consumed').toBe(total);
  expect(c.next, 'records seen per producer').toEqual(Array(producers).fill(perProducer));
  expect(p.map((r) => r.published)).toEqual(Array(producers).fill(perProducer));

  const ring = new Ring(buf.i32, ringBase);
  const refusalsSeen = p.reduce((a, r) => a + r.refusals, 0);
  expect(refusalsSeen, 'the ring never refused: capacity too large to test refusal').toBeGreaterThan(0);
  expect(ring.refused(), 'refused() against the -1 returns producers saw').toBe(refusalsSeen);
  expect(ring.length()).toBe(0);
  if (ring instanceof SpscRing) {
    expect(ring.produced()).toBe(total);
    expect(ring.consumed()).toBe(total);
  } else {
    expect(ring.pushed()).toBe(total);
  }
  expect(buf.broken(), `seed ${seed}: canaries around the ring`).toEqual([]);
}

describe('MpscRing across threads', () => {
  it('3 producers x 350 000 records, 16 slots: each consumed once, per-producer order kept, refusals counted', async () => {
    await stress('mpsc', 3, 350_000, 16);
  });
});

describe('SpscRing across threads', () => {
  it('1 000 000 records, 64 slots: consumed once each, in order, refusals counted', async () => {
    await stress('spsc', 1, 1_000_000, 64);
  });
});

/**
 * A same-thread model check: random bursts of pushes and pops (sometimes more than fit, or
 * more than there are) against an array queue. Returns the first disagreement, or ''.
 */
function laps(
  kind: RingKind,
  capacity: number,
  ops: number,
  seed: number,
  setup?: (i32: Int32Array, base: number) => void,
) {
  const Ring = kind === 'spsc' ? SpscRing : MpscRing;
  const words = Ring.wordsFor(capacity, 2);
  const buf = canaryBuffer({ ring: words }, seed);
  Ring.init(buf.i32, buf.base.ring, capacity, 2, words);
  setup?.(buf.i32, buf.base.ring);
  const ring = new Ring(buf.i32, buf.base.ring);
  const i32 = buf.i32;
  const rand = prng(seed);
  const model: number[] = [];
  let next = 0;
  let refusals = 0;
  let pushes = 0;
  const check = (): string => {
    for (let op = 0; op < ops; op++) {
      const burst = 1 + (rand() % (capacity + 2));
      if (rand() & 1) {
        for (let k = 0; k < burst; k++) {
          const at = ring.claim();
          if (model.length === capacity) {
            if (at !== -1) return `op ${op}: claim on a full ring returned ${at}`;
            refusals++;
            continue;
          }
          if (at < 0) return `op ${op}: claim refused with ${model.length}/${capacity} used`;
          i32[at] = next;
          i32[at + 1] = ~next;
          ring.publish();
          model.push(next++);
          pushes++;
        }
      } else {
        for (let k = 0; k < burst; k++) {
          const at = ring.peek();
          if (model.length === 0) {
            if (at !== -1) return `op ${op}: peek on an empty ring returned ${at}`;
            continue;
          }
          if (at < 0) return `op ${op}: peek found nothing with ${model.length} records in`;
          const want = model.shift()!;
          if (i32[at] !== want || i32[at + 1] !== ~want)
            return `op ${op}: popped [${i32[at]}, ${i32[at + 1]}], expected [${want}, ${~want}]`;
          ring.release();
        }
      }
      if (ring.length() !== model.length) return `op ${op}: length() ${ring.length()}, model ${model.length}`;
    }
    return '';
  };
  expect(check(), `seed ${seed}`).toBe('');
  expect(ring.refused()).toBe(refusals);
  expect(refusals).toBeGreaterThan(0);
  expect(pushes / capacity, 'laps').toBeGreaterThan(1000);
  expect(buf.broken(), `seed ${seed}`).toEqual([]);
}

/**
 * Start both free-running positions at `pos` (near 2^31, so they wrap past it within a lap).
 * Writes words named in ring.ts's region legend: tail (line 1), head (line 2), and for MPSC
 * each slot's sequence word (slots from line 3, stride 1 + recordWords).
 */
function startAt(kind: RingKind, capacity: number, recordWords: number, pos: number) {
  return (i32: Int32Array, base: number) => {
    const TAIL = 16;
    const HEAD = 32;
    const SLOTS = 48;
    i32[base + TAIL] = pos;
    i32[base + HEAD] = pos;
    if (kind === 'mpsc') {
      for (let k = 0; k < capacity; k++) {
        const p = (pos + k) | 0;
        i32[base + SLOTS + (p & (capacity - 1)) * (1 + recordWords)] = p;
      }
    }
  };
}

describe('rings in one thread', () => {
  for (const kind of ['spsc', 'mpsc'] as const) {
    it(`${kind}: random bursts over thousands of laps match a model queue; full refuses, empty peeks -1`, () => {
      laps(kind, 8, 40_000, testSeed());
    });

    it(`${kind}: positions wrap past 2^31 without losing or reordering a record`, () => {
      const seed = testSeed();
      laps(kind, 8, 40_000, seed, startAt(kind, 8, 2, 0x7fffffff - 20));
    });

    it(`${kind}: init() with fewer available words than wordsFor() throws and writes nothing`, () => {
      const seed = testSeed();
      const Ring = kind === 'spsc' ? SpscRing : MpscRing;
      const words = Ring.wordsFor(8, 2);
      const buf = canaryBuffer({ ring: words }, seed);
      const before = buf.i32.slice();
      expect(() => Ring.init(buf.i32, buf.base.ring, 8, 2, words - 1)).toThrow(
        `ring at word ${buf.base.ring} needs ${words} words but its region has ${words - 1}`,
      );
      expect(buf.i32).toEqual(before);
      expect(() => Ring.init(buf.i32, buf.base.ring, 8, 2, words)).not.toThrow();
      expect(buf.broken()).toEqual([]);
    });
  }

  it('spsc: records claimed ahead stay invisible until publishMany, then arrive in order; the ring refuses past capacity', () => {
    const words = SpscRing.wordsFor(8, 1);
    const i32 = new Int32Array(new SharedArrayBuffer(words * 4));
    SpscRing.init(i32, 0, 8, 1);
    const ring = new SpscRing(i32, 0);
    ring.claim();
    ring.publish(); // one record in, so the claims below wrap
    const slots = new Set<number>();
    for (let k = 0; k < 7; k++) {
      const idx = ring.claimAhead(k);
      expect(idx).toBeGreaterThanOrEqual(0);
      i32[idx] = 100 + k;
      slots.add(idx);
    }
    expect(slots.size).toBe(7);
    expect(ring.claimAhead(7)).toBe(-1); // 1 published + 7 claimed fill the 8 slots
    expect(ring.refused()).toBe(1);
    expect(ring.length()).toBe(1);
    ring.release(); // the first record
    expect(ring.peek()).toBe(-1); // claimed, not published
    ring.publishMany(7);
    const got: number[] = [];
    for (let idx = ring.peek(); idx >= 0; idx = ring.peek()) {
      got.push(i32[idx]);
      ring.release();
    }
    expect(got).toEqual([100, 101, 102, 103, 104, 105, 106]);
  });

  it('the canary check catches a write one word before or after a ring', () => {
    const seed = testSeed();
    const words = SpscRing.wordsFor(16, RECORD_WORDS);
    const buf = canaryBuffer({ ring: words, ctl: CTL_WORDS }, seed);
    SpscRing.init(buf.i32, buf.base.ring, 16, RECORD_WORDS, words);
    expect(buf.broken()).toEqual([]);
    buf.i32[buf.base.ring - 1] ^= 1;
    buf.i32[buf.base.ring + words] = 0;
    expect(buf.broken().map((m) => m.split(':')[0])).toEqual([
      `word ${buf.base.ring - 1}`,
      `word ${buf.base.ring + words}`,
    ]);
  });

  it('attaching a view to the other kind, or to no ring, fails', () => {
    const i32 = new Int32Array(new SharedArrayBuffer(4 * SpscRing.wordsFor(4, 1)));
    expect(() => new SpscRing(i32, 0)).toThrow('no SPSC ring at word 0 (magic 0x0)');
    SpscRing.init(i32, 0, 4, 1);
    expect(() => new MpscRing(i32, 0)).toThrow('no MPSC ring at word 0 (magic 0x72696e31)');
  });
});
