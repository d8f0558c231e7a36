/**
 * Tasklets (kernel/softirq.c): tasklet_schedule / tasklet_hi_schedule onto the local CPU's
 * list, and tasklet_action_common run from the TASKLET / HI softirq.
 *
 * Emulates: TASKLET_STATE_SCHED (scheduling an already scheduled tasklet returns false and
 * queues nothing), TASKLET_STATE_RUN (a tasklet running on another CPU is requeued and the
 * softirq raised again, as tasklet_trylock failing does), SCHED cleared before the callback.
 * The action runs the tasklets present when it starts; one scheduled meanwhile runs next pass.
 *
 * Context: the CPU's owner; never allocates.
 */
import type { Tasklet } from '../api/types.js';
import { CpuCounter, Softirq } from '../hw/layout.js';
import { MpscRing } from '../shm/ring.js';
import type { CpuContext } from './context.js';
import type { Mechanism } from './mechanism.js';
import { KernelBug, MAX_OBJECTS, O_CPU, O_STATE, type Objects, ObjState } from './objects.js';
import type { Softirqs } from './softirq.js';

export class Tasklets {
  /** Per CPU: [2c] = HI list, [2c+1] = normal list (the `tasklet` region's blocks). Rings used by
   *  the CPU's owner only: it schedules onto its own CPU's lists and drains them in softirq. */
  private readonly lists: MpscRing[] = [];

  constructor(
    private readonly ctx: CpuContext,
    private readonly objects: Objects,
    private readonly softirqs: Softirqs,
  ) {
    for (const base of ctx.R.parts.tasklet) this.lists.push(new MpscRing(ctx.i32, base));
    softirqs.open(Softirq.Hi, (c) => this.action(c, true));
    softirqs.open(Softirq.Tasklet, (c) => this.action(c, false));
  }

  /** tasklet_schedule (hi: tasklet_hi_schedule) on the current CPU. False: already scheduled. */
  schedule(t: Tasklet, hi: boolean): boolean {
    const ctx = this.ctx;
    if ((Atomics.or(ctx.i32, this.objects.ow(t.id, O_STATE), ObjState.Pending) & ObjState.Pending) !== 0) return false;
    const list = this.lists[2 * ctx.cpu + (hi ? 0 : 1)];
    const idx = list.claim();
    if (idx < 0) throw new KernelBug('tasklet list is full');
    ctx.i32[idx] = t.id;
    list.publish();
    Atomics.store(ctx.i32, this.objects.ow(t.id, O_CPU), ctx.cpu);
    this.softirqs.raise(hi ? Softirq.Hi : Softirq.Tasklet);
    return true;
  }

  /** tasklet_action_common(): run the tasklets scheduled on CPU `c` (those present at entry). */
  private action(c: number, hi: boolean): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const list = this.lists[2 * c + (hi ? 0 : 1)];
    let n = list.length();
    while (n-- > 0) {
      const idx = list.peek();
      if (idx < 0) return;
      const id = i32[idx];
      list.release();
      const st = this.objects.ow(id, O_STATE);
      if ((Atomics.or(i32, st, ObjState.Running) & ObjState.Running) !== 0) {
        // Running on another CPU (tasklet_trylock failed): requeue and raise again.
        const j = list.claim();
        i32[j] = id;
        list.publish();
        this.softirqs.mark(c, hi ? Softirq.Hi : Softirq.Tasklet);
        continue;
      }
      Atomics.and(i32, st, ~ObjState.Pending);
      try {
        this.objects.call(id);
      } finally {
        Atomics.and(i32, st, ~ObjState.Running);
      }
      ctx.count(CpuCounter.tasklets_run);
    }
  }
}

/** Tasklets as a kernel mechanism (src/kernel/mechanism.ts). */
export const mechanism: Mechanism<Tasklets> = {
  name: 'tasklet',
  regions: (s) => ({ tasklet: { words: MpscRing.wordsFor(MAX_OBJECTS, 1), count: 2 * s.cpus } }),
  init(m) {
    for (const base of m.R.parts.tasklet) MpscRing.init(m.i32, base, MAX_OBJECTS, 1, m.words(base));
  },
  build: (k) => new Tasklets(k.ctx, k.objects, k.softirqs),
  facade: (t, k) => ({
    taskletSchedule(tl: Tasklet): boolean {
      k.objects.checkHandle('taskletSchedule', 'tasklet', tl);
      return t.schedule(tl, false);
    },
    taskletHiSchedule(tl: Tasklet): boolean {
      k.objects.checkHandle('taskletHiSchedule', 'tasklet', tl);
      return t.schedule(tl, true);
    },
  }),
  setup: (_t, k, index) => ({
    createTasklet: (name, fn) =>
      ({ kind: 'tasklet', id: k.objects.create('tasklet', name, fn, index), name }) as Tasklet,
  }),
};
