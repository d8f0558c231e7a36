/**
 * The flags of where things run (src/config/placement.ts): rows of CONFIG_FLAGS (flags.ts), kept
 * here so the table's file stays small; they appear in --help after --instances.
 */
import { LIMITS } from './defaults.js';

export const PLACEMENT_FLAGS = [
  {
    flag: '--app-cpus',
    path: 'workload.appCpus',
    value: 'CPUS',
    example: '0-7',
    help: "CPUs the application's tasks may run on (taskset / numactl -N): pairs are spread over them as qperf processes are, and a woken task is placed on one of them as select_task_rq_fair does; one CPU: pinned",
    accepts: 'CPU ids below --cpus like 0-7 or 0,2,4, or all; at least one CPU per pair',
    default: 'pair i pinned on CPUs client+i and server+i (mod --cpus)',
  },
  {
    flag: '--nic-irq-cpus',
    path: 'workload.nicIrqCpus',
    value: 'CPUS',
    example: '0',
    help: "CPUs the NIC's interrupt vectors are bound to, as the driver spreads them: ipoib-* one receive and one send-completion vector for all flows (on the first two listed CPUs, or both on one); ixgbe one queue pair per listed CPU, flows spread by RSS hash",
    accepts: 'CPU ids below --cpus like 0 or 0-3, or all',
    default: "each receiver's own CPU (a vector per CPU that runs an endpoint)",
  },
  {
    flag: '--nodes',
    path: 'nodes',
    value: 'N',
    example: '2',
    help: 'NUMA nodes: the CPUs split into N equal, contiguous nodes, each its own last-level cache (numactl -H on a two-socket server)',
    accepts: `${`${LIMITS.nodes.min}..${LIMITS.nodes.max}`}, dividing --cpus`,
    default: '1 (or the nodes --topology numa describes)',
  },
];
