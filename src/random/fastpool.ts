/**
 * The per-CPU fast pool of drivers/char/random.c: `fast_mix()`, `add_interrupt_randomness()`,
 * `mix_interrupt_randomness()` and `random_online_cpu()`, as in Linux 6.1 and later (with
 * `MIX_INFLIGHT`, the count-based credit, and the mix deferred out of the hard IRQ).
 *
 * Kernel source (6.x, CONFIG_64BIT):
 *
 *   struct fast_pool { unsigned long pool[4]; unsigned long last; unsigned int count; ... };
 *   fast_mix(s, v1, v2): s[3] ^= v1; FASTMIX_PERM(s[0..3]); s[0] ^= v1;
 *                        s[3] ^= v2; FASTMIX_PERM(s[0..3]); s[0] ^= v2;
 *   add_interrupt_randomness(irq):
 *     fast_mix(fast_pool->pool, random_get_entropy(), instruction_pointer(regs) ^ swab(irq));
 *     new_count = ++fast_pool->count;
 *     if (new_count & MIX_INFLIGHT) return;
 *     if (new_count < 1024 && !time_is_before_jiffies(fast_pool->last + HZ)) return;
 *     fast_pool->count |= MIX_INFLIGHT;  ... hand the mix off (workqueue / timer / ...)
 *   mix_interrupt_randomness():
 *     local_irq_disable();
 *     if (fast_pool != this_cpu_ptr(&irq_randomness)) { local_irq_enable(); return; }
 *     memcpy(pool, fast_pool->pool, sizeof(pool));        // unsigned long pool[2]
 *     count = fast_pool->count; fast_pool->count = 0; fast_pool->last = jiffies;
 *     local_irq_enable();
 *     mix_pool_bytes(pool, sizeof(pool));
 *     credit_init_bits(clamp_t(unsigned int, (count & U16_MAX) / 64, 1, sizeof(pool) * 8));
 *     memzero_explicit(pool, sizeof(pool));
 *   random_online_cpu(cpu): per_cpu_ptr(&irq_randomness, cpu)->count = 0;
 *
 * Differences from the kernel (each is forced by the emulation, none changes the arithmetic):
 *  - `random_get_entropy()` is the shared clock in ns (`cyclesNs`), `instruction_pointer(regs)`
 *    is a number the caller passes (`ip`, e.g. a constant per IRQ source), both below 2^53.
 *  - `jiffies` is an int32 that wraps at 2^32 like a 32-bit kernel's; comparisons use
 *    `time_after()` arithmetic, so the wrap is harmless (see `timeAfter`).
 *  - The trigger 1024 is a parameter (`trigger`, default {@link DEFAULT_MIX_TRIGGER}): a what-if knob.
 *  - The wrong-CPU check compares the emulated CPU the mix runs on with the pool's CPU, and counts
 *    the event in `wrongCpu`. Like the 6.x kernel it then returns WITHOUT touching the pool: the
 *    MIX_INFLIGHT bit stays set and this CPU's pool stops handing off until `randomOnlineCpu()`
 *    (the CPU-hotplug callback) clears `count`. (The first deferred version, commit 58340f8e952b,
 *    cleared `count` here with atomic_set_release(); random_online_cpu() replaced that.)
 *  - The kernel's irq-disabled section in the mix (copy the pool, read and reset count) needs no
 *    counterpart: JavaScript is not interrupted, and only the CPU's owner runs its handlers.
 *
 * Region legend: one fast pool per emulated CPU, FAST_POOL_WORDS Int32 words each, one cache
 * line, so two CPUs' pools never share a line. Tags:
 *   I  written once by the main thread in `initFastPool()` before workers start; read-only after.
 *   O  owner-only: read and written plainly, only by the thread that currently owns this
 *      emulated CPU. Only one thread owns a CPU at a time and ownership is handed over with an
 *      Atomics.store / Atomics.load pair (see src/shm/layout.ts), which orders every plain write
 *      of the old owner before every plain read of the new one. This is the kernel's per-CPU
 *      data with interrupts off: nobody else runs on that CPU meanwhile.
 *   A  Atomics only (read-modify-write; racy readers use Atomics.load).
 *   Any other thread may read an O word racily with Atomics.load (statistics): it sees some
 *   recent value, never a torn one.
 *
 *   0..7   pool   O  64-bit variant: pool[i] as (lo, hi) at words 2i, 2i+1 (so the bytes are the
 *                    kernel's little-endian layout); 32-bit variant: pool[i] at word i, 4..7 zero.
 *   8      last   O  jiffies (int32, wrapping) of the last mix; 0 at init like the kernel's
 *                    zero-initialised per-CPU struct.
 *   9      count  O  uint32 as int32: interrupts since the last mix; bit 31 = MIX_INFLIGHT.
 *                    Plain, like the kernel's `++fast_pool->count`: every writer is the owner
 *                    (++ and |= MIX_INFLIGHT in the hard IRQ, "read, set 0" in a mix running on
 *                    this CPU, `randomOnlineCpu()` on the CPU coming online; between slices,
 *                    while the machine is quiet, the main thread's `countWord`: src/harness/
 *                    round.ts carries each strategy's count over its trial's slices). A mix that runs on
 *                    another CPU does not write it (6.x). Racy readers (statistics,
 *                    strategies) use Atomics.load: aligned Int32 accesses never tear.
 *                    Not Atomics.add: a locked RMW costs ~8 ns per interrupt here against <1 ns
 *                    for a plain ++ (bench/fastmix.ts), on a ~23 ns interrupt path.
 *   10     wrongCpu  A  mixes that ran on another CPU (Atomics.add by that CPU's owner).
 *   11     handoffs  O  statistic: times `addInterruptRandomness` returned true.
 *   12     mixes     O  statistic: mixes completed into the input pool.
 *   13     variant   I  64 or 32; a view built for the other variant fails on attach.
 *   14     cpu       I  the emulated CPU this pool belongs to (`this_cpu_ptr` identity).
 *   15     (spare)
 */
