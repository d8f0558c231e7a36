/**
 * The kernel on one thread: a machine's memory with no thread started (MachineMemory.build), a
 * Runtime over it driven by a fake clock, and this thread entered as CPU 0's idle task. No
 * worker threads, no wall clock: what a test sees is the kernel's logic, step by step.
 */

import { C_JIFFIES } from '../../src/machine/layout.js';
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
