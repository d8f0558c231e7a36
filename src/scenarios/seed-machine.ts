/**
 * seed-machine (issue #26 item 7): random-regression's part 2, seed 000's three observations, on
 * the seed's machine rather than on two CPUs: 16 CPUs in 2 NUMA nodes, qperf's processes on node
 * 0 (`numactl -m0 -N0 qperf ...`, the seed's client), the NIC's vectors where the driver hints
 * them, one pair and 8 pairs (the seed's "8 processes"), IPoIB connected and datagram mode and
 * ixgbe, random.c's trigger at the bisected backport's 64 and at 1024, kernel 5.15. Then the same
 * grid with the 5.15 ksoftirqd rule switched off (`--softirq-defer off`): Tejun's theory
 * ("waking up a kthread over and over again ... competing with softirqd which is handling net
 * rx") as an ablation, with the rule's own counters per condition.
 *
 * Vector placement, per profile (src/net/vectors.ts for the flows):
 * - IPoIB: the receive CQ on completion vector 0 and the send CQ on vector 1
 *   (ipoib_transport_dev_init: `comp_vector = req_vec`, `req_vec + 1`), and mlx4 hints
 *   completion vector k's IRQ to CPU k (drivers/net/ethernet/mellanox/mlx4/main.c,
 *   mlx4_init_affinity_hint: `requested_cpu = eqn - off - !!(eqn > MLX4_EQ_ASYNC)`): CPUs 0 and 1.
 * - ixgbe: one TxRx queue pair per CPU up to the RSS limit of 16 (ixgbe_set_rss_queues, "16
 *   queue limit of RSS"; with ATR the Flow Director limit, also one per online CPU here), queue v
 *   hinted to CPU v (ixgbe_alloc_q_vector: `cpu = v_idx`, later `cpumask_local_spread(v_idx,
 *   node)`: the same set for 16 queues on 16 CPUs): CPUs 0..min(cpus, 16) − 1, flows by RSS hash.
 *
 * Background interrupts are 0 by default: no source gives the seed machine's rate (issue #26 says
 * the 20k/s per CPU of the other scenarios has none); `--irq-rate` sets one.
 */
import { tcpLatOptions } from '../config/defaults.js';
import { type CommandRules, noHogs } from '../config/rules.js';
import { controlLabel, type ResolvedConfig } from '../config/schema.js';
import { formatSize } from '../config/units.js';
import type { NicProfileName } from '../net/profiles.js';
import { nicOptions } from '../net/profiles.js';
import type { Estimate } from '../report/statistics/meta.js';
import type { RunResults, StrategyResult } from '../report/types.js';
import {
  dur,
  NO_TIMELINE,
  needsTracing,
  pct,
  printResults,
  printVerdicts,
  type ScenarioContext,
  SEED_EFFECT,
  scenarioStatus,
  seedInline,
  specs,
  stageValue,
  strategy,
  subRun,
  type Verdict,
} from './common.js';
import { matchedDifferenceVerdict, pooledEffect } from './effects.js';
import {
  deltaText,
  fmtNum,
  type NetGroup,
  type NetPoint,
  netPoint,
  type Observation,
  observationVerdicts,
  pointLabel,
} from './random-regression-net.js';

/** The seed's 8 qperf processes ("Ran 8 processes of the benchmark on the original system"). */
export const SEED_PAIRS = 8;
/** ixgbe's RSS queue limit on the seed's 82599 (ixgbe_set_rss_queues: "16 queue limit of RSS"). */
const IXGBE_RSS_QUEUES = 16;
const KiB = 1024;

/** One condition of the grid: a NIC profile and a pair count, swept over triggers (or sizes). */
export interface MachineGroup {
  nic: NicProfileName;
  pairs: number;
}

export interface MachineGrid {
  groups: MachineGroup[];
  /** The ksoftirqd rule per half of the grid: on (5.15's own), then off (the ablation). */
  rules: boolean[];
}