import { nowNs as clockNowNs } from '../clock.js';
import { fieldTable, type RecordFields } from '../hw/layout-fields.js';
import { LINE_WORDS } from '../shm/layout.js';
import type { InputPool } from './inputpool.js';
import { HSIPHASH_CONST, hsipPermute32, SIPHASH_CONST, SipState32, SipState64, sipPermute64 } from './siphash.js';

/** Int32 words per CPU's fast pool: one 64-byte cache line. */
export const FAST_POOL_WORDS = 16;

/** Word offsets inside one fast pool (see the legend above). */
export const FastPoolWord = Object.freeze({
  POOL: 0,
  LAST: 8,
  COUNT: 9,
  WRONG_CPU: 10,
  HANDOFFS: 11,
  MIXES: 12,
  VARIANT: 13,
  CPU: 14,
});
/** The fast pool's field table (its words above; `pool` is 4 longs as 8 halves). */
export const FAST_POOL_FIELDS: RecordFields = fieldTable(FastPoolWord, /^[A-Z_]+$/, FAST_POOL_WORDS, { POOL: 8 });

const POOL = FastPoolWord.POOL;
const LAST = FastPoolWord.LAST;
const COUNT = FastPoolWord.COUNT;
const WRONG_CPU = FastPoolWord.WRONG_CPU;
const HANDOFFS = FastPoolWord.HANDOFFS;
const MIXES = FastPoolWord.MIXES;
const VARIANT = FastPoolWord.VARIANT;
const CPU = FastPoolWord.CPU;

/** mixInterruptRandomness's answer when its trylock found input_pool.lock held (nothing mixed). */
export const MIX_SKIPPED = -1;

/** `enum { MIX_INFLIGHT = 1U << 31 }`, as the Int32 the count word holds. */
export const MIX_INFLIGHT = 1 << 31;

/** Interrupts that force a mix even within a second of the last (the kernel's literal 1024). */
export const DEFAULT_MIX_TRIGGER = 1024;

/** '64' = CONFIG_64BIT (SipHash permutation, 64-bit longs); '32' = HalfSipHash, 32-bit longs. */
export const FAST_POOL_VARIANTS = ['64', '32'] as const;
export type FastPoolVariant = (typeof FAST_POOL_VARIANTS)[number];

const TWO_32 = 4294967296;

/** Base word of CPU `cpu`'s fast pool in a region that starts at `regionBase`. */
export function fastPoolBase(regionBase: number, cpu: number): number {
  return regionBase + cpu * FAST_POOL_WORDS;
}

/** Words to reserve for `nCpus` fast pools. */
export function fastPoolRegionWords(nCpus: number): number {
  return nCpus * FAST_POOL_WORDS;
}

/**
 * Set up one CPU's fast pool: pool = the [H]SipHash constants (the kernel's static initialiser),
 * everything else 0. Context: main thread, before any worker attaches.
 */
