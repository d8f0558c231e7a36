/**
 * Test-side helpers for test/shm: worker lifecycle (spawn, await a message, terminate), the
 * run's seed, and buffers laid out with ShmPlanner whose every unreserved word is a canary.
 */
import type { Worker } from 'node:worker_threads';
import { onTestFailed } from 'vitest';
import { attachShm, type RegionMap, ShmPlanner } from '../../src/shm/layout.js';
import { spawnWorker } from '../../src/threads/spawn.js';
import { GO } from './fixtures/protocol.js';

/** How long a test waits for any one worker message before failing (instead of hanging). */
export const MESSAGE_TIMEOUT_MS = 30_000;

/**
 * The seed for this test: DEFERLAB_TEST_SEED if set, else a fresh one. Printed if the test fails,
 * so a failing interleaving's inputs can be replayed (the interleaving itself cannot).
 */
export function testSeed(): number {
  const env = process.env.DEFERLAB_TEST_SEED;
  const seed = env !== undefined ? Number(env) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  onTestFailed(() => {
    console.error(`test/shm seed: ${seed} (replay with DEFERLAB_TEST_SEED=${seed})`);
  });
  return seed;
}

/** The workers a test started; `terminateAll()` in afterEach. */
export class Threads {
  private readonly workers: Worker[] = [];

  /** Start test/shm/fixtures/<name>.ts (named by its .js URL, see src/threads/spawn.ts). */
  spawn(name: string, workerData: unknown): Worker {
    const w = spawnWorker(new URL(`./fixtures/${name}.js`, import.meta.url), { workerData });
    this.workers.push(w);
    return w;
  }

  async terminateAll(): Promise<void> {
    const ws = this.workers.splice(0);
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

/** Resolves with the worker's next message of `type`; rejects on error, exit or timeout. */
export function nextMessage<T>(w: Worker, type: string, ms = MESSAGE_TIMEOUT_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`worker did not send '${type}' within ${ms} ms`));
    }, ms);
    const onMsg = (m: { type: string }) => {
      if (m.type !== type) return;
      cleanup();
      resolve(m as T);
    };
    const onErr = (e: Error) => {
      cleanup();
      reject(e);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`worker exited with code ${code} before sending '${type}'`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      w.off('message', onMsg);
      w.off('error', onErr);
      w.off('exit', onExit);
    };
    w.on('message', onMsg);
    w.on('error', onErr);
    w.on('exit', onExit);
  });
}

/**
 * Spawn each named fixture with `data`, wait until every one is ready, then start them at once
 * (GO in the control region at `ctl`, fixtures/protocol.ts). Returns each one's 'done' message
 * in the order named; each rejects after `ms` (a rejection not awaited is not reported twice).
 */
export async function startTogether(
  threads: Threads,
  names: readonly string[],
  data: { sab: SharedArrayBuffer; ctl: number },
  ms = 60_000,
): Promise<Promise<unknown>[]> {
  const ws = names.map((n) => threads.spawn(n, data));
  await Promise.all(ws.map((w) => nextMessage(w, 'ready')));
  const done = ws.map((w) => nextMessage<unknown>(w, 'done', ms));
  for (const d of done) d.catch(() => {});
  const i32 = new Int32Array(data.sab);
  Atomics.store(i32, data.ctl + GO, 1);
  Atomics.notify(i32, data.ctl + GO);
  return done;
}

/** Post `msg` and await the reply of type `reply`. */
export function request<T>(w: Worker, msg: unknown, reply: string, ms = MESSAGE_TIMEOUT_MS): Promise<T> {
  const p = nextMessage<T>(w, reply, ms);
  w.postMessage(msg);
  return p;
}

/** Poll `cond` on the event loop (never blocking this thread) until true; throws after `ms`. */
export async function until(cond: () => boolean, what: string, ms = MESSAGE_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** The canary expected at word `i` for `seed`: never 0, so a zeroing fill is caught too. */
export function canaryAt(i: number, seed: number): number {
  let x = Math.imul(i ^ seed, 0x27d4eb2d);
  x ^= x >>> 15;
  return x | 0x40000000;
}

export interface CanaryBuffer {
  sab: SharedArrayBuffer;
  i32: Int32Array;
  map: RegionMap;
  base: Record<string, number>;
  /** Canary words that changed: "word N: got X, expected Y" (empty when all are intact). */
  broken(): string[];
}

/**
 * Reserve `regions` (name → words) with ShmPlanner, a guard line before, between and after
 * them, allocate, and write a canary into every word no region owns (the header line's spare
 * words, the guard lines, each region's padding up to the next line). The word just before
 * every region and the word just after it are therefore canaries.
 */
export function canaryBuffer(regions: Record<string, number>, seed: number): CanaryBuffer {
  const planner = new ShmPlanner();
  let guards = 0;
  planner.reserve(`guard-${guards++}`, 16);
  for (const [name, words] of Object.entries(regions)) {
    planner.reserve(name, words);
    planner.reserve(`guard-${guards++}`, 16);
  }
  const { sab, map } = planner.allocate();
  const i32 = attachShm(sab, map);
  const owned = new Uint8Array(map.totalWords);
  owned.fill(1, 0, 3); // the header's magic, version, size
  for (const name of Object.keys(regions)) {
    const r = map.regions[name];
    owned.fill(1, r.base, r.base + r.words);
  }
  for (let i = 0; i < map.totalWords; i++) if (!owned[i]) i32[i] = canaryAt(i, seed);
  const base: Record<string, number> = {};
  for (const name of Object.keys(regions)) base[name] = map.regions[name].base;
  return {
    sab,
    i32,
    map,
    base,
    broken() {
      const out: string[] = [];
      for (let i = 0; i < map.totalWords; i++) {
        if (!owned[i] && Atomics.load(i32, i) !== canaryAt(i, seed)) {
          out.push(`word ${i}: got ${Atomics.load(i32, i)}, expected ${canaryAt(i, seed)}`);
        }
      }
      return out;
    },
  };
}
