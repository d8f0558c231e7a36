/**
 * The emulated machine's topology: which CPUs share a core (SMT siblings), a last-level cache,
 * a NUMA node. Unbound workqueues use it for their affinity scopes (`smt`, `cache`, `numa`),
 * as the kernel's `wq_affn_scope` does.
 *
 * Each level is a list of groups of CPU ids. Every CPU appears exactly once per level, and
 * levels nest: each SMT group lies inside one cache group, each cache group inside one NUMA
 * node. Defaults: each CPU its own SMT group; one cache and one NUMA node holding every CPU.
 *
 * Flag syntax: `--topology smt=0-1/2-3,cache=0-3,numa=0-3`: levels separated by `,`, groups
 * by `/`, CPUs within a group by `+` or as a range `a-b` (`smt=0+2/1+3`).
 */

import { type CpuGroups, TOPOLOGY_LEVELS, type Topology, type TopologyLevel } from '../hw/board.js';
import { badOption, conflict, fail, ok, type Parsed } from './errors.js';
import { parseIdList } from './units.js';

// The topology's one declaration is the board's (src/hw/board.ts).
export { type CpuGroups, TOPOLOGY_LEVELS, type Topology, type TopologyLevel };

/** Levels a user described; the others take their defaults. */
export type PartialTopology = { [L in TopologyLevel]?: CpuGroups };

const SHAPE = 'must look like smt=0-1/2-3,cache=0-3,numa=0-3 (groups split by /, CPUs joined by + or a-b)';

export function parseTopologyText(text: string): Parsed<PartialTopology> {
  const topology: { [L in TopologyLevel]?: number[][] } = {};
  for (const part of text.split(',')) {
    const m = /^\s*([a-z]+)\s*=(.*)$/.exec(part);
    if (!m) return fail(SHAPE);
    const level = m[1];
    if (!(TOPOLOGY_LEVELS as readonly string[]).includes(level)) {
      return fail(`must describe the levels ${TOPOLOGY_LEVELS.join(', ')}`, { detail: `unknown level ${level}` });
    }
    if (topology[level as TopologyLevel]) return fail('must describe each level once', { detail: `${level} twice` });
    const groups: number[][] = [];
    for (const groupText of m[2].split('/')) {
      const ids = parseIdList(groupText, '+');
      if (!ids) return fail(SHAPE, { detail: `bad group ${JSON.stringify(groupText)}` });
      groups.push(ids);
    }
    topology[level as TopologyLevel] = groups;
  }
  return ok(topology);
}

/** How many CPUs the described levels span (largest id + 1), or undefined if none is described. */
export function describedCpuCount(topology: PartialTopology): number | undefined {
  let count: number | undefined;
  for (const level of TOPOLOGY_LEVELS) {
    for (const group of topology[level] ?? []) for (const cpu of group) count = Math.max(count ?? 0, cpu + 1);
  }
  return count;
}

/** How the caller names things in messages. */
export interface TopologyNames {
  /** `--topology smt`, `topology.smt in cfg.json`. */
  level(level: TopologyLevel): string;
  /** The value as the user gave it, for "(got ...)". */
  got(level: TopologyLevel): unknown;
  /** The CPU count and where it came from: `--cpus 8`, `cpus 8 in cfg.json`. */
  cpus: string;
  /** A flag is involved: the message points to --help. */
  usage: boolean;
}

const groupText = (group: readonly number[]) => `[${group.join(',')}]`;

/**
 * Check the described levels against `cpus` and each other. Throws the first problem found.
 * Context: main thread, while resolving the config.
 */
export function checkTopology(
  topology: Topology,
  described: PartialTopology,
  cpus: number,
  names: TopologyNames,
): void {
  for (const level of TOPOLOGY_LEVELS) {
    if (described[level]) checkLevel(level, topology[level], cpus, names);
  }
  checkNesting('smt', 'cache', topology, described, names);
  checkNesting('cache', 'numa', topology, described, names);
}

function checkLevel(level: TopologyLevel, groups: CpuGroups, cpus: number, names: TopologyNames): void {
  const groupOf = new Map<number, number>();
  for (const [g, group] of groups.entries()) {
    for (const cpu of group) {
      const earlier = groupOf.get(cpu);
      if (earlier !== undefined) {
        const detail = `CPU ${cpu} is in group ${groupText(groups[earlier])} and group ${groupText(group)}`;
        throw badOption(names.level(level), 'must list every CPU exactly once', names.got(level), undefined, detail);
      }
      if (cpu >= cpus) {
        throw badOption(
          names.level(level),
          `must only name CPUs below the CPU count (${names.cpus})`,
          names.got(level),
          `raise the CPU count or drop CPU ${cpu}`,
          `CPU ${cpu} is too high`,
        );
      }
      groupOf.set(cpu, g);
    }
  }
  if (groupOf.size === cpus) return;
  const covered = groupOf.size;
  const contiguous = [...groupOf.keys()].every((cpu) => cpu < covered);
  if (contiguous) {
    throw conflict(
      `the CPU count (${names.cpus}) is larger than the topology describes: ${names.level(level)} covers CPUs 0 to ${covered - 1}`,
      `describe CPUs ${covered} to ${cpus - 1} in the topology, or use ${covered} CPUs`,
      names.usage,
    );
  }
  const missing = Array.from({ length: cpus }, (_, cpu) => cpu).find((cpu) => !groupOf.has(cpu));
  throw badOption(
    names.level(level),
    `must list every CPU from 0 to ${cpus - 1} exactly once`,
    names.got(level),
    undefined,
    `CPU ${missing} is missing`,
  );
}

function checkNesting(
  inner: TopologyLevel,
  outer: TopologyLevel,
  topology: Topology,
  described: PartialTopology,
  names: TopologyNames,
): void {
  if (!described[inner] && !described[outer]) return; // defaults always nest
  const outerOf = new Map<number, readonly number[]>();
  for (const group of topology[outer]) for (const cpu of group) outerOf.set(cpu, group);
  for (const group of topology[inner]) {
    const home = outerOf.get(group[0]);
    const stray = group.find((cpu) => outerOf.get(cpu) !== home);
    if (stray === undefined || home === undefined) continue;
    const strayHome = outerOf.get(stray) ?? [];
    const blamed = described[inner] ? inner : outer;
    throw badOption(
      names.level(blamed),
      `must nest: each ${inner} group must lie inside one ${outer} group`,
      names.got(blamed),
      undefined,
      `${inner} group ${groupText(group)} has CPU ${group[0]} in ${outer} group ${groupText(home)} and CPU ${stray} in ${outer} group ${groupText(strayHome)}`,
    );
  }
}