export function initFastPool(i32: Int32Array, base: number, variant: FastPoolVariant, cpu: number): void {
  if (base % LINE_WORDS !== 0)
    throw new Error(`fast pool base must be a multiple of ${LINE_WORDS} words (got ${base})`);
  if (!Number.isInteger(cpu) || cpu < 0) throw new Error(`fast pool cpu must be a non-negative integer (got ${cpu})`);
  i32.fill(0, base, base + FAST_POOL_WORDS);
  if (variant === '64') {
    for (let i = 0; i < 8; i++) i32[base + POOL + i] = SIPHASH_CONST[i];
  } else {
    for (let i = 0; i < 4; i++) i32[base + POOL + i] = HSIPHASH_CONST[i];
  }
  i32[base + VARIANT] = variant === '64' ? 64 : 32;
  i32[base + CPU] = cpu;
}

/** time_after(a, b): true when a is after b, modulo 2^32: `(int32)(b - a) < 0`. */
export function timeAfter(a: number, b: number): boolean {
  return ((b - a) | 0) < 0;
}

/** time_is_before_jiffies(a) = time_after(jiffies, a): `a` is already in the past. */
export function timeIsBeforeJiffies(a: number, jiffies: number): boolean {
  return timeAfter(jiffies, a);
}

/** 32-bit byte swap (`swab32`). */
export function swab32(x: number): number {
  return (x << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24) | 0;
}

// Scratch state for the permutation; fastMix is not re-entrant and each thread has its own copy.
const st64 = new SipState64();
const st32 = new SipState32();

/**
 * `fast_mix()` with SIPHASH_PERMUTATION on the 64-bit pool at `base` (8 words: (lo, hi) x 4).
 * v1 = (v1hi, v1lo), v2 = (v2hi, v2lo), each half an int32 or uint32.
 * Context: the owner of the pool's CPU. Never allocates.
 */
export function fastMix64(i32: Int32Array, base: number, v1hi: number, v1lo: number, v2hi: number, v2lo: number): void {
  const s = st64;
  const p = base + POOL;
  s.v0lo = i32[p];
  s.v0hi = i32[p + 1];
  s.v1lo = i32[p + 2];
  s.v1hi = i32[p + 3];
  s.v2lo = i32[p + 4];
  s.v2hi = i32[p + 5];
  s.v3lo = i32[p + 6];
  s.v3hi = i32[p + 7];
  // s[3] ^= v; FASTMIX_PERM; s[0] ^= v; for v = v1, then v2. One call site, so TurboFan inlines
  // the permutation once within its inlining budget (two call sites left the second un-inlined).
  let mlo = v1lo;
  let mhi = v1hi;
  for (let r = 0; r < 2; r++) {
    s.v3lo ^= mlo;
    s.v3hi ^= mhi;
    sipPermute64(s);
    s.v0lo ^= mlo;
    s.v0hi ^= mhi;
    mlo = v2lo;
    mhi = v2hi;
  }
  i32[p] = s.v0lo;
  i32[p + 1] = s.v0hi;
  i32[p + 2] = s.v1lo;
  i32[p + 3] = s.v1hi;
  i32[p + 4] = s.v2lo;
  i32[p + 5] = s.v2hi;
  i32[p + 6] = s.v3lo;
  i32[p + 7] = s.v3hi;
}

/**
 * `fast_mix()` with HSIPHASH_PERMUTATION on the 32-bit pool at `base` (4 words).
 * Context: the owner of the pool's CPU. Never allocates.
 */
export function fastMix32(i32: Int32Array, base: number, v1: number, v2: number): void {
  const s = st32;
  const p = base + POOL;
  s.v0 = i32[p];
  s.v1 = i32[p + 1];
  s.v2 = i32[p + 2];
  s.v3 = i32[p + 3] ^ v1;
  hsipPermute32(s);
  s.v0 ^= v1;
  s.v3 ^= v2;
  hsipPermute32(s);
  i32[p] = s.v0 ^ v2;
  i32[p + 1] = s.v1;
  i32[p + 2] = s.v2;
  i32[p + 3] = s.v3;
}

/** credit for one mix: clamp_t(unsigned int, (count & U16_MAX) / 64, 1, sizeof(pool) * 8). */
export function mixCreditBits(count: number, poolBytes: number): number {
  return Math.min(Math.max((count & 0xffff) >>> 6, 1), poolBytes * 8);
}

/**
 * A thread's view of one CPU's fast pool. Build one per thread per CPU, once, and keep it: the
 * view owns a 16-byte scratch buffer (the kernel's on-stack `pool[2]`).
 */
