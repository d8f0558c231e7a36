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
 * A full ring refuses a device interrupt, counted as dropped (irqs_dropped). A NIC interrupt is
 * coalesced instead (irqs_coalesced: a flag bit that makes the next entry raise NET_RX), since
 * its data waits in the NIC's ring and a lost wakeup would strand it. An IPI into a full ring is
 * counted (ipis_dropped) and the sender's irq_work stays pending. Nothing is lost silently.
 */
import type { Doorbell, NotifyPolicy } from '../shm/doorbell.js';
import type { MpscRing } from '../shm/ring.js';
import { CPU_FLAGS, CPU_OWNER, CPU_WORDS, CpuFlag, GlobalCounter, IRQ_RECORD_WORDS } from './layout.js';

/** Interrupt vectors in IRQ ring records. */
export enum Vector {
  /** A device interrupt from the irq thread (arg: irq number). */
  Device = 1,
  /** A NIC receive interrupt (arg: the NIC queue id); the handler raises NET_RX. */
  Net = 2,
  /** CALL_FUNCTION_SINGLE IPI: run this CPU's irq_work list (arg: sender CPU). */
  Ipi = 3,
}

const TWO_32 = 4294967296;

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
      if (vector === Vector.Net) {
        // Never lose a NIC's wakeup: coalesce it (the data is in the NIC's own ring).
        Atomics.add(this.i32, this.globalCounters + GlobalCounter.irqs_coalesced, 1);
        this.flag(cpu, CpuFlag.IrqPending | CpuFlag.NetCoalesced);
        return true;
      }
      Atomics.add(
        this.i32,
        this.globalCounters + (vector === Vector.Ipi ? GlobalCounter.ipis_dropped : GlobalCounter.irqs_dropped),
        1,
      );
      return false;
    }
    const i32 = this.i32;
    i32[idx] = vector;
    i32[idx + 1] = arg;
    i32[idx + 2] = (nowNs % TWO_32) | 0;
    i32[idx + 3] = Math.floor(nowNs / TWO_32);
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
  return (i32[idx + 2] >>> 0) + i32[idx + 3] * TWO_32;
}

export { IRQ_RECORD_WORDS };