/**
 * The seed's conditions: IPoIB CM with one pair (the regression), UD with one pair, ixgbe with one
 * pair (no regression), IPoIB CM and UD with 8 pairs (no regression). ixgbe with 8 pairs is left
 * out: the seed ran its 8 processes on the IPoIB system only, so it makes no claim there.
 */
export const SEED_GRID: MachineGrid = {
  groups: [
    { nic: 'ipoib-cm', pairs: 1 },
    { nic: 'ipoib-ud', pairs: 1 },
    { nic: 'ixgbe', pairs: 1 },
    { nic: 'ipoib-cm', pairs: SEED_PAIRS },
    { nic: 'ipoib-ud', pairs: SEED_PAIRS },
  ],
  rules: [true, false],
};

/** The triggers swept by default: the bisected backport 4a61bf7f9b18's 64 and random.c's 1024. */
export const SEED_TRIGGERS = [64, 1024];

const RULES: CommandRules = {
  minNodeCpus: { count: SEED_PAIRS, why: `whose ${SEED_PAIRS} qperf pairs run on node 0 (numactl -N0)` },
  fixed: {
    ...noHogs(),
    strategies: {
      kind: 'sets',
      why: "it compares workqueue with the kernel's inline before the change (inline_trylock on 5.15), as part 2 of random-regression does",
    },
    baseline: {
      kind: 'sets',
      why: "it compares workqueue with the kernel's inline before the change (inline_trylock on 5.15)",
    },
    'workload.kind': { kind: 'sets', why: "it measures qperf's tcp_lat, as the seed did" },
    'workload.nic': { kind: 'sets', why: 'it runs ipoib-cm, ipoib-ud and ixgbe, a sub-run each' },
    ...Object.fromEntries(
      ['workload.mtu', 'workload.linkRate', 'workload.rxUsecs', 'workload.rxFrames'].map((f) => [
        f,
        { kind: 'sets', why: "each NIC runs at its driver's defaults (src/net/profiles.ts)" } as const,
      ]),
    ),
    'workload.instances': { kind: 'sets', why: `it runs 1 and ${SEED_PAIRS} pairs, a sub-run each` },
    'workload.appCpus': { kind: 'sets', why: "qperf runs on NUMA node 0's CPUs (numactl -N0), placed at wakeup" },
    'workload.nicIrqCpus': { kind: 'sets', why: "it puts each NIC's vectors where its driver hints them" },
    'workload.clientCpu': { kind: 'unused', why: 'the scheduler places qperf on node 0 at every wakeup' },
    'workload.serverCpu': { kind: 'unused', why: 'the scheduler places qperf on node 0 at every wakeup' },
    softirqDefer: { kind: 'sets', why: 'it runs the grid with the ksoftirqd rule on, then off' },
    tracing: needsTracing('its verdicts compare traced one-way latencies'),
    ...NO_TIMELINE,
  },
  sweeps: { params: ['trigger', 'msg_size'], why: 'each sub-run sweeps one of them' },
};

export const seedMachinePreset = {
  summary:
    "seed 000's machine: 16 CPUs in 2 nodes, qperf on node 0, the drivers' vectors; workqueue vs inline, 1 and 8 pairs, IPoIB and ixgbe, ksoftirqd rule on and off",
  config: {
    cpus: 16,
    nodes: 2,
    kernel: '5.15',
    trials: 3,
    trialMs: '800ms',
    warmupMs: '200ms',
    irq: { rate: 0 },
    // A sleeping CPU thread halts: 16 CPU threads share the host's cores.
    idle: 'halt',
    workload: { kind: 'tcp_lat', msgSize: 64 * KiB },
    sweep: { param: 'trigger', values: SEED_TRIGGERS },
    control: true,
    until: 10,
    maxTimeMs: '15s',
  },
  rules: RULES,
  sweeps: seedMachineSweeps(SEED_GRID),
};

