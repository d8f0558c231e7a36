/**
 * One SharedArrayBuffer per run, carved into named regions.
 *
 * This is the only module that turns sizes into offsets. Every other module declares its own
 * region's words (with a legend: who writes, who reads, which ordering) as offsets from the
 * region's base, and asks for the base here. Regions start on a cache line (64 bytes) so that
 * words written by different threads in different regions never share a line.
 *
 * Memory-ordering rule, said once for the whole project: JavaScript `Atomics` operations are
 * sequentially consistent. Plain typed-array writes made before an `Atomics.store` (or any
 * Atomics read-modify-write) are visible to a thread whose `Atomics.load` observes that store.
 * Every publish in this code base is such a store, and its comment names the load it pairs with.
 *
 * The header (the first cache line) is written once by the main thread before any worker
 * starts; a view built by code with another layout version fails at once on attach.
 */

/** 16 Int32 words: one 64-byte cache line. */
export const LINE_WORDS = 16;

export const SHM_MAGIC = 0x64666c62; // "dflb"
/** Bump whenever any region's word layout changes. */
export const SHM_LAYOUT_VERSION = 1;

/** Header words (Int32 indices). I: written once at init by the main thread, read-only after. */
const H_MAGIC = 0; // I
const H_VERSION = 1; // I
const H_WORDS = 2; // I: total Int32 words in the buffer

export interface RegionMap {
  /** Region name → base word index (always a multiple of LINE_WORDS). */
  readonly regions: Readonly<Record<string, { base: number; words: number }>>;
  readonly totalWords: number;
}

/**
 * The smallest buffer a machine gets (planMachine asks ShmPlanner.allocate for it): 33 MiB, just
 * above glibc's DEFAULT_MMAP_THRESHOLD_MAX (32 MiB on 64-bit; malloc/malloc.c, mallopt(3)), so
 * that malloc always maps it with mmap and, freed, never raises the process's dynamic mmap
 * threshold (M_MMAP_THRESHOLD: freeing a mapped chunk raises the threshold to its size, up to
 * that maximum). A machine's memory is ~9–17 MiB; before this, the first machine's freed buffer
 * raised the threshold to its size, every later allocation below it (histogram arrays, message
 * buffers, in every thread) came from the malloc arenas, which keep their high-water mark, and a
 * nine-point sweep's RSS grew by 37–53% (bench/soak.ts --sweep); with this alone by 25%, and with
 * the main thread's merge histograms reused and its garbage collected between points as well
 * (histogram-pool.ts takeHistogram, harness/gc.ts) by −4% to +9%. Pages never touched take no memory: a
 * fresh mapping is zero already, so it costs address space, not RSS.
 */
export const MIN_SHM_BYTES = 33 * 2 ** 20;

/**
 * Collects region requests, then allocates the buffer. Context: main thread, before workers.
 */
export class ShmPlanner {
  private next = LINE_WORDS; // the header takes line 0
  private readonly regions: Record<string, { base: number; words: number }> = {};

  /** Reserve `words` Int32 words for `name`; returns its base. Names must be unique. */
  reserve(name: string, words: number): number {
    if (this.regions[name]) throw new Error(`shm region "${name}" reserved twice`);
    if (!Number.isInteger(words) || words <= 0)
      throw new Error(`shm region "${name}" needs a positive size (got ${words})`);
    const base = this.next;
    this.regions[name] = { base, words };
    this.next += Math.ceil(words / LINE_WORDS) * LINE_WORDS;
    return base;
  }

  /**
   * Allocate and stamp the buffer: the regions' size, or `minBytes` if that is more (the words
   * past the regions are unused; a machine asks for MIN_SHM_BYTES, see there why).
   */
  allocate(minBytes = 0): { sab: SharedArrayBuffer; map: RegionMap } {
    const totalWords = Math.max(this.next, Math.ceil(minBytes / 4 / LINE_WORDS) * LINE_WORDS);
    const sab = new SharedArrayBuffer(totalWords * 4);
    const i32 = new Int32Array(sab);
    i32[H_MAGIC] = SHM_MAGIC;
    i32[H_VERSION] = SHM_LAYOUT_VERSION;
    i32[H_WORDS] = totalWords;
    return { sab, map: { regions: { ...this.regions }, totalWords } };
  }
}

/**
 * Check a buffer's header against this code's layout. Context: every thread, on attach.
 * Throws with the numbers when the buffer was laid out by other code.
 */
export function attachShm(sab: SharedArrayBuffer, map: RegionMap): Int32Array {
  const i32 = new Int32Array(sab);
  if (i32[H_MAGIC] !== SHM_MAGIC) {
    throw new Error(
      `shared memory has magic 0x${(i32[H_MAGIC] >>> 0).toString(16)}, expected 0x${SHM_MAGIC.toString(16)}: not a deferlab buffer`,
    );
  }
  if (i32[H_VERSION] !== SHM_LAYOUT_VERSION) {
    throw new Error(
      `shared memory layout version ${i32[H_VERSION]} but this code expects ${SHM_LAYOUT_VERSION}: rebuild (npm run build) so all threads run the same code`,
    );
  }
  if (i32[H_WORDS] !== map.totalWords || sab.byteLength !== map.totalWords * 4) {
    throw new Error(
      `shared memory holds ${sab.byteLength / 4} words (its header says ${i32[H_WORDS]}) but the region map expects ${map.totalWords}`,
    );
  }
  return i32;
}

/** Base of a named region; throws if the map lacks it. */
export function regionBase(map: RegionMap, name: string): number {
  const r = map.regions[name];
  if (!r) throw new Error(`shm region "${name}" was not reserved`);
  return r.base;
}

/** 2^32: a time (ns, up to 2^53) is stored as two Int32 words, low then high (putTime). */
export const TWO_32 = 4294967296;

/** Write a time (ns) as two words at `idx`: low 32 bits, then the high bits. */
export function putTime(i32: Int32Array, idx: number, t: number): void {
  i32[idx] = (t % TWO_32) | 0;
  i32[idx + 1] = Math.floor(t / TWO_32);
}

/** Read a time (ns) written by {@link putTime}. */
export function getTime(i32: Int32Array, idx: number): number {
  return (i32[idx] >>> 0) + i32[idx + 1] * TWO_32;
}
