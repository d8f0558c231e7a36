/**
 * Where things run on a machine of several nodes: `--nodes` (NUMA nodes, each its own
 * last-level cache), `--app-cpus` (the CPUs the application's tasks may run on, as taskset or
 * `numactl -N` sets them) and `--nic-irq-cpus` (the CPUs the NIC's vectors interrupt). Each rule
 * throws one line naming the setting the way the user gave it.
 *
 * Context: main thread, while resolving the config.
 */
import type { CpuGroups } from '../hw/board.js';
import { badOption, conflict } from './errors.js';
import type { ParsedPartial } from './input.js';
import type { Origins, Path } from './origins.js';
import type { PartialTopology } from './topology.js';

/** `cpus` split into `nodes` equal, contiguous groups (node n: CPUs n·k .. n·k + k − 1). */
export function nodeGroups(cpus: number, nodes: number): number[][] {
  const k = cpus / nodes;
  return Array.from({ length: nodes }, (_, n) => Array.from({ length: k }, (_, i) => n * k + i));
}

/**
 * `--nodes N`: the numa level split into N nodes and, unless `--topology cache` says otherwise,
 * one last-level cache per node (a socket's L3, as on seed 000's two-socket X7 server).
 * Returns the levels to use in place of the defaults, or undefined when N is 1 or not given.
 */
export function resolveNodes(
  origins: Origins<ParsedPartial>,
  nodes: number | undefined,
  described: PartialTopology,
  cpus: number,
  cpusText: string,
): { numa: CpuGroups; cache: CpuGroups } | undefined {
  if (nodes === undefined) return undefined;
  const path: Path = ['nodes'];
  if (nodes > cpus || cpus % nodes !== 0) {
    const divisors = Array.from({ length: cpus }, (_, i) => i + 1).filter((d) => d > 1 && d < cpus && cpus % d === 0);
    throw badOption(
      origins.name(path),
      `must divide the CPU count (${cpusText}) into equal nodes`,
      origins.got(path, nodes),
      divisors.length
        ? `use ${divisors.slice(0, 3).join(', ')} or 1, or change the CPU count`
        : 'use 1, or change the CPU count',
    );
  }
  if (described.numa && described.numa.length !== nodes) {
    throw conflict(
      `${origins.name(path)} says ${nodes} nodes but ${origins.name(['topology', 'numa'])} describes ${described.numa.length}`,
      'drop one of them',
      true,
    );
  }
  if (nodes === 1 || described.numa) return undefined;
  const groups = nodeGroups(cpus, nodes);
  return { numa: groups, cache: described.cache ?? groups };
}

/** A CPU list (`all` expanded) checked against the machine: one line naming the first stray CPU. */
function checkCpuList(
  origins: Origins<ParsedPartial>,
  path: Path,
  ids: readonly number[] | 'all',
  cpus: number,
  cpusText: string,
): number[] {
  if (ids === 'all') return Array.from({ length: cpus }, (_, i) => i);
  const high = ids.find((id) => id >= cpus);
  if (high !== undefined) {
    throw badOption(
      origins.name(path),
      `must list CPU ids from 0 to ${cpus - 1} (${cpusText})`,
      origins.got(path, ids),
      `drop CPU ${high}, or raise the CPU count`,
      `CPU ${high} is not on the machine`,
    );
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * `--app-cpus`: the allowed CPUs of every application task. Each pair's client and server
 * processes take one allowed CPU each at fork when they can, so a pair needs at least one CPU of
 * its own: more pairs than allowed CPUs are refused (the kernel would stack them; the lab's
 * per-CPU rings are sized for a CPU's own pairs). An explicit --client-cpu / --server-cpu means
 * pinned tasks and cannot go with it.
 */
export function checkAppCpus(
  origins: Origins<ParsedPartial>,
  ids: readonly number[] | 'all',
  instances: number,
  cpus: number,
  cpusText: string,
): number[] {
  const path: Path = ['workload', 'appCpus'];
  const list = checkCpuList(origins, path, ids, cpus, cpusText);
  if (instances > list.length) {
    const inst: Path = ['workload', 'instances'];
    throw conflict(
      `${origins.describe(inst, String(instances))} pairs need at least one allowed CPU each, but ${origins.name(path)} allows ${list.length} (${list.join(',')})`,
      `allow ${instances} CPUs or more, or run at most ${list.length} pair${list.length === 1 ? '' : 's'}`,
      true,
    );
  }
  for (const p of [
    ['workload', 'clientCpu'],
    ['workload', 'serverCpu'],
  ] as Path[]) {
    if (!origins.isDefault(p))
      throw conflict(
        `${origins.name(p)} pins a task, but ${origins.name(path)} lets the scheduler place the application's tasks`,
        `drop ${origins.name(p)}, or give ${origins.name(path)} one CPU to pin them`,
        true,
      );
  }
  return list;
}

/** `--nic-irq-cpus`: the CPUs the NIC's vectors are bound to (smp_affinity). */
export function checkNicIrqCpus(
  origins: Origins<ParsedPartial>,
  ids: readonly number[] | 'all',
  cpus: number,
  cpusText: string,
): number[] {
  return checkCpuList(origins, ['workload', 'nicIrqCpus'], ids, cpus, cpusText);
}
