/**
 * The input pool of drivers/char/random.c (6.x): one BLAKE2s-256 hash state that every CPU mixes
 * into under `input_pool.lock`, and the `init_bits` credit counter that makes the crng ready.
 *
 * Kernel source:
 *   enum { POOL_BITS = BLAKE2S_HASH_SIZE * 8, POOL_READY_BITS = POOL_BITS, POOL_EARLY_BITS = POOL_READY_BITS / 2 };
 *   static struct { struct blake2s_state hash; spinlock_t lock; unsigned int init_bits; } input_pool
 *     = { .hash.h = { BLAKE2S_IV0 ^ (0x01010000 | BLAKE2S_HASH_SIZE), BLAKE2S_IV1, ... } };  // unkeyed BLAKE2s-256
 *   mix_pool_bytes(buf, len): spin_lock_irqsave(&input_pool.lock); blake2s_update(&input_pool.hash, buf, len); unlock
 *   #define credit_init_bits(bits) if (!crng_ready()) _credit_init_bits(bits)
 *   _credit_init_bits(bits): if (!bits) return; add = min(bits, POOL_BITS);
 *     do new = min(POOL_BITS, orig + add); while (!try_cmpxchg(&input_pool.init_bits, &orig, new));
 *     if (orig < POOL_READY_BITS && new >= POOL_READY_BITS) crng_reseed() ... "crng init done"
 *     else if (orig < POOL_EARLY_BITS && new >= POOL_EARLY_BITS) ... crng_init = CRNG_EARLY
 *
 * Differences from the kernel:
 *  - The hash state lives in shared memory and each thread has its own hasher object: under the
 *    lock a mix loads the shared state into the thread's hasher, updates, and stores it back, so
 *    whichever thread mixes continues the same hash. The lock is `ShmLock` (bounded spin, then
 *    sleep), not a spinlock with interrupts off.
 *  - `crng_ready()` is read as `init_bits >= POOL_READY_BITS`; in the kernel the crng becomes
 *    ready in the same call that takes init_bits across 256, so the two agree. Nothing is
 *    extracted (no crng_reseed): the time the threshold is crossed is recorded instead.
 *
 * The mix runs BLAKE2s in place on the shared state (./blake2s.ts, issue 25: ~10x faster than
 * loading the state into @noble/hashes and storing it back). @noble/hashes 2.4.0 (pinned in
 * package.json) still lays out the initial state and computes digest(); the layout is its own
 * saved state, so the two continue each other's hash. Internals relied on, all
 * plain instance properties of its `_BLAKE2s` class (TypeScript-private, so read through the
 * `Blake2sInternals` cast below): the chaining words `v0`..`v7` (int32), `buffer` (Uint8Array(64),
 * the pending, not yet compressed block; BLAKE2 keeps the last block until it knows whether it is
 * final), `buffer32` (a Uint32Array view of `buffer`), `pos` (bytes used in `buffer`) and `length`
 * (bytes absorbed, a number; the BLAKE2s counter t). `finished` / `destroyed` must stay false.
 * `checkBlake2sInternals()` checks the shape on every construction, and
 * test/random/inputpool.test.ts checks that save/restore mid-stream gives the digest of an
 * uninterrupted hasher: either fails loudly if a new version changes these.
 *
 * Region legend (INPUT_POOL_WORDS Int32 words from `base`):
 *   L  written and read only under the input pool lock, plainly (the lock's acquire/release are
 *      Atomics RMWs, which order them). Racy readers outside the lock may see a torn state; the
 *      getters say so.
 *   A  Atomics only.
 *   P  published: written plainly once, then a flag word is set with Atomics.store; readers
 *      Atomics.load the flag first.
 *
 *   line 0  0..15   lock       ShmLock region (LOCK_WORDS): contenders hammer it, so it is alone.
 *   line 1  16..23  h[0..7]    L  BLAKE2s chaining words.
 *           24      pos        L  bytes pending in buf.
 *           25, 26  len lo/hi  L  bytes absorbed in total (= bytes mixed), uint32 halves.
 *           27      mixes      L  mixes so far; a mix's sequence number is the value it found.
 *   line 2  32..47  buf        L  the pending 64-byte block, as 16 words (host byte order).
 *   line 3  48      initBits   A  input_pool.init_bits, 0..256 (compareExchange loop, no lock, as the kernel).
 *           49      creditedTotal A  sum of every `bits` passed to credit(), including after ready
 *                              (uint32, wraps after 2^32 bits).
 *           50      readyFlag  A  0, then 1 (Atomics.store) once readyAtNs is written.
 *           51      earlyFlag  A  as readyFlag, for earlyAtNs.
 *           52, 53  readyAtNs  P  Float64: clock ns when init_bits first reached POOL_READY_BITS.
 *           54, 55  earlyAtNs  P  Float64: clock ns when init_bits first reached POOL_EARLY_BITS.
 */
