/**
 * The workload registry: which Workload (src/workloads/workload.ts) a machine's options name.
 * A new workload is one file implementing the interface and one line here.
 */
import type { MachineOptions, WorkloadOptions } from '../machine/options.js';
import { crossCpu } from './cross-cpu.js';
import { tcpLat } from './tcp-lat.js';
import type { Workload } from './workload.js';

/** A workload with no shared state: only tasks (hogs, spinners) or nothing (background interrupts). */
function tasksOnly(kind: string, w: WorkloadOptions, describe: string): Workload {
  return {
    kind,
    describe: () => describe,
    regions: () => ({}),
    init: () => {},
    tasks: () => (w.kind === 'custom' ? w.tasks : []),
    attach: () => ({ task: () => undefined }),
    busy: () => '',
  };
}

const REGISTRY: {
  [K in WorkloadOptions['kind']]: (w: Extract<WorkloadOptions, { kind: K }>, o: MachineOptions) => Workload;
} = {
  tcp_lat: (w, o) => tcpLat(w, o.cpus),
  cross_cpu: (w, o) => crossCpu(w, o.cpus),
  irq_only: (w) => tasksOnly('irq_only', w, 'background interrupts only'),
  custom: (w) => tasksOnly('custom', w, `tasks: ${w.tasks.map((t) => `${t.kind} on CPU ${t.cpu}`).join(', ')}`),
};

/** The workload a machine's options name. */
export function workloadOf(o: MachineOptions): Workload {
  const make = REGISTRY[o.workload.kind] as (w: WorkloadOptions, o: MachineOptions) => Workload;
  return make(o.workload, o);
}

export type { Workload, WorkloadAttachment } from './workload.js';
