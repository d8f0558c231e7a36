/**
 * The workload registry: which Workload (src/workloads/workload.ts) a machine's options name.
 * A new workload is one file implementing the interface and one line here.
 */
import { type CrossCpuOptions, crossCpu } from './cross-cpu.js';
import { type TcpLatOptions, tcpLat } from './tcp-lat.js';
import type { AppTaskSpec, Workload } from './workload.js';

export type WorkloadOptions =
  | TcpLatOptions
  | { kind: 'irq_only' }
  | { kind: 'custom'; tasks: AppTaskSpec[] }
  | CrossCpuOptions;

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
  [K in WorkloadOptions['kind']]: (w: Extract<WorkloadOptions, { kind: K }>, cpus: number) => Workload;
} = {
  tcp_lat: (w, cpus) => tcpLat(w, cpus),
  cross_cpu: (w, cpus) => crossCpu(w, cpus),
  irq_only: (w) => tasksOnly('irq_only', w, 'background interrupts only'),
  custom: (w) => tasksOnly('custom', w, `tasks: ${w.tasks.map((t) => `${t.kind} on CPU ${t.cpu}`).join(', ')}`),
};

/** The workload a machine's options name (`workload`, on a machine of `cpus` CPUs). */
export function workloadOf(o: { readonly workload: WorkloadOptions; readonly cpus: number }): Workload {
  const make = REGISTRY[o.workload.kind] as (w: WorkloadOptions, cpus: number) => Workload;
  return make(o.workload, o.cpus);
}

export type { Workload, WorkloadAttachment } from './workload.js';
