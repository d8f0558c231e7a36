/**
 * A kernel mechanism's seam: everything the machine asks of one, in one place. Its shared
 * regions and the field tables of their records, their initialisation, what of it is still in
 * flight (the drain's `busy()`), the part each thread builds, the hooks a thread's runtime calls
 * (a tick, an IPI), the Kernel calls strategies make and what their setup() gets. The machine
 * knows mechanisms only through this interface and the registry (src/kernel/registry.ts): a new
 * mechanism is its own file and a registry line (docs/architecture.md, "To add").
 */
import type { Kernel, StrategySetup } from '../api/types.js';
import type { MachinePlan, Topology } from '../hw/board.js';
import type { CpuCounterName } from '../hw/counters.js';
import type { IrqChip } from '../hw/irqchip.js';
import type { MachineRegions, RegionDecl } from '../hw/layout.js';
import type { RecordFields } from '../hw/layout-fields.js';
import type { CpuContext } from './context.js';
import type { Objects } from './objects.js';
import type { KernelProfile } from './profiles.js';
import type { Scheduler } from './sched/core.js';
import type { FairPolicyName } from './sched/fair.js';
import type { KthreadCharge } from './sched/rq.js';
import type { Softirqs } from './softirq.js';

/** What a mechanism sizes its regions by. */
export interface KernelShape {
  readonly cpus: number;
  readonly tasks: number;
  readonly pools: number;
}

/**
 * The machine's memory as the main thread sees it: before any worker starts (init: plain
 * stores) and while they run (busy: Atomics loads, racy snapshots).
 */
export interface KernelMemory {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly R: MachineRegions;
  readonly plan: MachinePlan;
  readonly cpus: number;
  readonly hz: number;
  readonly lockSpins: number;
  readonly fair: FairPolicyName;
  /** How kthreads are charged (`--kthread-charge`, KTHREAD_CHARGES in src/kernel/sched/rq.ts). */
  readonly kthreadCharge: KthreadCharge;
  /** Int32 words of the region block that starts at `base` (a ring is initialised to its block). */
  words(base: number): number;
  /** A per-CPU counter summed over CPUs (racy). */
  count(name: CpuCounterName): number;
}

/** What each thread builds its mechanisms over (src/machine/runtime.ts). */
export interface KernelBase {
  readonly ctx: CpuContext;
  readonly objects: Objects;
  readonly sched: Scheduler;
  readonly softirqs: Softirqs;
  readonly chip: IrqChip;
  readonly plan: MachinePlan;
  readonly topology: Topology;
  readonly profile: KernelProfile;
  readonly lockSpins: number;
}

/**
 * The field table of a record a mechanism declares, generated from its module's exported
 * constants (src/hw/layout-fields.ts, fieldTable): those whose names match `prefix`.
 */
export interface RecordSpec {
  readonly prefix: RegExp;
  readonly size: number;
  /** Fields wider than one word. */
  readonly wide?: Readonly<Record<string, number>>;
  /** Constants with the prefix that are not fields (the record's size). */
  readonly not?: readonly string[];
  /** Fields with no constant of their own (a lock at word 0). */
  readonly extra?: RecordFields['fields'];
}

/** What a thread's runtime calls on a mechanism's part. Context: hardirq on CPU `c`. */
export interface MechanismHooks {
  /** A tick on CPU `c` (timers expire here). */
  tick?(c: number): void;
  /** An IPI or self-IPI for CPU `c` (irq_work runs here). */
  ipi?(c: number): void;
}

export interface Mechanism<P = unknown> {
  readonly name: string;
  /** Shared regions by name (MachineRegions.parts). */
  regions?(shape: KernelShape): Record<string, RegionDecl>;
  /** Its records' field tables (checked with the machine's when memory is planned). */
  readonly records?: Readonly<Record<string, RecordSpec>>;
  /** The module whose exported constants declare the records' fields (default: the
   *  registry's entry, the mechanism's own module). */
  readonly words?: Readonly<Record<string, unknown>>;
  /** Initialise its regions. Context: main thread, before any worker starts. */
  init?(m: KernelMemory): void;
  /** What of it is still in flight ('' when nothing), for the drain. Context: main thread. */
  busy?(m: KernelMemory): string;
  /** The part one thread builds (absent: the mechanism is part of the base, built by the runtime). */
  build?(k: KernelBase): P;
  hooks?(part: P): MechanismHooks;
  /** Its Kernel calls (src/api/types.ts); each checks its handles before it acts. */
  facade?(part: P, k: KernelBase): Partial<Kernel>;
  /** What strategy `index`'s setup() gets from it (its createX, its workqueues). */
  setup?(part: P, k: KernelBase, index: number): Partial<StrategySetup>;
}

/** A mechanism of any part type, as the registry holds them. */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds mechanisms of every part type; each is used with its own
export type AnyMechanism = Mechanism<any>;
