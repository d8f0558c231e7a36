/**
 * The tasks a thread hosts, and the loop every CPU or kthread thread runs.
 *
 * A thread hosts one or more tasks (a CPU thread: its idle task and the workload's tasks on
 * that CPU; a kthread thread: one kthread). A task runs only while it owns its CPU. The loop:
 *
 *   find a hosted task t with OWNER[cpu(t)] == t    (Atomics.load; pairs with the hand-off store)
 *   none: announce sleep on the thread's doorbell, re-check, Atomics.wait
 *   else: enterCpu (the two-owner check), t.run() until t gives the CPU away or the run stops
 *
 * Each task's run() polls preemption points; it returns when `rt.task` is no longer itself.
 * The idle task is in idle.ts; the kworkers' in src/kernel/worker.ts, ksoftirqd's in
 * src/kernel/softirq.ts.
 */
export type { HostedTask } from '../kernel/task.js';

import { C_STOP, CPU_OWNER, CPU_WORDS, Phase } from '../hw/layout.js';
import type { HostedTask } from '../kernel/task.js';
import type { TaskPlan } from './plan.js';
import type { Runtime } from './runtime.js';

const active = (p: Phase) => p === Phase.Warmup || p === Phase.Measure;

/** A CPU hog (`stress --cpu`): burns the CPU in ~1 µs steps between preemption points. */
export class HogTask implements HostedTask {
  readonly startsOnPhase = true;
  /** Work done, in steps (a sink the optimiser cannot remove). */
  steps = 0;
  private x = 0x9e3779b9;
  private readonly recheck: () => boolean;
  constructor(
    private readonly rt: Runtime,
    readonly id: number,
  ) {
    this.recheck = () => active(rt.phase) || rt.isStopping();
  }
  run(): void {
    const rt = this.rt;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      if (!active(rt.phase)) {
        if (rt.sched.sleepCurrent(this.recheck)) return;
        continue;
      }
      let x = this.x;
      for (let i = 0; i < 400; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
      }
      this.x = x;
      this.steps++;
    }
  }
}

/** The loop of a CPU or kthread thread. Returns when the machine stops. */
export function runThreadLoop(rt: Runtime, tasks: HostedTask[], plans: TaskPlan[]): void {
  const i32 = rt.i32;
  const bell = rt.bells[rt.threadId];
  const stop = rt.R.control + C_STOP;
  const owned = (): number => {
    for (let k = 0; k < tasks.length; k++) {
      const t = tasks[k].id;
      const c = plans[k].bound ? plans[k].cpu : rt.sched.rqs.taskCpu(t);
      if (Atomics.load(i32, rt.R.cpu + c * CPU_WORDS + CPU_OWNER) === t) return k;
    }
    return -1;
  };
  for (;;) {
    if (Atomics.load(i32, stop) !== 0) return;
    rt.checkControl();
    const k = owned();
    if (k < 0) {
      bell.prepare();
      if (owned() >= 0 || Atomics.load(i32, stop) !== 0 || rt.newEpochPending() || rt.phaseChanged()) {
        bell.cancel();
        continue;
      }
      bell.sleep();
      continue;
    }
    const t = tasks[k];
    const c = plans[k].bound ? plans[k].cpu : rt.sched.rqs.taskCpu(t.id);
    rt.enterCpu(c, t.id);
    t.run();
    // Still owner: the machine is stopping, or the idle task came back to report a collect
    // epoch; stop executing here (the next loop finds the task owner again and re-enters).
    if (rt.task === t.id) rt.leaveCpu();
  }
}
