/**
 * The interrupt controller: raising an interrupt on an emulated CPU.
 *
 * A raise writes a record into the target CPU's IRQ ring (MPSC: the irq thread, NICs and
 * IPI senders all produce), publishes it, sets IRQ_PENDING in the CPU's flags and kicks the
 * CPU if it sleeps. The owner clears IRQ_PENDING before it drains the ring, so a record
 * published while it drains is either drained now or flags the CPU again.
 *
 *     raiser                                   owner of CPU c
 *     claim slot, write record, publish        and(flags, ~IRQ_PENDING)
 *     or(flags, IRQ_PENDING)                   drain ring until peek() == -1
 *     owner is idle (or policy 'always')? ring the CPU thread's doorbell
 *
 * A full ring refuses a device interrupt, counted as dropped (irqs_dropped). An IPI into a full
 * ring is counted (ipis_dropped) and the sender's irq_work stays pending. Nothing is lost
 * silently. (NIC interrupts do not come through here: the CPU's owner evaluates its NIC itself,
 * src/net/nic.ts.)
 */

import type { Doorbell, NotifyPolicy } from '../shm/doorbell.js';
import { getTime, putTime } from '../shm/layout.js';
import { type MpscRing, SpscRing } from '../shm/ring.js';
import {
  ARR_R_DUE,
  ARR_R_IRQ,
  CPU_FLAGS,
  CPU_OWNER,
  CPU_WORDS,
  CpuFlag,
  GlobalCounter,
  IRQ_R_ARG,
  IRQ_R_TIME,
  IRQ_R_VECTOR,
  IRQ_RECORD_WORDS,
} from './layout.js';

/** Interrupt vectors in IRQ ring records. */
export enum Vector {
  /** A device interrupt raised on time (arg: irq number); the irq thread publishes arrivals instead. */
  Device = 1,
  /** A NIC's RX (or shared) vector; timeline records only: the owner takes NIC interrupts
   *  itself (src/net/nic.ts), not through this ring. */
  Net = 2,
  /** CALL_FUNCTION_SINGLE IPI: run this CPU's irq_work list (arg: sender CPU). */
  Ipi = 3,
  /** A NIC's send-completion vector (timeline records only, as Net). */
  NetTx = 4,
}

export class IrqChip {
  constructor(
    private readonly i32: Int32Array,
    private readonly cpuBase: number,
    private readonly globalCounters: number,
    private readonly rings: MpscRing[],
    /** Doorbell of each CPU's thread (index = cpu). */
    private readonly cpuBells: Doorbell[],
    private readonly policy: NotifyPolicy,
  ) {}

  /**
   * Raise `vector` on `cpu` at clock `nowNs`. Returns false when the ring was full (dropped).
   * Context: any thread; never blocks, never allocates.
   */
  raise(cpu: number, vector: number, arg: number, nowNs: number): boolean {
    const ring = this.rings[cpu];
    const idx = ring.claim();
    if (idx < 0) {
      Atomics.add(
        this.i32,
        this.globalCounters + (vector === Vector.Ipi ? GlobalCounter.ipis_dropped : GlobalCounter.irqs_dropped),
        1,
      );
      return false;
    }
    const i32 = this.i32;
    i32[idx + IRQ_R_VECTOR] = vector;
    i32[idx + IRQ_R_ARG] = arg;
    putTime(i32, idx + IRQ_R_TIME, nowNs);
    ring.publish();
    this.flag(cpu, CpuFlag.IrqPending);
    return true;
  }

  /** Set `bit` in `cpu`'s flags and kick it if it idles. Context: any thread. */
  flag(cpu: number, bit: number): void {
    const b = this.cpuBase + cpu * CPU_WORDS;
    Atomics.or(this.i32, b + CPU_FLAGS, bit);
    this.kick(cpu);
  }

  /** Wake CPU `cpu`'s thread if its idle task sleeps (or always, under the 'always' policy). */
  kick(cpu: number): void {
    if (this.policy === 'always' || Atomics.load(this.i32, this.cpuBase + cpu * CPU_WORDS + CPU_OWNER) === cpu) {
      this.cpuBells[cpu].ring();
    }
  }
}