import { blake2s } from '@noble/hashes/blake2.js';
import { LINE_WORDS } from '../shm/layout.js';
import { LOCK_WORDS, type LockStats, ShmLock } from '../shm/lock.js';
import { blake2sUpdateShared } from './blake2s.js';

/** Int32 words of the input pool region (four cache lines). */
export const INPUT_POOL_WORDS = 64;

/** BLAKE2S_HASH_SIZE * 8. */
export const POOL_BITS = 256;
/** init_bits at which the crng becomes ready (CRNG_READY). */
export const POOL_READY_BITS = POOL_BITS;
/** init_bits at which the crng becomes early-seeded (CRNG_EARLY). */
export const POOL_EARLY_BITS = POOL_READY_BITS / 2;

/** Word offsets inside the region (see the legend above). */
export const InputPoolWord = Object.freeze({
  LOCK: 0,
  H: LOCK_WORDS,
  POS: LOCK_WORDS + 8,
  LEN_LO: LOCK_WORDS + 9,
  LEN_HI: LOCK_WORDS + 10,
  MIXES: LOCK_WORDS + 11,
  BUF: LOCK_WORDS + LINE_WORDS,
  INIT_BITS: LOCK_WORDS + 2 * LINE_WORDS,
  CREDITED_TOTAL: LOCK_WORDS + 2 * LINE_WORDS + 1,
  READY_FLAG: LOCK_WORDS + 2 * LINE_WORDS + 2,
  EARLY_FLAG: LOCK_WORDS + 2 * LINE_WORDS + 3,
  READY_AT: LOCK_WORDS + 2 * LINE_WORDS + 4,
  EARLY_AT: LOCK_WORDS + 2 * LINE_WORDS + 6,
});
const W = InputPoolWord;
const BLOCK_WORDS = 16;
const TWO_32 = 4294967296;

/** The @noble/hashes 2.4.0 `_BLAKE2s` internals this module reads and writes (see the header). */
interface Blake2sInternals {
  v0: number;
  v1: number;
  v2: number;
  v3: number;
  v4: number;
  v5: number;
  v6: number;
  v7: number;
  buffer: Uint8Array;
  buffer32: Uint32Array;
  pos: number;
  length: number;
  finished: boolean;
  destroyed: boolean;
  update(data: Uint8Array): unknown;
  digest(): Uint8Array;
}

/** A fresh unkeyed BLAKE2s-256 hasher, seen through its internals; throws if they moved. */
function newHasher(): Blake2sInternals {
  const h = blake2s.create() as unknown as Blake2sInternals;
  checkBlake2sInternals(h);
  return h;
}

/** Throws with a fix if @noble/hashes no longer has the fields this module relies on. */
export function checkBlake2sInternals(h: unknown): void {
  const x = h as Partial<Blake2sInternals>;
  const bad: string[] = [];
  for (const k of ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'pos', 'length'] as const) {
    if (typeof x[k] !== 'number') bad.push(k);
  }
  if (!(x.buffer instanceof Uint8Array) || x.buffer.length !== 64) bad.push('buffer');
  if (
    !(x.buffer32 instanceof Uint32Array) ||
    x.buffer32.length !== BLOCK_WORDS ||
    x.buffer32.buffer !== x.buffer?.buffer
  ) {
    bad.push('buffer32');
  }
  if (x.finished !== false || x.destroyed !== false) bad.push('finished/destroyed');
  if (bad.length > 0) {
    throw new Error(
      `@noble/hashes blake2s internals changed (${bad.join(', ')}): src/random/inputpool.ts was written against 2.4.0; pin that version or update the save/restore code`,
    );
  }
}

