/**
 * Rings of fixed-size records in shared memory.
 *
 * Records are `recordWords` Int32 words. The hot path never allocates: a producer claims a
 * slot, writes the record's words straight into the Int32Array at the index it was given, and
 * publishes; a consumer peeks at the index of the oldest record, reads it, and releases.
 * A full ring refuses (`claim()` returns -1) and counts the refusal: the caller decides
 * whether to retry, back off or count a drop. Nothing is ever lost silently.
 *
 * Two kinds, with roles fixed for their lifetime (as in ringbuf.js):
 *   SpscRing  one producer and one consumer at a time. Head and tail only. Neither side
 *             caches a position in its view: the role may pass from thread to thread (the
 *             consumer of a NIC ring is whoever owns the receiving CPU), so each call reads
 *             its own side's counter from shared memory.
 *   MpscRing  any number of producers, one consumer at a time (Vyukov's bounded queue):
 *             a producer claims a position with compareExchange on `tail`, writes the slot,
 *             then publishes it through the slot's own sequence word. The consumer knows a
 *             slot is complete only from that word, never from `tail`.
 * "One consumer at a time" means: whoever owns the emulated CPU (ownership hand-off is an
 * Atomics store/load pair, so the next owner sees the previous owner's plain writes).
 *
 * Capacity is a power of two. Positions are free-running Int32 counters compared with
 * wrapping arithmetic `(a - b) | 0`, correct while capacity < 2^30.
 *
 * Region legend (Int32 words from the region base; see src/shm/layout.ts for the ordering rule):
 *   line 0  I    magic, kind, capacity, recordWords: written once at init, read-only after.
 *   line 1  tail      SPSC: written by the producer with Atomics.store (publishes the records
 *                     before it; pairs with the consumer's Atomics.load of tail).
 *                     MPSC: RMW (compareExchange) by producers.
 *           refused   RMW (Atomics.add) by producers: claims refused because the ring was full.
 *           pushed    MPSC only: RMW (Atomics.add) by producers (SPSC: tail is the count).
 *   line 2  head      written by the consumer with Atomics.store (releases slots; pairs with the
 *                     producer's Atomics.load of head (SPSC) — MPSC producers read slot
 *                     sequence words instead). Read racily by anyone for a length estimate,
 *                     which can be late on the producer side.
 *   slots   SPSC: capacity × recordWords, plain; ownership passes via tail (to the consumer)
 *                 and head (back to the producer).
 *           MPSC: capacity × (1 + recordWords): word 0 is the slot's sequence, Atomics.load/
 *                 store only: seq == pos means free for the producer claiming pos;
 *                 seq == pos + 1 means published for the consumer; the consumer's release
 *                 stores pos + capacity. Record words are plain, ordered by the seq store.
 * tail/refused/pushed and head live on different cache lines: producers and the consumer
 * write them from different threads.
 */
import { LINE_WORDS } from './layout.js';

const MAGIC_SPSC = 0x72696e31; // "rin1"
const MAGIC_MPSC = 0x72696e32; // "rin2"

const H_MAGIC = 0;
const H_CAPACITY = 1;
const H_RECORD_WORDS = 2;
const TAIL = LINE_WORDS;
const REFUSED = LINE_WORDS + 1;
const PUSHED = LINE_WORDS + 2;
const HEAD = 2 * LINE_WORDS;
const SLOTS = 3 * LINE_WORDS;

function checkCapacity(capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < 2 || capacity > 1 << 24 || (capacity & (capacity - 1)) !== 0) {
    throw new Error(`ring capacity must be a power of two from 2 to 2^24 (got ${capacity})`);
  }
}

/** A ring must fit the region reserved for it (`available` words), when the caller knows it. */
function checkFits(words: number, available: number | undefined, base: number): void {
  if (available !== undefined && words > available) {
    throw new Error(
      `ring at word ${base} needs ${words} words but its region has ${available}: reserve it with the same kind's wordsFor()`,
    );
  }
}

