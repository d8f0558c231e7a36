/** Workloads: which shared regions each needs, their initialisation, and per-thread attachment. */

import type { MachineOptions } from '../machine/options.js';
import type { Runtime, WorkloadHooks } from '../machine/runtime.js';
import type { HostedTask } from '../machine/tasks.js';
import { crossAttach, crossInit, crossRegions } from './cross-cpu.js';
import { tcpAttach, tcpInit, tcpRegions } from './tcp-lat.js';

export function workloadRegions(o: MachineOptions): Record<string, number> {
  const w = o.workload;
  if (w.kind === 'tcp_lat') return tcpRegions(w.msgSize, w.ringBytes);
  if (w.kind === 'cross_cpu') return crossRegions(w, o.cpus);
  return {};
}

export function initWorkload(
  i32: Int32Array,
  regions: Record<string, number>,
  o: MachineOptions,
  words: (base: number) => number | undefined,
): void {
  const w = o.workload;
  if (w.kind === 'tcp_lat') tcpInit(i32, regions, w.msgSize, w.ringBytes, words);
  if (w.kind === 'cross_cpu') crossInit(i32, regions, w, o.cpus, words);
}

export function attachWorkload(
  rt: Runtime,
  o: MachineOptions,
): { hooks: WorkloadHooks; task(id: number): HostedTask | undefined } {
  const w = o.workload;
  if (w.kind === 'tcp_lat') return tcpAttach(rt, w);
  if (w.kind === 'cross_cpu') return crossAttach(rt, w);
  return { hooks: {}, task: () => undefined };
}