/** A thread's view of the shared input pool. Build one per thread, once. */
export class InputPool {
  /** Lock wait (ns) of the last `mix()`: 0 when the lock was free. */
  lastWaitNs = 0;
  /** Sequence number of the last `mix()`: its position in the lock order (0-based). */
  lastSeq = -1;
  private readonly lock: ShmLock;
  private readonly f64: Float64Array;
  /** Bytes of the shared memory, from i32's byteOffset: the BLAKE2s block is written through it. */
  private readonly u8: Uint8Array;

  constructor(
    private readonly i32: Int32Array,
    private readonly base: number,
    spinLimit?: number,
  ) {
    if (base % LINE_WORDS !== 0)
      throw new Error(`input pool base must be a multiple of ${LINE_WORDS} words (got ${base})`);
    this.lock = new ShmLock(i32, base + W.LOCK, spinLimit);
    checkBlake2sInternals(blake2s.create()); // digest() and init() still use @noble/hashes' state
    this.u8 = new Uint8Array(i32.buffer, i32.byteOffset, i32.length * 4);
    this.f64 = new Float64Array(i32.buffer, i32.byteOffset + (base + W.READY_AT) * 4, 2);
  }

  /**
   * Zero the region and store the kernel's initial hash state (unkeyed BLAKE2s-256).
   * Context: main thread, before any worker attaches.
   */
  static init(i32: Int32Array, base: number): void {
    i32.fill(0, base, base + INPUT_POOL_WORDS);
    ShmLock.init(i32, base + W.LOCK);
    storeState(newHasher(), i32, base);
    const f64 = new Float64Array(i32.buffer, i32.byteOffset + (base + W.READY_AT) * 4, 2);
    f64[0] = -1;
    f64[1] = -1;
  }

  /**
   * mix_pool_bytes(): absorb `bytes[0..len)` into the shared hash under the lock.
   * Returns: the lock wait in ns (0 when uncontended); also in `lastWaitNs`, and the mix's
   * position in the lock order in `lastSeq`.
   * Context: any worker thread (may sleep on the lock; never on the main thread while workers
   * run). Never allocates.
   */
  mix(bytes: Uint8Array, len: number = bytes.length): number {
    const wait = this.lock.lock();
    this.absorbLocked(bytes, len);
    this.lastWaitNs = wait;
    return wait;
  }

  /**
   * mix_pool_bytes() under spin_trylock(&input_pool.lock): absorb as {@link mix} does when the lock
   * is free; when it is held, absorb nothing and return false (random.c's hard-IRQ mix before
   * 4a61bf7f9b18: `if (!spin_trylock(&input_pool.lock)) return;`). Context: any worker thread;
   * never waits.
   */
  tryMix(bytes: Uint8Array, len: number = bytes.length): boolean {
    if (!this.lock.tryLock()) return false;
    this.absorbLocked(bytes, len);
    this.lastWaitNs = 0;
    return true;
  }

  /** The absorb of mix() and tryMix(), then the unlock; sets `lastSeq`. Context: the lock held. */
  private absorbLocked(bytes: Uint8Array, len: number): void {
    const i32 = this.i32;
    const b = this.base;
    let seq = 0;
    try {
      blake2sUpdateShared(i32, this.u8, b + W.H, b + W.BUF, b + W.POS, b + W.LEN_LO, bytes, len);
      seq = i32[b + W.MIXES];
      i32[b + W.MIXES] = seq + 1;
    } finally {
      this.lock.unlock();
    }
    this.lastSeq = seq >>> 0;
  }

  /**
   * credit_init_bits(bits): add to init_bits (capped at POOL_BITS), unless the crng is ready.
   * Records `nowNs` as the ready (or early) time when this call crosses the threshold.
   * Returns: the bits init_bits actually grew by (0 once ready).
   * Context: any thread; lock-free (compareExchange), like the kernel.
   */
  credit(bits: number, nowNs: number): number {
    const i32 = this.i32;
    const b = this.base;
    Atomics.add(i32, b + W.CREDITED_TOTAL, bits);
    let orig = Atomics.load(i32, b + W.INIT_BITS);
    if (orig >= POOL_READY_BITS) return 0; // credit_init_bits: if (!crng_ready())
    if (bits <= 0) return 0;
    const add = Math.min(bits, POOL_BITS);
    let next: number;
    for (;;) {
      next = Math.min(orig + add, POOL_BITS);
      const seen = Atomics.compareExchange(i32, b + W.INIT_BITS, orig, next);
      if (seen === orig) break;
      orig = seen;
    }
    if (orig < POOL_READY_BITS && next >= POOL_READY_BITS) {
      this.f64[0] = nowNs;
      Atomics.store(i32, b + W.READY_FLAG, 1); // publishes readyAtNs; pairs with the load in readyAtNs
    } else if (orig < POOL_EARLY_BITS && next >= POOL_EARLY_BITS) {
      this.f64[1] = nowNs;
      Atomics.store(i32, b + W.EARLY_FLAG, 1); // publishes earlyAtNs
    }
    return next - orig;
  }

