/**
 * Whose slices a machine thread's heap grew in: for naming a suspect when the thread runs out of
 * memory. A thread that dies cannot say whose code it ran, and the strategy in force when it died
 * is often not the one that filled its heap: a strategy that keeps memory in every one of its
 * slices fills the heap over several trials, and the thread may die in the next strategy's slice
 * (a new user's tasklet that kept 1 MiB per run was reported as "inline was in force").
 *
 * After each slice and warm-up the machine's threads report their heaps (Machine.threadHeaps);
 * the growth since the previous report is charged to the strategy that was in force in between.
 * Live objects plus external memory (ArrayBuffers): what a leak keeps. A collection in another
 * strategy's slice charges it a fall, so a strategy that keeps nothing sums to about zero.
 * Context: main thread, between slices.
 */
import type { ThreadHeap } from '../machine/protocol.js';

/** A suspect must have grown the heap by at least this much (bytes): a few MiB is V8's own churn. */
export const SUSPECT_MIN_BYTES = 16 * 2 ** 20;

export interface HeapSuspect {
  label: string;
  /** Bytes the thread's heap grew over the label's slices. */
  bytes: number;
  /** The in-force label's growth (bytes), when it is another. */
  inForceBytes?: number;
}

export class HeapGrowth {
  private readonly last = new Map<string, number>();
  private readonly grew = new Map<string, Map<string, number>>();

  /** After a slice or warm-up of `label`: charge each thread's growth since the last look to it. */
  note(label: string, heaps: readonly { thread: string; heap: ThreadHeap }[]): void {
    for (const { thread, heap } of heaps) {
      const now = heap.used + heap.external;
      const prev = this.last.get(thread);
      this.last.set(thread, now);
      if (prev === undefined) continue;
      const by = this.grew.get(thread) ?? new Map<string, number>();
      this.grew.set(thread, by);
      by.set(label, (by.get(label) ?? 0) + now - prev);
    }
  }

  /**
   * The strategy `thread`'s heap grew most under, when it grew at least SUSPECT_MIN_BYTES and at
   * least twice as much as under any other; undefined otherwise (no one stands out).
   */
  suspect(thread: string, inForce: string | undefined): HeapSuspect | undefined {
    const by = this.grew.get(thread);
    if (!by) return undefined;
    const sorted = [...by].sort((a, b) => b[1] - a[1]);
    const [top, next] = sorted;
    if (!top || top[1] < SUSPECT_MIN_BYTES || (next && next[1] * 2 > top[1])) return undefined;
    return {
      label: top[0],
      bytes: top[1],
      ...(inForce !== undefined && inForce !== top[0] ? { inForceBytes: by.get(inForce) ?? 0 } : {}),
    };
  }
}

/** ` (while strategy X was in force; its heap grew most under Y: +N MiB over Y's slices, +M MiB under X)`. */
export function suspectText(inForce: string | undefined, s: HeapSuspect | undefined): string {
  const mib = (b: number) => `${b >= 0 ? '+' : '−'}${Math.round(Math.abs(b) / 2 ** 20)} MiB`;
  const was = inForce !== undefined ? `while strategy ${inForce} was in force` : '';
  if (!s || s.label === inForce) return was ? ` (${was})` : '';
  const against = s.inForceBytes !== undefined ? `, ${mib(s.inForceBytes)} under ${inForce}` : '';
  return ` (${was ? `${was}; ` : ''}its heap grew most under ${s.label}: ${mib(s.bytes)} over its slices${against})`;
}
