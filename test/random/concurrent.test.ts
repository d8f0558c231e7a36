/**
 * Real worker threads mixing concurrently into one input pool serialise on its lock: each mix
 * logs its bytes at the slot of the sequence number it took under the lock, and the final
 * BLAKE2s state must equal a serial replay of the log in that order (a lost or torn update, or
 * two mixes interleaved inside the lock, would change it).
 */
import type { Worker } from 'node:worker_threads';
import { blake2s } from '@noble/hashes/blake2.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FAST_POOL_WORDS,
  fastPoolBase,
  fastPoolRegionWords,
  INPUT_POOL_WORDS,
  InputPool,
  initFastPool,
  POOL_BITS,
} from '../../src/random/index.js';
import { spawnWorker } from '../../src/threads/spawn.js';
import { nextMessage } from '../shm/helpers.js';
import { LOG_SLOT_WORDS, type MixerWorkerData } from './fixtures/mixer-protocol.js';

const WORKERS = 4;
const MIXES = 1500;

let workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.map((w) => w.terminate()));
  workers = [];
});

describe('concurrent mixes from real worker threads', () => {
  it(`${WORKERS} CPUs x ${MIXES} mixes: the shared hash equals a serial replay in lock order`, async () => {
    // Layout: [header line][input pool][fast pools][go line][log]
    const inputBase = 16;
    const fastPoolRegion = inputBase + INPUT_POOL_WORDS;
    const goIndex = fastPoolRegion + fastPoolRegionWords(WORKERS);
    const logBase = goIndex + 16;
    const total = WORKERS * MIXES;
    const sab = new SharedArrayBuffer(4 * (logBase + total * LOG_SLOT_WORDS));
    const i32 = new Int32Array(sab);
    InputPool.init(i32, inputBase);
    for (let cpu = 0; cpu < WORKERS; cpu++) initFastPool(i32, fastPoolBase(fastPoolRegion, cpu), '64', cpu);
    expect(fastPoolBase(fastPoolRegion, 1) - fastPoolBase(fastPoolRegion, 0)).toBe(FAST_POOL_WORDS);

    for (let cpu = 0; cpu < WORKERS; cpu++) {
      const data: MixerWorkerData = { sab, inputBase, fastPoolRegion, logBase, goIndex, cpu, mixes: MIXES };
      workers.push(spawnWorker(new URL('./fixtures/mixer-worker.js', import.meta.url), { workerData: data }));
    }
    await Promise.all(workers.map((w) => nextMessage(w, 'ready', 60_000)));
    const done = Promise.all(workers.map((w) => nextMessage<{ type: string; mixes?: number }>(w, 'done', 60_000)));
    Atomics.store(i32, goIndex, 1);
    Atomics.notify(i32, goIndex);
    const results = await done;
    expect(results.map((r) => r.mixes)).toEqual(Array(WORKERS).fill(MIXES));
    await Promise.all(workers.map((w) => w.terminate()));
    workers = [];

    const input = new InputPool(i32, inputBase);
    expect(input.mixes).toBe(total);
    expect(input.bytesMixed).toBe(16 * total);
    // Every sequence number taken exactly once, and each CPU's mixes in its program order.
    const replay = blake2s.create();
    const nextK = new Array<number>(WORKERS).fill(0);
    const bytes = new Uint8Array(16);
    const words = new Int32Array(bytes.buffer);
    for (let seq = 0; seq < total; seq++) {
      const slot = logBase + seq * LOG_SLOT_WORDS;
      const cpu = i32[slot] - 1;
      expect(cpu >= 0 && cpu < WORKERS, `log slot ${seq} was never written`).toBe(true);
      expect(i32[slot + 1], `cpu ${cpu}'s mixes out of order at seq ${seq}`).toBe(nextK[cpu]++);
      for (let w = 0; w < 4; w++) words[w] = i32[slot + 2 + w]; // host order = the pool's LE bytes
      replay.update(bytes);
    }
    expect(Buffer.from(input.digest()).toString('hex')).toBe(Buffer.from(replay.digest()).toString('hex'));
    // Each mix of 2 interrupts credits clamp(2 / 64, 1, 128) = 1 bit, lock-free.
    expect(input.creditedBitsTotal).toBe(total);
    expect(input.initBits).toBe(Math.min(POOL_BITS, total));
    expect(input.readyAtNs).toBeGreaterThanOrEqual(0);
    expect(input.lockStats().acquired).toBeGreaterThanOrEqual(total);
  });
});
