/**
 * The workqueue's kthreads: kworker/n:0, kworker/n:0H and the unbound kworker/uN:i, each a
 * hosted task (src/kernel/task.ts) that processes its pool's worklist (src/kernel/workqueue.ts).
 */
import { CpuCounter } from '../hw/layout.js';
import type { HostedTask, TaskHost } from './task.js';
import { P_NR_RUNNING, type Workqueues } from './workqueue.js';

/** kworker/n:0, kworker/n:0H and the unbound kworker/uN:i: process their pool's worklist. */
export class WorkerTask implements HostedTask {
  /** Counted in the pool's nr_running (between waking and going to sleep). */
  private running = false;
  private readonly nrRunning: number;
  private readonly recheck: () => boolean;
  constructor(
    private readonly rt: TaskHost,
    private readonly workqueues: Workqueues,
    readonly id: number,
    private readonly pool: number,
  ) {
    this.nrRunning = workqueues.pw(pool, P_NR_RUNNING);
    this.recheck = () => workqueues.hasWork(pool) || rt.isStopping();
  }
  run(): void {
    const rt = this.rt;
    const workqueues = this.workqueues;
    const i32 = rt.i32;
    if (!this.running) {
      Atomics.add(i32, this.nrRunning, 1);
      this.running = true;
    }
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      const id = workqueues.pop(this.pool);
      if (id >= 0) {
        workqueues.run(id); // its deferred job reports what it is charged (driver.ts, runDeferred)
        rt.count(CpuCounter.works_run);
        continue;
      }
      // worker_enter_idle: leave nr_running first, then re-check the list (pairs with the
      // producer's publish-then-load of nr_running).
      Atomics.sub(i32, this.nrRunning, 1);
      this.running = false;
      if (rt.sched.sleepCurrent(this.recheck)) return;
      Atomics.add(i32, this.nrRunning, 1);
      this.running = true;
      if (rt.task !== this.id) return;
    }
  }
}