/** What it sweeps, a line each, for the help. */
export function seedMachineSweeps(grid: MachineGrid): string[] {
  const groups = grid.groups.map((g) => `${g.nic} × ${g.pairs}`).join(', ');
  return [
    `sub-runs: ${groups}; each with the ksoftirqd rule ${grid.rules.map((r) => (r ? 'on' : 'off')).join(', then ')} (--softirq-defer)`,
    `each sub-run: trigger ${SEED_TRIGGERS.join(', ')} at msg_size 64K (--sweep trigger:... or msg_size:... replaces it)`,
    `${grid.groups.length * grid.rules.length} sub-runs of ${SEED_TRIGGERS.length} points: about 13 minutes on a 2-core host (--tdf N: longer)`,
  ];
}

/** The CPUs the NIC's vectors interrupt, as the driver hints them (see the file comment). */
export function driverVectors(nic: NicProfileName, cpus: number): number[] {
  if (nic === 'ixgbe') return Array.from({ length: Math.min(cpus, IXGBE_RSS_QUEUES) }, (_, i) => i);
  return cpus > 1 ? [0, 1] : [0];
}

/** One sub-run: its name, its group, its rule and the config it runs. */
export interface MachineRun {
  name: string;
  group: MachineGroup;
  rule: boolean;
  config: ResolvedConfig;
}

/** The sub-runs, from the scenario's resolved config `c`. Pure: no machine is booted. */
export function seedMachinePlan(c: ResolvedConfig, grid: MachineGrid = SEED_GRID): MachineRun[] {
  const wl = c.workload.kind === 'tcp_lat' ? c.workload : tcpLatOptions();
  const sweep = c.sweep ?? { param: 'trigger' as const, values: SEED_TRIGGERS };
  const maxMsg = Math.max(wl.msgSize, ...(sweep.param === 'msg_size' ? sweep.values : []));
  const ringBytes = Math.max(wl.ringBytes, 2 ** Math.ceil(Math.log2(maxMsg * 4 + 64)));
  const node0 = [...(c.topology.numa[0] ?? [])];
  const runs: MachineRun[] = [];
  for (const rule of grid.rules)
    for (const group of grid.groups)
      runs.push({
        name: `seed-machine-${group.nic}${group.pairs > 1 ? `-x${group.pairs}` : ''}-ksoftirqd-${rule ? 'on' : 'off'}`,
        group,
        rule,
        config: {
          ...c,
          strategies: specs([seedInline(c.kernel), 'workqueue']),
          baseline: seedInline(c.kernel),
          control: c.control && controlLabel(seedInline(c.kernel)),
          softirqDefer: rule,
          sweep,
          workload: {
            ...wl,
            ringBytes,
            nic: nicOptions(group.nic),
            instances: group.pairs,
            appCpus: node0,
            nicIrqCpus: driverVectors(group.nic, c.cpus),
          },
        },
      });
  return runs;
}

/** A point of the grid: part 2's point, its rule, and the ksoftirqd rule's counters. */
export interface MachinePoint extends NetPoint {
  rule: boolean;
  /** Per second, workqueue then the baseline (inline_trylock on 5.15): __do_softirq restarts cut by need_resched. */
  cut: [number, number];
  /** Per second, workqueue then the baseline: NET_RX left to a runnable ksoftirqd (the 5.15 rule). */
  left: [number, number];
  /** How long NET_RX waited for ksoftirqd once left to it, workqueue: p50 and p99 (ns). */
  wait: [number, number];
  /** Share of the CPU threads' runnable time spent waiting for a host core (both strategies). */
  hostWait: number;
}

const rate = (s: StrategyResult | undefined, k: string) => s?.rates[k] ?? Number.NaN;

