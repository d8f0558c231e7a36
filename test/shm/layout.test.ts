/**
 * ShmPlanner and attachShm: regions start on cache lines, never overlap and never touch the
 * header; attach rejects a buffer from other code with the numbers in the message.
 */
import { describe, expect, it } from 'vitest';
import { machineDefaults } from '../../src/config/defaults.js';
import { Machine } from '../../src/machine/machine.js';
import {
  attachShm,
  LINE_WORDS,
  MIN_SHM_BYTES,
  regionBase,
  SHM_LAYOUT_VERSION,
  SHM_MAGIC,
  ShmPlanner,
} from '../../src/shm/layout.js';
import { prng } from './fixtures/protocol.js';
import { testSeed } from './helpers.js';

describe('ShmPlanner', () => {
  it('random region sizes: cache-line aligned, in order, non-overlapping, clear of the header', () => {
    const seed = testSeed();
    const rand = prng(seed);
    for (let trial = 0; trial < 200; trial++) {
      const planner = new ShmPlanner();
      const sizes: Record<string, number> = {};
      const n = 1 + (rand() % 12);
      for (let i = 0; i < n; i++) {
        const words = rand() % 4 === 0 ? LINE_WORDS * (1 + (rand() % 4)) : 1 + (rand() % 100);
        sizes[`r${i}`] = words;
        const base = planner.reserve(`r${i}`, words);
        expect(base % LINE_WORDS, `seed ${seed}`).toBe(0);
      }
      const { sab, map } = planner.allocate();
      const spans = Object.entries(map.regions)
        .map(([name, r]) => ({ name, ...r }))
        .sort((a, b) => a.base - b.base);
      expect(spans.length).toBe(n);
      let end = LINE_WORDS; // line 0 is the header
      for (const r of spans) {
        expect(r.words, `seed ${seed}: ${r.name}`).toBe(sizes[r.name]);
        expect(r.base % LINE_WORDS, `seed ${seed}: ${r.name}`).toBe(0);
        expect(r.base, `seed ${seed}: ${r.name} overlaps the region before it`).toBeGreaterThanOrEqual(end);
        expect(regionBase(map, r.name)).toBe(r.base);
        end = r.base + r.words;
      }
      expect(map.totalWords, `seed ${seed}`).toBeGreaterThanOrEqual(end);
      expect(map.totalWords % LINE_WORDS).toBe(0);
      expect(sab.byteLength).toBe(map.totalWords * 4);
      const i32 = attachShm(sab, map);
      expect([i32[0], i32[1], i32[2]]).toEqual([SHM_MAGIC, SHM_LAYOUT_VERSION, map.totalWords]);
    }
  });

  it('a region name twice, a size that is not a positive integer, or an unknown name throws', () => {
    const p = new ShmPlanner();
    p.reserve('a', 3);
    expect(() => p.reserve('a', 3)).toThrow('shm region "a" reserved twice');
    expect(() => p.reserve('b', 0)).toThrow('shm region "b" needs a positive size (got 0)');
    expect(() => p.reserve('c', 2.5)).toThrow('shm region "c" needs a positive size (got 2.5)');
    expect(() => regionBase(p.allocate().map, 'zz')).toThrow('shm region "zz" was not reserved');
  });
});

describe('a minimum size', () => {
  it('pads the buffer to minBytes, whole lines, and the header and map agree with it', () => {
    const p = new ShmPlanner();
    p.reserve('a', 100);
    const { sab, map } = p.allocate(1000 * 4 + 3);
    expect(sab.byteLength / 4).toBe(1008); // 1000.75 words, up to a whole line of 16
    expect(map.totalWords).toBe(1008);
    expect(() => attachShm(sab, map)).not.toThrow();
    const small = new ShmPlanner();
    small.reserve('a', 100);
    expect(small.allocate(16).sab.byteLength / 4, 'the regions are bigger: their size').toBe(LINE_WORDS + 112);
  });

  it("gives a machine's memory more than glibc's largest dynamic mmap threshold (32 MiB)", () => {
    expect(MIN_SHM_BYTES).toBeGreaterThan(32 * 2 ** 20);
    // MachineMemory.layout is what Machine.boot allocates through (protected: reached as boot does).
    const { sab } = (Machine as unknown as { layout(o: unknown): { sab: SharedArrayBuffer } }).layout(
      machineDefaults(2),
    );
    expect(sab.byteLength).toBeGreaterThanOrEqual(MIN_SHM_BYTES);
  });
});

describe('attachShm', () => {
  const plan = (words: number) => {
    const p = new ShmPlanner();
    p.reserve('x', words);
    return p.allocate();
  };

  it('rejects a wrong magic, naming both values', () => {
    const { sab, map } = plan(20);
    new Int32Array(sab)[0] = 0x12345678;
    expect(() => attachShm(sab, map)).toThrow(`magic 0x12345678, expected 0x${SHM_MAGIC.toString(16)}`);
  });

  it('rejects a wrong layout version, naming both values', () => {
    const { sab, map } = plan(20);
    new Int32Array(sab)[1] = SHM_LAYOUT_VERSION + 6;
    expect(() => attachShm(sab, map)).toThrow(
      `layout version ${SHM_LAYOUT_VERSION + 6} but this code expects ${SHM_LAYOUT_VERSION}`,
    );
  });

  it('rejects a buffer laid out for another map, naming both sizes', () => {
    const a = plan(20); // 16 + 32 words
    const b = plan(40); // 16 + 48 words
    expect(() => attachShm(a.sab, b.map)).toThrow(/\b48\b.*\b64\b/);
  });

  it('rejects a buffer whose length disagrees with its header, naming the length', () => {
    const { sab, map } = plan(20); // 48 words
    const bigger = new SharedArrayBuffer(sab.byteLength + 64);
    new Int32Array(bigger).set(new Int32Array(sab)); // same header, 64 words of buffer
    expect(() => attachShm(bigger, map)).toThrow(/\b64\b/);
  });
});