function attach(i32: Int32Array, base: number, magic: number, kind: string): { capacity: number; recordWords: number } {
  if (i32[base + H_MAGIC] !== magic) {
    throw new Error(`no ${kind} ring at word ${base} (magic 0x${(i32[base + H_MAGIC] >>> 0).toString(16)})`);
  }
  return { capacity: i32[base + H_CAPACITY], recordWords: i32[base + H_RECORD_WORDS] };
}

export class SpscRing {
  readonly capacity: number;
  readonly recordWords: number;
  private readonly mask: number;

  static wordsFor(capacity: number, recordWords: number): number {
    checkCapacity(capacity);
    return SLOTS + capacity * recordWords;
  }

  /** Lay out an empty ring. Context: main thread, before workers start. */
  static init(i32: Int32Array, base: number, capacity: number, recordWords: number, available?: number): void {
    checkFits(SpscRing.wordsFor(capacity, recordWords), available, base);
    i32.fill(0, base, base + SpscRing.wordsFor(capacity, recordWords));
    i32[base + H_MAGIC] = MAGIC_SPSC;
    i32[base + H_CAPACITY] = capacity;
    i32[base + H_RECORD_WORDS] = recordWords;
  }

  constructor(
    readonly i32: Int32Array,
    readonly base: number,
  ) {
    const h = attach(i32, base, MAGIC_SPSC, 'SPSC');
    this.capacity = h.capacity;
    this.recordWords = h.recordWords;
    this.mask = h.capacity - 1;
  }

  /**
   * Producer: index of a free slot's first word, or -1 when full (counted as refused).
   * Write the record, then call {@link publish}. Context: the one producer.
   */
  claim(): number {
    return this.claimAhead(0);
  }

  /**
   * Producer: the free slot `k` records past the next one to publish (k claimed and unpublished
   * before it), or -1 when the ring cannot hold it (counted as refused). Records claimed this way
   * are published together by {@link publishMany}, oldest first. Context: the one producer.
   */
  claimAhead(k: number): number {
    const tail = Atomics.load(this.i32, this.base + TAIL);
    const head = Atomics.load(this.i32, this.base + HEAD); // pairs with the consumer's release
    if (((tail + k - head) | 0) >= this.capacity) {
      Atomics.add(this.i32, this.base + REFUSED, 1);
      return -1;
    }
    return this.base + SLOTS + ((tail + k) & this.mask) * this.recordWords;
  }

  /** Producer: publish the claimed record (Atomics.store of tail, paired with the consumer's load). */
  publish(): void {
    this.publishMany(1);
  }

  /** Producer: publish the `n` oldest claimed records at once (one Atomics.store of tail). */
  publishMany(n: number): void {
    const tail = Atomics.load(this.i32, this.base + TAIL);
    Atomics.store(this.i32, this.base + TAIL, (tail + n) | 0);
  }

  /** Consumer: index of the oldest record's first word, or -1 when empty. Context: the consumer. */
  peek(): number {
    const head = Atomics.load(this.i32, this.base + HEAD);
    const tail = Atomics.load(this.i32, this.base + TAIL); // pairs with publish()
    if (tail === head) return -1;
    return this.base + SLOTS + (head & this.mask) * this.recordWords;
  }

  /**
   * Index of the record at free-running position `pos`, for a reader that walks the published
   * records ahead of head with a cursor of its own (NAPI over a packet ring: src/net/).
   * The record is valid while `pos` is between head and tail.
   */
  slotAt(pos: number): number {
    return this.base + SLOTS + (pos & this.mask) * this.recordWords;
  }
  /** Consumer: done with the record from peek(); its slot goes back to the producer. */
  release(): void {
    const head = Atomics.load(this.i32, this.base + HEAD);
    Atomics.store(this.i32, this.base + HEAD, (head + 1) | 0);
  }

  /** Records in the ring now (racy: can be stale on either side). */
  length(): number {
    return (Atomics.load(this.i32, this.base + TAIL) - Atomics.load(this.i32, this.base + HEAD)) | 0;
  }

  refused(): number {
    return Atomics.load(this.i32, this.base + REFUSED);
  }

  /** Records ever published (the free-running tail; Atomics.load, pairs with publish()). */
  produced(): number {
    return Atomics.load(this.i32, this.base + TAIL);
  }