/** The grid's point for sub-run `r` at point `p`. Pure. */
export function machinePoint(run: MachineRun, r: RunResults, p: RunResults['points'][number]): MachinePoint {
  const g = run.group;
  const wl = run.config.workload.kind === 'tcp_lat' ? run.config.workload : tcpLatOptions();
  const trigger = Number(p.params.trigger ?? run.config.fastPool.trigger);
  const netGroup: NetGroup = {
    nic: g.nic,
    instances: g.pairs,
    trigger,
    msgSizes: [wl.msgSize],
    observation: observationOf(g),
  };
  const wq = strategy(p, 'workqueue');
  const inl = strategy(p, r.baseline);
  let wait = 0;
  let ran = 0;
  for (const s of p.strategies) {
    wait += s.counters.host_thread_wait_ns ?? 0;
    ran += s.counters.host_thread_run_ns ?? 0;
  }
  return {
    ...netPoint(netGroup, r, p, run.config.cpus),
    rule: run.rule,
    cut: [rate(wq, 'softirq_restarts_cut_resched'), rate(inl, 'softirq_restarts_cut_resched')],
    left: [rate(wq, 'net_rx_left_to_ksoftirqd'), rate(inl, 'net_rx_left_to_ksoftirqd')],
    wait: [stageValue(wq, 'net_rx_ksoftirqd_wait', 'p50'), stageValue(wq, 'net_rx_ksoftirqd_wait', 'p99')],
    hostWait: wait + ran > 0 ? wait / (wait + ran) : Number.NaN,
  };
}

/** The seed's observation a group bears on: IPoIB with one pair, ixgbe, or 8 pairs. */
export function observationOf(g: MachineGroup): Observation {
  return g.pairs > 1 ? 'instances' : g.nic === 'ixgbe' ? 'ixgbe' : 'ipoib';
}

/** The table, one row per point: the conditions, the rule's counters, what workqueue cost. */
export function machineTable(points: readonly MachinePoint[], base = 'inline'): string[] {
  const row = (p: MachinePoint) => {
    return [
      p.group.nic.padEnd(8),
      String(p.group.instances).padStart(5),
      String(p.group.trigger).padStart(7),
      formatSize(p.size).padStart(8),
      (p.rule ? 'on' : 'off').padStart(8),
      fmtNum(p.handoffs).padStart(11),
      pct(p.busyShare).padStart(8),
      `${fmtNum(p.cut[0])}, ${fmtNum(p.cut[1])}`.padStart(13),
      `${fmtNum(p.left[0])}, ${fmtNum(p.left[1])}`.padStart(13),
      `${dur(p.wait[0])}, ${dur(p.wait[1])}`.padStart(20),
      pct(p.hostWait).padStart(9),
      deltaText(p.mean),
    ].join('  ');
  };
  return [
    '',
    `workqueue against ${base} on seed 000's machine; cut/s: __do_softirq restarts cut by need_resched, left/s: NET_RX left to a runnable ksoftirqd (each "workqueue, ${base}", per second); NET_RX wait: from being left to ksoftirqd until it ran (workqueue p50, p99); host wait: CPU threads runnable but waiting for a host core`,
    `NIC       pairs  trigger  msg_size  ksoftirqd  hand-offs/s  app busy          cut/s         left/s        NET_RX wait p50, p99  host wait  Δ mean [95% CI] (workqueue − ${base})`,
    ...points.map(row),
  ];
}

/**
 * What the ablation says about Tejun's theory: does the ksoftirqd rule make the difference the
 * seed saw (IPoIB minus ixgbe; 1 pair minus 8)? Per matched point, (difference with the rule on)
 * − (difference with it off), pooled: the theory claims it is > 0.
 */