/** Decode a record's raise time. */
export function recordTime(i32: Int32Array, idx: number): number {
  return getTime(i32, idx + IRQ_R_TIME);
}

export { IRQ_RECORD_WORDS };

/**
 * Device-interrupt arrivals, published ahead by the irq thread instead of raised on time: each
 * CPU has an SPSC ring of (due time, irq) records in due order (layout.ts, `arrivals`). The
 * producer is the irq thread; the consumer is whoever owns the CPU, which takes an arrival at
 * its first preemption point at or after the due time (runtime.ts), or, idle, sleeps until the
 * next one is due (idle.ts). Nobody spins to raise an interrupt on time, and the raise time of a
 * device interrupt is its due time, so irq_entry still measures the machine.
 *
 *     irq thread (producer)                      owner of CPU c (consumer)
 *     claim, write due and irq, publish          peek: due <= now ? handle, release : keep
 *     alone in the ring now? kick CPU c         idle: sleep until the head's due (or a kick)
 *   An owner that found the ring empty sleeps with no deadline; the producer's kick after
 *   publishing a record that is then alone in the ring wakes it (the doorbell's publish-then-exchange order, as for
 *   every other wakeup). Arrivals are published in due order per CPU, so a consumer sleeping
 *   until the head's due time never oversleeps a later-published one.
 */
export class Arrivals {
  private readonly rings: SpscRing[];

  constructor(
    private readonly i32: Int32Array,
    bases: readonly number[],
  ) {
    this.rings = bases.map((b) => new SpscRing(i32, b));
  }

  /**
   * Producer (the irq thread): publish an arrival of `irq` on `cpu` due at `dueNs`. Returns
   * ARRIVAL_FULL (refused: the caller counts a drop), ARRIVAL_FIRST (the only record in the ring
   * once published: kick the CPU) or ARRIVAL_QUEUED.
   */
  publish(cpu: number, dueNs: number, irq: number): number {
    const ring = this.rings[cpu];
    const idx = ring.claim();
    if (idx < 0) return ARRIVAL_FULL;
    const i32 = this.i32;
    putTime(i32, idx + ARR_R_DUE, dueNs);
    i32[idx + ARR_R_IRQ] = irq;
    ring.publish();
    // "Was the ring empty?" is asked after the publish: this record alone in the ring means the
    // consumer has taken every earlier one and may have found the ring empty and slept with no
    // deadline. Asked before the publish (a first version), it raced the consumer's last
    // release: the producer saw one record left, the consumer took it, found the ring empty and
    // slept, and nobody kicked it (test/shm/arrivals.test.ts). Two records or more: the consumer
    // has an earlier one to take and will find this one after it. None: it has taken this one.
    return ring.length() === 1 ? ARRIVAL_FIRST : ARRIVAL_QUEUED;
  }

  /** Consumer: the due time (ns) of CPU `cpu`'s next arrival, or +Infinity when none is published. */
  nextDue(cpu: number): number {
    const idx = this.rings[cpu].peek();
    return idx < 0 ? Number.POSITIVE_INFINITY : this.dueOf(idx);
  }

  /** The due time (ns) of the arrival record at `idx`. */
  dueOf(idx: number): number {
    return getTime(this.i32, idx + ARR_R_DUE);
  }

  /** Consumer: the oldest arrival's record index when it is due at `now`, else -1. Read its
   *  irq at `idx + 2` and its due time with {@link dueOf}, then {@link release}. */
  dueAt(cpu: number, now: number): number {
    const idx = this.rings[cpu].peek();
    if (idx < 0) return -1;
    return this.dueOf(idx) <= now ? idx : -1;
  }

  /** Consumer: the arrival from {@link dueAt} is handled. */
  release(cpu: number): void {
    this.rings[cpu].release();
  }

  /** Arrivals published and not yet handled on `cpu` (racy). */
  length(cpu: number): number {
    return this.rings[cpu].length();
  }
}

export const ARRIVAL_QUEUED = 0;
export const ARRIVAL_FIRST = 1;
export const ARRIVAL_FULL = 2;