  /** Records ever released by the consumer (the free-running head). */
  consumed(): number {
    return Atomics.load(this.i32, this.base + HEAD);
  }
}

export class MpscRing {
  readonly capacity: number;
  readonly recordWords: number;
  private readonly mask: number;
  private readonly stride: number;
  /** Position claimed by the last successful claim(); only the claiming thread reads it. */
  private claimed = 0;

  static wordsFor(capacity: number, recordWords: number): number {
    checkCapacity(capacity);
    return SLOTS + capacity * (1 + recordWords);
  }

  /** Lay out an empty ring: slot i's sequence starts at i (free for position i). Context: main thread. */
  static init(i32: Int32Array, base: number, capacity: number, recordWords: number, available?: number): void {
    checkFits(MpscRing.wordsFor(capacity, recordWords), available, base);
    i32.fill(0, base, base + MpscRing.wordsFor(capacity, recordWords));
    i32[base + H_MAGIC] = MAGIC_MPSC;
    i32[base + H_CAPACITY] = capacity;
    i32[base + H_RECORD_WORDS] = recordWords;
    const stride = 1 + recordWords;
    for (let i = 0; i < capacity; i++) i32[base + SLOTS + i * stride] = i;
  }

  constructor(
    readonly i32: Int32Array,
    readonly base: number,
  ) {
    const h = attach(i32, base, MAGIC_MPSC, 'MPSC');
    this.capacity = h.capacity;
    this.recordWords = h.recordWords;
    this.mask = h.capacity - 1;
    this.stride = 1 + h.recordWords;
  }

  /**
   * Producer: claim a slot; returns the index of its first record word, or -1 when full
   * (counted as refused). Write the record, then {@link publish}. Context: any thread; lock-free.
   */
  claim(): number {
    const i32 = this.i32;
    const tailIdx = this.base + TAIL;
    for (;;) {
      const pos = Atomics.load(i32, tailIdx);
      const slot = this.base + SLOTS + (pos & this.mask) * this.stride;
      const seq = Atomics.load(i32, slot); // pairs with the consumer's release store
      const dif = (seq - pos) | 0;
      if (dif === 0) {
        if (Atomics.compareExchange(i32, tailIdx, pos, (pos + 1) | 0) === pos) {
          this.claimed = pos;
          return slot + 1;
        }
      } else if (dif < 0) {
        Atomics.add(i32, this.base + REFUSED, 1);
        return -1;
      }
      // dif > 0: another producer took pos; reload and try the next position.
    }
  }

  /** Producer: publish the slot from the last claim() on this view (store seq = pos + 1). */
  publish(): void {
    const slot = this.base + SLOTS + (this.claimed & this.mask) * this.stride;
    Atomics.add(this.i32, this.base + PUSHED, 1);
    Atomics.store(this.i32, slot, (this.claimed + 1) | 0); // pairs with peek()'s load of seq
  }

  /**
   * Consumer: index of the oldest published record's first word, or -1 when none is
   * published yet (a claimed but unpublished slot blocks the ones after it, by design: order
   * per producer is kept). Context: the one consumer at a time.
   */
  peek(): number {
    const pos = Atomics.load(this.i32, this.base + HEAD);
    const slot = this.base + SLOTS + (pos & this.mask) * this.stride;
    if (Atomics.load(this.i32, slot) !== ((pos + 1) | 0)) return -1;
    return slot + 1;
  }

  /** Consumer: free the record from peek() for the producer that will claim pos + capacity. */
  release(): void {
    const pos = Atomics.load(this.i32, this.base + HEAD);
    const slot = this.base + SLOTS + (pos & this.mask) * this.stride;
    Atomics.store(this.i32, slot, (pos + this.capacity) | 0);
    Atomics.store(this.i32, this.base + HEAD, (pos + 1) | 0);
  }

  /** Claimed minus consumed (racy; includes claimed-but-unpublished slots). */
  length(): number {
    return (Atomics.load(this.i32, this.base + TAIL) - Atomics.load(this.i32, this.base + HEAD)) | 0;
  }

  refused(): number {
    return Atomics.load(this.i32, this.base + REFUSED);
  }

  pushed(): number {
    return Atomics.load(this.i32, this.base + PUSHED);
  }
}