export class FastPool {
  /** The emulated CPU this pool belongs to. */
  readonly cpu: number;
  readonly variant: FastPoolVariant;
  /** sizeof(pool) in mix_interrupt_randomness: two unsigned longs (16 bytes, or 8 on 32-bit). */
  readonly mixBytes: number;
  private readonly is64: boolean;
  private readonly scratch: Uint8Array;

  /** Attach to the pool at `base`. Throws if it was initialised for the other variant. */
  constructor(
    private readonly i32: Int32Array,
    private readonly base: number,
    variant: FastPoolVariant,
  ) {
    const want = variant === '64' ? 64 : 32;
    const got = i32[base + VARIANT];
    if (got !== want) {
      throw new Error(
        `fast pool at word ${base} was initialised for the ${got}-bit variant (or not at all) but this view expects ${want}-bit: call initFastPool with the same variant`,
      );
    }
    this.variant = variant;
    this.is64 = variant === '64';
    this.cpu = i32[base + CPU];
    this.mixBytes = this.is64 ? 16 : 8;
    this.scratch = new Uint8Array(this.mixBytes);
  }

  /**
   * add_interrupt_randomness(): fold one interrupt into the pool and decide whether the caller
   * must hand the mix off now.
   *
   * @param irq       interrupt number (an `int`; swab()ed as an unsigned long)
   * @param cyclesNs  random_get_entropy(): the shared clock in ns, 0 <= cyclesNs < 2^53
   * @param ip        instruction_pointer(regs) analogue, 0 <= ip < 2^53
   * @param jiffies   current jiffies (wraps as int32)
   * @param hz        HZ
   * @param trigger   interrupts that force a mix (kernel: 1024)
   * Returns: true when MIX_INFLIGHT was just set and the caller must defer a call to
   * `mixInterruptRandomness`; false otherwise.
   * Context: hard IRQ on the owner of this CPU. Never allocates, never blocks.
   */
  addInterruptRandomness(
    irq: number,
    cyclesNs: number,
    ip: number,
    jiffies: number,
    hz: number,
    trigger: number = DEFAULT_MIX_TRIGGER,
  ): boolean {
    const i32 = this.i32;
    const b = this.base;
    const irq32 = irq | 0;
    if (this.is64) {
      // v1 = cycles; v2 = ip ^ swab64(irq): swab64 moves irq's low word, byte-swapped, to the top.
      const v2hi = (Math.floor(ip / TWO_32) | 0) ^ swab32(irq32);
      const v2lo = (ip | 0) ^ swab32(irq32 >> 31); // the sign-extended high word of (long)irq
      fastMix64(i32, b, Math.floor(cyclesNs / TWO_32) | 0, cyclesNs | 0, v2hi, v2lo);
    } else {
      fastMix32(i32, b, cyclesNs | 0, (ip | 0) ^ swab32(irq32));
    }
    const newCount = (i32[b + COUNT] + 1) | 0; // new_count = ++fast_pool->count
    i32[b + COUNT] = newCount;
    if ((newCount & MIX_INFLIGHT) !== 0) return false;
    if (newCount >>> 0 < trigger && !timeIsBeforeJiffies(i32[b + LAST] + hz, jiffies)) return false;
    i32[b + COUNT] = newCount | MIX_INFLIGHT; // fast_pool->count |= MIX_INFLIGHT
    i32[b + HANDOFFS]++;
    return true;
  }

