/**
 * The kernel on one thread: a machine's memory with no thread started (MachineMemory.build), a
 * Runtime over it driven by a fake clock, and this thread entered as CPU 0's idle task. No
 * worker threads, no wall clock: what a test sees is the kernel's logic, step by step.
 */

import { C_JIFFIES, SchedPolicy } from '../../src/hw/layout.js';
import { T_WAKEUPS } from '../../src/kernel/sched/rq.js';
import { MachineMemory } from '../../src/machine/memory.js';
import type { MachineOptions } from '../../src/machine/options.js';
import { Runtime } from '../../src/machine/runtime.js';
import { options } from '../machine/helpers.js';

export interface OneThreadKernel {
  mem: MachineMemory;
  rt: Runtime;
  /** The fake clock (ns); advance it with `clock.ns += ...`. */
  clock: { ns: number };
  /** Store jiffies as the irq thread would at a tick boundary. */
  setJiffies(j: number): void;
}

/** Boot the kernel's memory for `o` and enter CPU `cpu` (default 0) as its idle task. */
export function oneThreadKernel(o: Partial<MachineOptions> = {}, cpu = 0): OneThreadKernel {
  const opts = options({ irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] }, tracing: false, ...o });
  const mem = MachineMemory.build(opts);
  const clock = { ns: 1_000_000 };
  const rt = new Runtime(mem.sab, mem.R, mem.plan, opts, cpu, () => clock.ns);
  rt.enterCpu(cpu, cpu);
  return {
    mem,
    rt,
    clock,
    setJiffies: (j) => Atomics.store(mem.i32, mem.R.control + C_JIFFIES, j),
  };
}

/**
 * CPU 0's run queue on one thread, with three spare task slots (the plan's kthreads kworker/0:0,
 * kworker/0:0H and ksoftirqd/0, re-initialised by hand as the test needs them), and the
 * scheduler's locked entry points as one-line calls at a given time `now` (ns).
 */
export function cpu0Queue(o: Partial<MachineOptions> = {}) {
  const k = oneThreadKernel(o);
  const rqs = k.rt.sched.rqs;
  const [a, b, c] = [k.mem.plan.kworker[0], k.mem.plan.kworkerHi[0], k.mem.plan.ksoftirqd[0]];
  const f64 = k.rt.ctx.f64;
  const locked = <T>(f: () => T): T => {
    rqs.lock(0);
    try {
      return f();
    } finally {
      rqs.unlock(0);
    }
  };
  /** try_to_wake_up: 0 already runnable, 1 woken, 2 woken and CPU 0 must reschedule. */
  const wake = (task: number, now: number) => locked(() => rqs.wakeLocked(0, task, now));
  /** A fresh task, woken. `seen`: it has been woken before (not a new task: no fork placement). */
  const run = (task: number, policy = SchedPolicy.Normal, nice = 0, rtPrio = 0, now = 0, seen = false) => {
    rqs.initTask(task, 0, policy, nice, rtPrio);
    if (seen) k.mem.i32[rqs.tw(task, T_WAKEUPS)] = 1;
    return wake(task, now);
  };
  const schedule = (now: number) => locked(() => rqs.scheduleLocked(0, now));
  const tick = (now: number) => locked(() => rqs.tickLocked(0, now));
  return { k, rqs, a, b, c, f64, wake, run, schedule, tick };
}