export function ablationVerdicts(points: readonly MachinePoint[]): Verdict[] {
  const on = points.filter((p) => p.rule);
  const off = points.filter((p) => !p.rule);
  // Each point's effect as the per-observation verdicts make it: boots joined with the
  // between-boot variance of its own observation's points (not of the whole half, whose 8-pair
  // points the host's sharing makes noisier), so the contrast is those verdicts' difference.
  const effectsOf = (ps: readonly MachinePoint[]) => {
    const out: Estimate[] = ps.map(() => ({ est: Number.NaN, se: Number.NaN }));
    for (const o of ['ipoib', 'ixgbe', 'instances'] as const) {
      const at = ps.flatMap((p, i) => (p.group.observation === o ? [i] : []));
      const e = pooledEffect(at.map((i) => ps[i].units)).points;
      at.forEach((i, k) => {
        out[i] = e[k];
      });
    }
    return out;
  };
  const eOn = effectsOf(on);
  const eOff = effectsOf(off);
  const key = (p: MachinePoint) => `${p.group.nic}|${p.group.instances}|${p.group.trigger}|${p.size}`;
  const at = (ps: readonly MachinePoint[], k: string) => ps.findIndex((p) => key(p) === k);
  const contrasts: [string, (p: MachinePoint) => string | undefined][] = [
    [
      "Tejun's theory: the 5.15 ksoftirqd rule is what makes IPoIB regress more than ixgbe (IPoIB minus ixgbe, rule on minus rule off)",
      (p) =>
        p.group.nic === 'ixgbe' && p.group.instances === 1 ? `ipoib-cm|1|${p.group.trigger}|${p.size}` : undefined,
    ],
    [
      "Tejun's theory: the 5.15 ksoftirqd rule is what makes one qperf pair regress more than 8 (1 pair minus 8, rule on minus rule off)",
      (p) => (p.group.instances > 1 ? `${p.group.nic}|1|${p.group.trigger}|${p.size}` : undefined),
    ],
  ];
  const verdicts: Verdict[] = [];
  for (const [text, partnerOf] of contrasts) {
    const pairs: [Estimate, Estimate][] = [];
    const matched: string[] = [];
    for (const [i, p] of on.entries()) {
      const partner = partnerOf(p);
      if (!partner) continue;
      const j = at(on, partner);
      const i2 = at(off, key(p));
      const j2 = at(off, partner);
      if (j < 0 || i2 < 0 || j2 < 0) continue;
      const dOn = { est: eOn[j].est - eOn[i].est, se: Math.hypot(eOn[j].se, eOn[i].se) };
      const dOff = { est: eOff[j2].est - eOff[i2].est, se: Math.hypot(eOff[j2].se, eOff[i2].se) };
      pairs.push([dOn, dOff]);
      matched.push(pointLabel(p));
    }
    verdicts.push(
      matchedDifferenceVerdict(
        text,
        pairs,
        matched,
        SEED_EFFECT,
        'Tejun: "waking up a kthread over and over again ... competing with softirqd which is handling net rx"',
        'more trials decide: try --trials 6 or a longer --max-time',
        'no matched points with the rule on and off',
      ),
    );
  }
  return verdicts;
}

export async function runSeedMachine(ctx: ScenarioContext, grid: MachineGrid = SEED_GRID): Promise<number> {
  const plan = seedMachinePlan(ctx.config, grid);
  const runs: RunResults[] = [];
  const names: string[] = [];
  const points: MachinePoint[] = [];
  for (const run of plan) {
    if (ctx.signal.aborted) break;
    names.push(run.name);
    const r = await subRun(ctx, run.name, run.config);
    runs.push(r);
    for (const p of r.points) points.push(machinePoint(run, r, p));
    if (r.status !== 'completed') break;
  }
  ctx.io.stdout(`${machineTable(points, seedInline(ctx.config.kernel)).join('\n')}\n`);
  const suffix = (rule: boolean) =>
    ` (${ctx.config.cpus} CPUs in ${ctx.config.topology.numa.length} nodes, ksoftirqd rule ${rule ? 'on' : 'off'})`;
  const verdicts: Verdict[] = [];
  for (const rule of grid.rules)
    for (const v of observationVerdicts(
      points.filter((p) => p.rule === rule),
      ctx.config.trials,
    ))
      verdicts.push({ ...v, expectation: `${v.expectation}${suffix(rule)}` });
  if (grid.rules.includes(true) && grid.rules.includes(false)) verdicts.push(...ablationVerdicts(points));
  const status = scenarioStatus(runs);
  printVerdicts(ctx.io, verdicts, status);
  printResults(ctx, names);
  return status;
}
