/**
 * The calibration's same-thread switch (c): a Runtime over a machine's memory, on the thread
 * that calls it. Its own module so that only calibration thread A loads the kernel's code
 * (src/harness/calibrate-work.ts imports it dynamically).
 */

import { nowNs } from '../clock.js';
import { machineDefaults, tcpLatOptions } from '../config/defaults.js';
import { CPU_OWNER, CPU_WORDS } from '../hw/layout.js';
import { MachineMemory } from '../machine/memory.js';
import type { MachineOptions } from '../machine/options.js';
import { Runtime } from '../machine/runtime.js';

/**
 * The machine that (c) switches on: 2 CPUs, tcp_lat (its client task is hosted on CPU 0's
 * thread, beside CPU 0's idle task), no interrupts, tracing on. Built in this thread's memory
 * only; no thread is started.
 */
export const SWITCH_MACHINE: MachineOptions = {
  ...machineDefaults(2),
  unboundWorkers: 1,
  irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] },
  workload: tcpLatOptions({ ringBytes: 4096 }),
  strategies: [],
};

/**
 * (c) Same-thread switch, through the real code path: a Runtime over a machine's memory
 * (MachineMemory.build, no thread started), this thread entered as CPU 0's idle task. One cycle
 * is what tcp_lat's receiver costs on its CPU's thread: wake_up_process(task) and schedule()
 * (rq lock, EEVDF pick, Runtime.switchTo's owner store; no doorbell, same thread), the thread
 * loop's owner load and enterCpu (on-CPU check, ctx_switch recorded into the tracer's WASM
 * histogram, as during a measured trial); then the task sleeps (sleepCurrent → schedule →
 * switchTo back to idle) and the idle task re-enters. Returns a function that runs `cycles`
 * cycles and gives ns per switch (half a cycle; each switch carries half a wake-up). With
 * `switchFloorNs`, every switch is charged that floor as a run with --switch-cost charges it.
 */
export function sameThreadSwitcher(switchFloorNs = 0): (cycles: number) => number {
  const opts: MachineOptions = switchFloorNs > 0 ? { ...SWITCH_MACHINE, switchFloorNs } : SWITCH_MACHINE;
  const mem = MachineMemory.build(opts);
  const rt = new Runtime(mem.sab, mem.R, mem.plan, opts, 0);
  const task = mem.plan.tasks.find((t) => t.kind === 'app' && t.thread === 0)?.id;
  if (task === undefined) throw new Error('calibration: no task hosted on CPU 0 thread to switch to');
  const owner = mem.R.cpu + 0 * CPU_WORDS + CPU_OWNER;
  const i32 = mem.i32;
  const noReason = () => false; // sleepCurrent's re-check: nothing to stay awake for
  rt.tracer.on = true;
  rt.enterCpu(0, 0);
  return (cycles: number): number => {
    const t0 = nowNs();
    for (let i = 0; i < cycles; i++) {
      rt.sched.wakeUp(task);
      rt.sched.schedule();
      if (Atomics.load(i32, owner) !== task) throw new Error('calibration: schedule() did not switch to the task');
      rt.enterCpu(0, task);
      rt.sched.sleepCurrent(noReason);
      if (Atomics.load(i32, owner) !== 0) throw new Error('calibration: the task did not switch back to idle');
      rt.enterCpu(0, 0);
    }
    return (nowNs() - t0) / (2 * cycles);
  };
}