  /** input_pool.init_bits (0..256). */
  get initBits(): number {
    return Atomics.load(this.i32, this.base + W.INIT_BITS);
  }

  /** crng_ready(). */
  get ready(): boolean {
    return this.initBits >= POOL_READY_BITS;
  }

  /** Clock ns when init_bits first reached 256; -1 before. */
  get readyAtNs(): number {
    return Atomics.load(this.i32, this.base + W.READY_FLAG) === 1 ? this.f64[0] : -1;
  }

  /** Clock ns when init_bits first reached 128 (CRNG_EARLY); -1 before. */
  get earlyAtNs(): number {
    return Atomics.load(this.i32, this.base + W.EARLY_FLAG) === 1 ? this.f64[1] : -1;
  }

  /** Sum of every `bits` passed to credit(), including those the ready pool ignored. */
  get creditedBitsTotal(): number {
    return Atomics.load(this.i32, this.base + W.CREDITED_TOTAL) >>> 0;
  }

  /** Mixes so far (racy read while workers run). */
  get mixes(): number {
    return Atomics.load(this.i32, this.base + W.MIXES) >>> 0;
  }

  /** Bytes mixed so far. Two words read without the lock: exact after the run, may tear during it. */
  get bytesMixed(): number {
    return (this.i32[this.base + W.LEN_HI] >>> 0) * TWO_32 + (this.i32[this.base + W.LEN_LO] >>> 0);
  }

  lockStats(): LockStats {
    return this.lock.stats();
  }

  /**
   * The BLAKE2s-256 digest of everything mixed so far, from a COPY of the state (the pool goes
   * on). Context: tests and end of run; takes the lock. Allocates.
   */
  digest(): Uint8Array {
    const h = newHasher();
    this.lock.lock();
    try {
      loadState(h, this.i32, this.base);
    } finally {
      this.lock.unlock();
    }
    return h.digest();
  }

  /** The 8 chaining words as stored (for tests and diagnostics). Allocates. */
  chainingWords(): number[] {
    return Array.from(this.i32.subarray(this.base + W.H, this.base + W.H + 8));
  }
}

/** Shared region -> thread's hasher. Context: under the lock (or before workers start). */
function loadState(h: Blake2sInternals, i32: Int32Array, b: number): void {
  const H = b + W.H;
  h.v0 = i32[H];
  h.v1 = i32[H + 1];
  h.v2 = i32[H + 2];
  h.v3 = i32[H + 3];
  h.v4 = i32[H + 4];
  h.v5 = i32[H + 5];
  h.v6 = i32[H + 6];
  h.v7 = i32[H + 7];
  const buf32 = h.buffer32;
  const B = b + W.BUF;
  for (let i = 0; i < BLOCK_WORDS; i++) buf32[i] = i32[B + i];
  h.pos = i32[b + W.POS];
  h.length = (i32[b + W.LEN_HI] >>> 0) * TWO_32 + (i32[b + W.LEN_LO] >>> 0);
}

/** Thread's hasher -> shared region. Context: under the lock (or before workers start). */
function storeState(h: Blake2sInternals, i32: Int32Array, b: number): void {
  const H = b + W.H;
  i32[H] = h.v0;
  i32[H + 1] = h.v1;
  i32[H + 2] = h.v2;
  i32[H + 3] = h.v3;
  i32[H + 4] = h.v4;
  i32[H + 5] = h.v5;
  i32[H + 6] = h.v6;
  i32[H + 7] = h.v7;
  const buf32 = h.buffer32;
  const B = b + W.BUF;
  for (let i = 0; i < BLOCK_WORDS; i++) i32[B + i] = buf32[i];
  i32[b + W.POS] = h.pos;
  const len = h.length;
  i32[b + W.LEN_LO] = len >>> 0;
  i32[b + W.LEN_HI] = Math.floor(len / TWO_32);
}
