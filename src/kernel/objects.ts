/**
 * The kernel-object registry: work items, tasklets, timers and irq_works created by strategies'
 * setup() (and by workloads), their callbacks, and the checks every kernel call makes on the
 * handles it is given.
 *
 * Objects are identified by creation order, so every thread must create the same objects in
 * the same order (setup() is deterministic; the main thread compares the lists at boot). The
 * shared words of an object (state bits, argument, CPU) are in the `objects` region
 * (O_* below); this registry holds only each thread's callbacks.
 */
import type { Callback, Kernel } from '../api/types.js';
import { Where } from '../hw/layout.js';
import type { CpuContext } from './context.js';

// ---------------------------------------------------------------------------------------------
// Capacity: an upper bound on objects queued at once, so that a list holding them is never full
// (a full worklist would lose a PENDING work item).
// ---------------------------------------------------------------------------------------------
/** Work items, tasklets, timers and irq_works a run may create (all strategies together). */
export const MAX_OBJECTS = 256;

// ---------------------------------------------------------------------------------------------
// Kernel objects: work items, tasklets, timers, irq_works. OBJ_WORDS Int32 each.
// ---------------------------------------------------------------------------------------------
export const OBJ_WORDS = 4;
/** R: state bits (ObjState), test-and-set with Atomics.or / compareExchange. */
export const O_STATE = 0;
/** L timer base lock of O_CPU (timers): expiry in jiffies. Work: pool it was queued on (R). */
export const O_ARG = 1;
/** L timer base lock (timers) / R (others): CPU the object is queued on (-1: none). */
export const O_CPU = 2;
/** I: flags (timers: 1 = deferrable). */
export const O_FLAGS = 3;

export enum ObjState {
  /** Queued / scheduled / armed, not yet run (work PENDING, TASKLET_STATE_SCHED, timer pending, IRQ_WORK_PENDING). */
  Pending = 1,
  /** Running now (tasklet TASKLET_STATE_RUN, IRQ_WORK_BUSY). */
  Running = 2,
}

/** What a kernel object runs, and for whom (fault attribution). */
export interface ObjEntry {
  fn: Callback;
  /** Index of the strategy that created it; -1 for the machine's own (workloads). */
  strategy: number;
  kind: 'work' | 'tasklet' | 'timer' | 'irq_work';
  name: string;
}

export { KernelBug } from '../errors.js';

export class Objects {
  readonly list: ObjEntry[] = [];
  /** The facade callbacks receive; set once the facade exists (it needs the subsystems). */
  facade!: Kernel;

  /** Base of the `objects` region (OBJ_WORDS per object). */
  private readonly base: number;

  constructor(private readonly ctx: CpuContext) {
    this.base = ctx.R.parts.objects[0];
  }

  /** Index of word `word` (O_*) of object `obj`. */
  ow(obj: number, word: number): number {
    return this.base + obj * OBJ_WORDS + word;
  }

  create(kind: ObjEntry['kind'], name: string, fn: Callback, strategy: number): number {
    const id = this.list.length;
    if (id >= MAX_OBJECTS)
      throw new Error(`too many kernel objects (limit ${MAX_OBJECTS}): a strategy creates too many in setup()`);
    if (typeof fn !== 'function') throw new Error(`${kind} "${name}" needs a callback function`);
    this.list.push({ fn, strategy, kind, name });
    return id;
  }

  /** Call object `id`'s callback, attributing faults to its strategy. Context: the caller's. */
  call(id: number): void {
    const o = this.list[id];
    const ctx = this.ctx;
    if (o.strategy < 0) {
      o.fn(this.facade);
      return;
    }
    const prev = ctx.inStrategy;
    // The context it runs in, for the watchdog's report (memory.ts whereOf): the caller's.
    const base = ctx.hardirq > 0 ? Where.CallbackHardirq : ctx.softirq > 0 ? Where.CallbackSoftirq : Where.Callback;
    const prevWhere = ctx.setWhere(ctx.cpu, base + id);
    ctx.inStrategy = o.strategy;
    o.fn(this.facade);
    ctx.setWhere(ctx.cpu, prevWhere);
    ctx.inStrategy = prev;
  }

  /**
   * A kernel-object argument must be a handle this thread's setup() created, of the right kind:
   * a strategy passing anything else gets a message, not an internal error. Two loads and
   * compares on the hand-off path.
   */
  checkHandle(call: string, kind: ObjEntry['kind'], h: { kind?: unknown; id?: unknown } | undefined): void {
    const o = typeof h?.id === 'number' ? this.list[h.id] : undefined;
    if (o && h?.kind === kind && o.kind === kind) return;
    const from = { work: 'createWork', tasklet: 'createTasklet', timer: 'createTimer', irq_work: 'createIrqWork' }[
      kind
    ];
    throw new Error(`${call}: expected a ${kind} handle returned by s.${from}() in setup() (got ${describeArg(h)})`);
  }

  /** CPU numbers given to kernel calls must exist. */
  checkCpu(cpu: number, what: string): void {
    if (!Number.isInteger(cpu) || cpu < 0 || cpu >= this.ctx.nrCpus) {
      throw new Error(`${what}: CPU ${cpu} does not exist (this machine has CPUs 0..${this.ctx.nrCpus - 1})`);
    }
  }
}

/** A short description of a value a strategy passed, for messages. */
export function describeArg(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'object') {
    const kind = (v as { kind?: unknown }).kind;
    return kind === undefined
      ? 'an object with no kind'
      : `an object of kind ${JSON.stringify(kind)}, not created here`;
  }
  return `${typeof v} ${JSON.stringify(v)}`;
}
