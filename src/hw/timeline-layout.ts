/**
 * The timeline rings' words (re-exported by layout.ts; the ring itself is src/hw/timeline.ts).
 */
import { LINE_WORDS } from '../shm/layout.js';

// ---------------------------------------------------------------------------------------------
// Timeline rings (--timeline; src/hw/timeline.ts): one per thread, reserved only when the
// option is on. A flight recorder: the thread writes fixed-size records and overwrites the
// oldest; the main thread reads the tail after each trial and keeps the records in its window.
// ---------------------------------------------------------------------------------------------
/** Words of a timeline record: 8 Int32 words (32 bytes), so that its two doubles are 8-byte
 *  aligned (a ring's records start on a cache line). Fields: TL_* below. */
export const TL_RECORD_WORDS = 8;
/** Words of a ring's header: one line of its own (the head is stored at every record; the
 *  records after it are written by the same thread, read by the main thread). */
export const TL_HEADER_WORDS = LINE_WORDS;
/**
 * Header word: records written since boot (the next record goes to slot head & (capacity − 1)).
 * Written only by the ring's own thread: it writes the record's words plainly, THEN
 * Atomics.store(head + 1), which publishes them. Read by the main thread with Atomics.load: the
 * records below a head it loaded are complete, except those the writer may have overwritten
 * since; the reader loads head again after copying and drops every record older than
 * (second head − capacity) as possibly torn, counted as overwritten.
 */
export const TLH_HEAD = 0;
/** I: the ring's capacity in records (a power of two). */
export const TLH_CAPACITY = 1;
/** Record word: (what << 2) | op (TlOp, TlWhat in timeline.ts). Plain, ring's thread only, like
 *  every record word; published by the TLH_HEAD store. */
export const TL_KIND = 0;
/** Record word: the emulated CPU the event happened on; −1 for the irq generator's events. */
export const TL_CPU = 1;
/** Record word: the event's argument (task id, softirq vector, irq number, ...: see TlWhat). */
export const TL_ARG = 2;
/** Record word: a second argument (see TlWhat). */
export const TL_ARG2 = 3;
/** Record double (f64 index (record + TL_TS) / 2): the event's time, ns since the run's epoch. */
export const TL_TS = 4;
/** Record double (f64 index (record + TL_AUX) / 2): a hand-off's identity for flow arrows (the
 *  CPUF_HANDOFF_NS of the job it hands off or runs); 0 otherwise. */
export const TL_AUX = 6;

/** Words of one thread's timeline ring of `capacity` records. */
export function timelineRingWords(capacity: number): number {
  return TL_HEADER_WORDS + capacity * TL_RECORD_WORDS;
}