  /**
   * mix_interrupt_randomness(): the deferred half. Copies pool[0..1] (sizeof(pool) bytes), resets
   * count (clearing MIX_INFLIGHT) and last, mixes the copy into the input pool under its lock and
   * credits clamp((count & 0xffff) / 64, 1, sizeof(pool) * 8) bits.
   *
   * @param runningCpu  the emulated CPU this call runs on (`this_cpu_ptr` identity)
   * @param jiffies     current jiffies
   * @param nowNs       clock reading for the input pool's "ready at" time (default: now)
   * @param trylock     take input_pool.lock with spin_trylock and skip the mix when it is held
   *                    (random.c's hard-IRQ mix before 4a61bf7f9b18): MIX_INFLIGHT is cleared, count
   *                    and last are left as they were, so the next interrupt hands off again.
   * Returns: the bits passed to credit_init_bits (1 .. 8 * mixBytes), 0 when it ran on the
   * wrong CPU (counted in `wrongCpu`; the pool is left untouched, MIX_INFLIGHT stays set), or
   * {@link MIX_SKIPPED} when `trylock` found the lock held.
   * Context: the owner of `runningCpu`; may block on the input pool's lock (never with `trylock`);
   * never allocates.
   */
  mixInterruptRandomness(
    runningCpu: number,
    jiffies: number,
    inputPool: InputPool,
    nowNs: number = clockNowNs(),
    trylock = false,
  ): number {
    const i32 = this.i32;
    const b = this.base;
    if (runningCpu !== this.cpu) {
      Atomics.add(i32, b + WRONG_CPU, 1);
      return 0;
    }
    const out = this.scratch;
    const p = b + POOL;
    // memcpy(pool, fast_pool->pool, sizeof(pool)): little-endian bytes of pool[0], pool[1].
    const words = this.is64 ? 4 : 2;
    for (let w = 0; w < words; w++) {
      const v = i32[p + w];
      const o = 4 * w;
      out[o] = v;
      out[o + 1] = v >>> 8;
      out[o + 2] = v >>> 16;
      out[o + 3] = v >>> 24;
    }
    const count = i32[b + COUNT]; // count = fast_pool->count; fast_pool->count = 0
    if (trylock && !inputPool.tryMix(out, out.length)) {
      // `if (!spin_trylock(&input_pool.lock)) return;`: count and last untouched (only the lab's
      // MIX_INFLIGHT, which that kernel did not have, is cleared so the next interrupt retries).
      i32[b + COUNT] = count & ~MIX_INFLIGHT;
      out.fill(0);
      return MIX_SKIPPED;
    }
    i32[b + COUNT] = 0;
    i32[b + LAST] = jiffies | 0;
    i32[b + MIXES]++;
    if (!trylock) inputPool.mix(out, out.length);
    const bits = mixCreditBits(count, this.mixBytes);
    inputPool.credit(bits, nowNs);
    out.fill(0); // memzero_explicit
    return bits;
  }

  /**
   * random_online_cpu(): zero `count` (and with it MIX_INFLIGHT) when the CPU comes back online,
   * so that a mix lost on another CPU stops blocking hand-offs.
   * Context: the owner of this CPU (the kernel runs CPUHP_AP_RANDOM_ONLINE on the CPU coming
   * online), or the main thread before workers start.
   */
  randomOnlineCpu(): void {
    this.i32[this.base + COUNT] = 0;
  }

  /**
   * The count word as it is, MIX_INFLIGHT included. Set only while the machine is quiet (between
   * slices: the owner adds nothing then), from the main thread.
   */
  get countWord(): number {
    return Atomics.load(this.i32, this.base + COUNT);
  }

  set countWord(v: number) {
    Atomics.store(this.i32, this.base + COUNT, v | 0);
  }

  /** count without MIX_INFLIGHT (racy read). */
  get count(): number {
    return Atomics.load(this.i32, this.base + COUNT) & ~MIX_INFLIGHT;
  }

  /** Whether MIX_INFLIGHT is set (racy read). */
  get inflight(): boolean {
    return (Atomics.load(this.i32, this.base + COUNT) & MIX_INFLIGHT) !== 0;
  }

  /** jiffies of the last mix. Owner, or after the run. */
  get last(): number {
    return this.i32[this.base + LAST];
  }

  get wrongCpu(): number {
    return Atomics.load(this.i32, this.base + WRONG_CPU) >>> 0;
  }

  /** Owner, or after the run (thread join orders it). */
  get handoffs(): number {
    return this.i32[this.base + HANDOFFS] >>> 0;
  }

  /** Owner, or after the run (thread join orders it). */
  get mixes(): number {
    return this.i32[this.base + MIXES] >>> 0;
  }
}

/** {@link FastPool.addInterruptRandomness} as a function (kernel naming). */
export function addInterruptRandomness(
  fp: FastPool,
  irq: number,
  cyclesNs: number,
  ip: number,
  jiffies: number,
  hz: number,
  trigger: number = DEFAULT_MIX_TRIGGER,
): boolean {
  return fp.addInterruptRandomness(irq, cyclesNs, ip, jiffies, hz, trigger);
}

/** {@link FastPool.mixInterruptRandomness} as a function (kernel naming). */
export function mixInterruptRandomness(
  fp: FastPool,
  runningCpu: number,
  jiffies: number,
  inputPool: InputPool,
  nowNs: number = clockNowNs(),
): number {
  return fp.mixInterruptRandomness(runningCpu, jiffies, inputPool, nowNs);
}
