/**
 * irq_work (kernel/irq_work.c): irq_work_queue / irq_work_queue_on, and the list run in hardirq
 * context by the IPI handler (or the self-IPI on the local CPU).
 *
 * Emulates: IRQ_WORK_PENDING (queueing a pending irq_work returns false), IRQ_WORK_BUSY while it
 * runs, and an IPI sent only when none is outstanding to the target (llist_add returning "the
 * list was empty"): CPU_IPI_PENDING, cleared by the handler before it drains the list, so a
 * later add sends a new IPI. A local queue raises the self-IPI flag (arch_irq_work_raise),
 * taken at the next preemption point or interrupt exit.
 *
 * Context: queueing from any context on the owner of a CPU; the run in hardirq on the target.
 */
import type { IrqWork } from '../api/types.js';
import { type IrqChip, Vector } from '../hw/irqchip.js';
import { CPU_FLAGS, CPU_IPI_PENDING, CpuCounter, CpuFlag } from '../hw/layout.js';
import { MpscRing } from '../shm/ring.js';
import type { CpuContext } from './context.js';
import type { Mechanism } from './mechanism.js';
import { KernelBug, MAX_OBJECTS, O_STATE, type Objects, ObjState } from './objects.js';

export class IrqWorks {
  private readonly lists: MpscRing[] = [];

  constructor(
    private readonly ctx: CpuContext,
    private readonly objects: Objects,
    private readonly chip: IrqChip,
  ) {
    for (const base of ctx.R.parts.irqWork) this.lists.push(new MpscRing(ctx.i32, base));
  }

  /** irq_work_queue_on(): false when `iw` is already pending. */
  queueOn(iw: IrqWork, cpu: number): boolean {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    this.objects.checkCpu(cpu, 'irq_work_queue_on');
    if ((Atomics.or(i32, this.objects.ow(iw.id, O_STATE), ObjState.Pending) & ObjState.Pending) !== 0) return false;
    const list = this.lists[cpu];
    const idx = list.claim();
    if (idx < 0) throw new KernelBug('irq_work list is full');
    i32[idx] = iw.id;
    list.publish();
    if (cpu === ctx.cpu) {
      // arch_irq_work_raise(): a self-IPI, taken at the next preemption point or irq exit.
      Atomics.or(i32, ctx.cw(cpu, CPU_FLAGS), CpuFlag.IrqWork);
      return true;
    }
    // Send an IPI only if none is outstanding (llist_add returned "was empty").
    if (Atomics.exchange(i32, ctx.cw(cpu, CPU_IPI_PENDING), 1) === 0) {
      ctx.count(CpuCounter.ipis_sent);
      this.chip.raise(cpu, Vector.Ipi, ctx.cpu, ctx.now());
    }
    return true;
  }

  /** Run CPU `c`'s irq_work list in hardirq context (the IPI handler, or the self-IPI). */
  run(c: number): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    Atomics.store(i32, ctx.cw(c, CPU_IPI_PENDING), 0); // before draining: a later add sends a new IPI
    const list = this.lists[c];
    for (;;) {
      const idx = list.peek();
      if (idx < 0) return;
      const id = i32[idx];
      list.release();
      const st = this.objects.ow(id, O_STATE);
      Atomics.store(i32, st, ObjState.Running); // IRQ_WORK_BUSY, PENDING cleared
      try {
        this.objects.call(id);
      } finally {
        Atomics.and(i32, st, ~ObjState.Running);
      }
      ctx.count(CpuCounter.irq_works_run);
    }
  }
}

/** irq_work as a kernel mechanism (src/kernel/mechanism.ts): a list per CPU, run on an IPI. */
export const mechanism: Mechanism<IrqWorks> = {
  name: 'irq_work',
  regions: (s) => ({ irqWork: { words: MpscRing.wordsFor(MAX_OBJECTS, 1), count: s.cpus } }),
  init(m) {
    for (const base of m.R.parts.irqWork) MpscRing.init(m.i32, base, MAX_OBJECTS, 1, m.words(base));
  },
  busy(m) {
    const lists = m.R.parts.irqWork;
    for (let c = 0; c < lists.length; c++)
      if (new MpscRing(m.i32, lists[c]).length() !== 0) return `irq_work pending on CPU ${c}`;
    return '';
  },
  build: (k) => new IrqWorks(k.ctx, k.objects, k.chip),
  hooks: (w) => ({ ipi: (c) => w.run(c) }),
  facade: (w, k) => ({
    irqWorkQueue(iw: IrqWork): boolean {
      k.objects.checkHandle('irqWorkQueue', 'irq_work', iw);
      return w.queueOn(iw, k.ctx.cpu);
    },
    irqWorkQueueOn(iw: IrqWork, cpu: number): boolean {
      k.objects.checkHandle('irqWorkQueueOn', 'irq_work', iw);
      return w.queueOn(iw, cpu);
    },
  }),
  setup: (_w, k, index) => ({
    createIrqWork: (name, fn) =>
      ({ kind: 'irq_work', id: k.objects.create('irq_work', name, fn, index), name }) as IrqWork,
  }),
};
