/**
 * `npm run bench:scale` (issue 25, docs/scale.md): every operation on the emulated path, the
 * lab's cost beside a reference, measured side by side in one run; the ratio lab/reference;
 * where the reference comes from. Ends with `kernel-scale spread: S` (max/min of the ratios).
 *
 * Run: npm run bench:scale [-- --quick]
 *
 * The lab's side drives the lab's own code: the copy and checksum functions of src/net/packet.ts,
 * NAPI and the send path through bench/net.ts's perPacket (a real Runtime and Nic on one thread),
 * the input pool's mix (src/random/inputpool.ts), fastMix64, the kernel's softirq, tasklet and
 * timer code on a Runtime entered as CPU 1, and a real machine run (worker threads) for
 * queue_work_on's hand-off, the hard IRQ and the context switches (its calibration).
 * The "before" column runs the copy, checksum and mix as they were before issue 25
 * (bench/scale-before.ts), in the same run.
 *
 * References: bench/c/scale.c (memcpy, csum_partial, BLAKE2s + spinlock, futex wake between two
 * pthreads, the do-nothing loop's interrupt gaps), bench/c/fastmix.c (fast_mix), bench/c/twin.c
 * (same-CPU futex ping-pong), all compiled here with `cc -O2`; without a compiler those rows say
 * so and leave the spread to the rest. Sourced figures are named in the table and in docs/scale.md.
 *
 * Writes the table to $XDG_CACHE_HOME/deferlab/bench-scale.json (default ~/.cache/...), which
 * `--tdf auto` reads. Timing figures, never asserted; the host's load average is printed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, hostname, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { plural } from '../src/text.js';
import { type BenchUsage, benchArgs } from './cli.js';
import { repoRoot, runC as runFastmixC } from './fastmix.js';
import { isMain, median, table } from './lib.js';
import { labCopyCsum, labKernel, labMachine, labMix, labNet } from './scale-lab.js';
import { compileTwin, runTwin } from './twin-lab.js';

/** One row of the table (and of bench-scale.json). */
export interface ScaleOp {
  name: string;
  /** The lab's cost, ns per unit. */
  labNs: number;
  /** The reference's cost, ns per unit; absent when there is none (the row leaves the spread). */
  refNs?: number;
  unit: 'byte' | 'op' | 'packet';
  source: string;
  /** The reference was measured in this run (false: a sourced figure, or none). */
  measured: boolean;
  /** The lab's cost before issue 25's changes, measured in the same run (copy, checksum, mix). */
  beforeNs?: number;
  /**
   * The reference is a proxy the docs show is not the operation on this kind of host (the timer
   * tick: a VM's do-nothing loop's gaps hold VM exits and other guests' work, docs/scale.md): shown
   * with its ratio, left out of the spread, which says so.
   */
  proxy?: boolean;
  /**
   * The lab's cost as a running machine pays it (its stage's p50 in bench:scale's machine run),
   * where the run records the operation: cold where it runs rarely. Absent: the run has no stage
   * for it (the per-byte, per-packet and kernel-loop rows).
   */
  runNs?: number;
}

export interface ScaleFile {
  version: 1;
  date: string;
  node: string;
  host: string;
  ops: ScaleOp[];
}

/** $XDG_CACHE_HOME/deferlab/bench-scale.json, else ~/.cache/deferlab/bench-scale.json. */
export function scaleFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.length > 0 ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'deferlab', 'bench-scale.json');
}

/**
 * The spread over the rows that have a reference: max/min of lab/reference, and how many. A
 * proxy reference counts only with `withProxies`.
 */
export function spread(ops: readonly ScaleOp[], withProxies = false): { s: number; n: number } {
  const r = ops
    .filter((o) => o.refNs !== undefined && o.refNs > 0 && o.labNs > 0 && (withProxies || !o.proxy))
    .map((o) => o.labNs / (o.refNs as number));
  if (r.length === 0) return { s: Number.NaN, n: 0 };
  return { s: Math.max(...r) / Math.min(...r), n: r.length };
}

/** The spread as a run pays: as {@link spread}, each row at its in-run cost where it has one. */
export function runSpread(ops: readonly ScaleOp[]): { s: number; n: number } {
  return spread(ops.map((o) => (o.runNs !== undefined && o.runNs > 0 ? { ...o, labNs: o.runNs } : o)));
}

/** Whether the file at `path` holds a table with at least one measured reference. */
function hasMeasuredRefs(path: string): boolean {
  try {
    const f = JSON.parse(readFileSync(path, 'utf8')) as Partial<ScaleFile>;
    return Array.isArray(f.ops) && f.ops.some((o) => o.measured && typeof o.refNs === 'number');
  } catch {
    return false;
  }
}

// ---- references ------------------------------------------------------------------------------

interface Refs {
  c?: Record<string, number>;
  fastmix64?: number;
  pingpong?: number;
  /** scale.c's binary, kept until the cold rows are done (interleavedCold); its directory. */
  scaleBin?: string;
  dir: string;
  why: string[];
}

/** `key=value` lines (ns) into a record. */
function keyValues(stdout: string): Record<string, number> {
  const v: Record<string, number> = {};
  for (const kv of stdout.trim().split(/\s+/)) {
    const [k, x] = kv.split('=');
    v[k] = Number(x);
  }
  return v;
}

/**
 * The two rows met cold, C's and the lab's, measured round after round (C, then the lab), so
 * that both meet the host in the same state: how cold 3 ms of sleep leaves a thread's caches
 * and predictors depends on what else the host (and its hypervisor) ran in them, which changes
 * from one minute to the next (C's cold mix read 80–681 ns in runs minutes apart). Each side's
 * figure is the median of its rounds' medians; `spread` says how far the rounds ranged.
 */
function interleavedCold(
  refs: Refs,
  lab: () => { mixCold: number; clockCold: number },
  rounds: number,
): { c?: { mix: number; clock: number }; lab: { mix: number; clock: number }; spread: string } {
  const cm: number[] = [];
  const cc: number[] = [];
  const lm: number[] = [];
  const lc: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (refs.scaleBin) {
      const run = spawnSync(refs.scaleBin, ['cold'], { encoding: 'utf8', timeout: 60_000 });
      if (run.status === 0) {
        const v = keyValues(String(run.stdout));
        cm.push(v.blake2s_mix_cold);
        cc.push(v.clock_pair_cold);
      }
    }
    const l = lab();
    lm.push(l.mixCold);
    lc.push(l.clockCold);
  }
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
  return {
    ...(cm.length ? { c: { mix: median(cm), clock: median(cc) } } : {}),
    lab: { mix: median(lm), clock: median(lc) },
    spread:
      `${rounds} interleaved rounds; their medians ranged: lab mix ${range(lm)} ns, clock pair ${range(lc)} ns` +
      (cm.length ? `; C mix ${range(cm)} ns, clock pair ${range(cc)} ns` : ''),
  };
}

/** Build and run the C references; every one missing says why in `why`. */
function references(): Refs {
  const dir = mkdtempSync(join(tmpdir(), 'deferlab-scale-'));
  const out: Refs = { why: [], dir };
  try {
    const twin = compileTwin(dir);
    if (twin.bin) {
      const pp = runTwin(twin.bin, ['pingpong', 20000]);
      if ('values' in pp) out.pingpong = pp.values.p50;
      else out.why.push(`twin pingpong: ${pp.none}`);
      // scale.c is built the way twin.c is (cc -O2 -pthread), next to it.
      const src = join(repoRoot(), 'bench', 'c', 'scale.c');
      const bin = join(dir, 'scale');
      const cc = spawnSync('cc', ['-O2', '-pthread', '-o', bin, src], { encoding: 'utf8' });
      if (cc.status !== 0) out.why.push(`cc failed on ${src}: ${String(cc.stderr).trim().split('\n')[0]}`);
      else {
        const r = spawnSync(bin, [], { encoding: 'utf8', timeout: 120_000 });
        if (r.status !== 0) out.why.push(`scale: ${String(r.stderr).trim().split('\n')[0] || `exit ${r.status}`}`);
        else {
          out.c = keyValues(String(r.stdout));
          out.scaleBin = bin;
        }
      }
    } else out.why.push(twin.why ?? 'no C compiler');
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const fm = runFastmixC();
  if (typeof fm === 'string') out.why.push(fm);
  else out.fastmix64 = fm.fastmix64;
  return out;
}

// ---- the table -------------------------------------------------------------------------------

/** Sourced per-packet figure (docs/scale.md): Linux's receive path up to the IP layer's first
 *  netfilter hook, one core, 64-byte packets: 4.8 Mpps (Høiland-Jørgensen et al., "The eXpress
 *  Data Path", CoNEXT 2018, §4.1, Linux "raw table drop"), i.e. ~208 ns/packet. A lower bound for
 *  a TCP segment's NAPI receive (TCP's receive and the socket's wake come on top). */
const KERNEL_RX_PACKET_NS = 1e9 / 4.8e6;
const XDP_SOURCE = 'Høiland-Jørgensen et al., XDP, CoNEXT 2018 §4.1: Linux raw-table drop 4.8 Mpps/core';

function fmt(ns: number | undefined, unit: string): string {
  if (ns === undefined || !Number.isFinite(ns)) return 'n/a';
  if (unit === 'byte') return ns.toFixed(3);
  return ns >= 100 ? ns.toFixed(0) : ns.toFixed(1);
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const quick = argv.includes('--quick');
  const reps = quick ? 5 : 15;
  const l0 = loadavg()[0];
  console.log(`scale bench: Node ${process.version}; host load average ${l0.toFixed(2)} (1 min) at start`);
  const cc = references();
  const net = labNet(quick ? 6 : 20);
  const cs = labCopyCsum(reps);
  const mx = labMix(reps);
  // The cold rows again, interleaved with C's (the figures above, each measured once, are replaced).
  const cold = interleavedCold(cc, mx.cold, quick ? 3 : 5);
  rmSync(cc.dir, { recursive: true, force: true });
  mx.mixCold = cold.lab.mix;
  mx.clockCold = cold.lab.clock;
  if (cc.c && cold.c) {
    cc.c.blake2s_mix_cold = cold.c.mix;
    cc.c.clock_pair_cold = cold.c.clock;
  }
  const kn = labKernel(reps);
  const mc = await labMachine(quick);
  const c = cc.c ?? {};
  const ops: ScaleOp[] = [];
  const add = (o: ScaleOp) => ops.push(o);
  const cSrc = (what: string) => (cc.c ? `C here: ${what} (bench/c/scale.c)` : 'none: C reference skipped (above)');
  for (const why of cc.why) console.log(`C reference skipped: ${why.replace(/^C reference skipped: /, '')}`);
  add({
    name: 'copy (recv copy_to_user)',
    labNs: cs.copy,
    beforeNs: cs.copyBefore,
    refNs: c.memcpy_byte,
    unit: 'byte',
    source: cSrc('memcpy 64 KiB'),
    measured: !!cc.c,
  });
  add({
    name: 'checksum (csum_partial, wasm SIMD)',
    labNs: cs.csum,
    beforeNs: cs.csumBefore,
    refNs: c.csum_byte,
    unit: 'byte',
    source: cSrc('csum_partial, arch/x86/lib/csum-partial_64.c'),
    measured: !!cc.c,
  });
  add({
    name: 'NAPI receive, ixgbe (csum offloaded)',
    labNs: net.ixNapi,
    refNs: KERNEL_RX_PACKET_NS,
    unit: 'packet',
    source: XDP_SOURCE,
    measured: false,
  });
  add({
    name: 'NAPI receive, ipoib-cm 64 KiB (software csum)',
    labNs: net.cmNapi,
    refNs: c.csum_byte ? KERNEL_RX_PACKET_NS + c.csum_byte * 65520 : undefined,
    unit: 'packet',
    source: `${XDP_SOURCE} + 65520 B x C csum_partial here`,
    measured: false,
  });
  add({
    name: 'send, ixgbe (header, payload, seal, post)',
    labNs: net.ixSend,
    unit: 'packet',
    source: 'none: no sourced per-segment tcp_sendmsg figure yet (docs/scale.md)',
    measured: false,
  });
  add({
    name: 'send, ipoib-cm 64 KiB (payload + csum)',
    labNs: net.cmSend,
    unit: 'packet',
    source: 'none (docs/scale.md)',
    measured: false,
  });
  add({
    name: 'mix (BLAKE2s 16 B under input_pool.lock)',
    labNs: mx.mix,
    beforeNs: mx.mixBefore,
    refNs: c.blake2s_mix,
    unit: 'op',
    source: cSrc('blake2s_update + test-and-set lock'),
    measured: !!cc.c,
  });
  add({
    name: 'the mix after a 3 ms sleep (as a kworker meets it)',
    labNs: mx.mixCold,
    runNs: mc.mixRun,
    refNs: c.blake2s_mix_cold,
    unit: 'op',
    source: cSrc('the same after a 3 ms FUTEX_WAIT, median of 200'),
    measured: !!cc.c,
  });
  add({
    name: 'fast_mix (64-bit)',
    labNs: mx.fastMix,
    refNs: cc.fastmix64,
    unit: 'op',
    source: cc.fastmix64 ? 'C here: bench/c/fastmix.c' : 'none: C reference skipped (above)',
    measured: cc.fastmix64 !== undefined,
  });
  add({
    name: 'queue_work_on + wakeup (handoff_call p50)',
    labNs: mc.queueWork ?? Number.NaN,
    runNs: mc.queueWork,
    refNs: c.futex_wake_call,
    unit: 'op',
    source: cSrc('FUTEX_WAKE call time, sleeper on the other CPU'),
    measured: !!cc.c,
  });
  // With --switch-cost (the default, a model: src/harness/switch-cost.ts) the lab's switch is
  // charged at this host's kernel switch; "before" is then its own, uncharged.
  add({
    name:
      mc.sameSwitchCharged !== undefined
        ? 'context switch, same thread (charged: model)'
        : 'context switch, same thread',
    labNs: mc.sameSwitchCharged ?? mc.sameSwitch ?? Number.NaN,
    ...(mc.sameSwitchCharged !== undefined && mc.sameSwitch !== undefined ? { beforeNs: mc.sameSwitch } : {}),
    runNs: mc.switchRun,
    refNs: cc.pingpong,
    unit: 'op',
    source: cc.pingpong
      ? 'C here: futex ping-pong, both on CPU 0 (bench/c/twin.c pingpong)'
      : 'none: C reference skipped (above)',
    measured: cc.pingpong !== undefined,
  });
  add({
    name: 'context switch, cross thread (hand-off p50)',
    labNs: mc.crossSwitch ?? Number.NaN,
    refNs: c.futex_oneway,
    unit: 'op',
    source: cSrc('futex ping-pong one-way, CPU 0 <-> CPU 1'),
    measured: !!cc.c,
  });
  add({
    name: 'hard IRQ, no hand-off (hardirq p50)',
    labNs: mc.hardirq ?? Number.NaN,
    runNs: mc.hardirq,
    refNs: c.irq_gap,
    unit: 'op',
    source: cSrc("do-nothing loop's shortest interrupt gaps (p10), Tsafrir ExpCS 2007"),
    measured: !!cc.c,
  });
  add({
    name: 'softirq pass (empty TASKLET vector)',
    labNs: kn.softirq,
    unit: 'op',
    source: 'none: kernel-only, no sourced figure yet (docs/scale.md)',
    measured: false,
  });
  add({
    name: 'timer tick (update_process_times)',
    labNs: kn.tick,
    refNs: c.tick_gap,
    unit: 'op',
    source: cSrc(
      "proxy, not in the spread: do-nothing loop's median interrupt gap; on a VM not the tick (docs/scale.md)",
    ),
    measured: !!cc.c,
    proxy: true,
  });
  add({
    name: 'tasklet schedule + run (empty)',
    labNs: kn.tasklet,
    unit: 'op',
    source: 'none: kernel-only, no sourced figure yet (docs/scale.md)',
    measured: false,
  });

  const rows = ops.map((o) => [
    o.name,
    o.unit,
    fmt(o.beforeNs, o.unit),
    fmt(o.labNs, o.unit),
    fmt(o.refNs, o.unit),
    o.refNs ? `${(o.labNs / o.refNs).toFixed(2)}x` : '-',
    fmt(o.runNs, o.unit),
    o.refNs && o.runNs ? `${(o.runNs / o.refNs).toFixed(2)}x` : '-',
    o.source,
  ]);
  console.log(
    '\nns per unit; "before": the lab before issue 25 (the switch: its own, without the --switch-cost model), same run; ratio = lab / reference; "in a run": the p50 of the operation\'s stage in this bench\'s machine run (workqueue), as a running machine pays it',
  );
  for (const line of table(
    ['operation', 'unit', 'before', 'lab', 'reference', 'ratio', 'in a run', 'run ratio', 'reference source'],
    rows,
  ))
    console.log(line);
  if (c.gaps_per_s !== undefined) console.log(`  (interrupt gaps seen by the do-nothing loop: ${c.gaps_per_s}/s)`);
  console.log(
    `  checksum in JavaScript (csumWords, the fallback where WebAssembly SIMD is missing): ${cs.csumJs.toFixed(3)} ns/B${c.csum_byte ? ` = ${(cs.csumJs / c.csum_byte).toFixed(2)}x C` : ''}`,
  );
  console.log(`  the rows met cold: ${cold.spread}`);
  if (c.clock_pair_cold !== undefined) {
    // Not a row: the instrument, not an operation of the emulated kernel. It is the floor under
    // every timed step a run meets cold (the `work` stage's mix included), and under the cold row.
    const net = (mx.mixCold - mx.clockCold) / (c.blake2s_mix_cold - c.clock_pair_cold);
    console.log(
      `  two clock reads after a 3 ms sleep (the floor under the cold mix row and every stage met cold): lab ${fmt(mx.clockCold, 'op')} ns, C ${fmt(c.clock_pair_cold, 'op')} ns = ${(mx.clockCold / c.clock_pair_cold).toFixed(2)}x; the cold mix net of each side's floor: lab ${fmt(mx.mixCold - mx.clockCold, 'op')} ns, C ${fmt(c.blake2s_mix_cold - c.clock_pair_cold, 'op')} ns = ${net.toFixed(2)}x`,
    );
  }
  const sp = spread(ops);
  console.log(`host load average ${l0.toFixed(2)} → ${loadavg()[0].toFixed(2)} (1 min)`);
  const file: ScaleFile = { version: 1, date: new Date().toISOString(), node: process.version, host: hostname(), ops };
  const path = scaleFilePath();
  // A run without the C references does not replace a file that has them: --tdf auto needs them.
  const keep = !cc.c && hasMeasuredRefs(path);
  if (keep) console.log(`not written: ${path} (this run has no C references; the file's are kept)`);
  else
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
      console.log(`written: ${path}`);
    } catch (e) {
      console.log(`not written: ${path}: ${(e as Error).message}`);
    }
  const rs = runSpread(ops);
  console.log(
    `as a run pays (the in-run cost where the run has one): spread ${rs.s.toFixed(1)} over ${rs.n} operations`,
  );
  const proxies = ops.filter((o) => o.proxy && o.refNs).length;
  const all = spread(ops, true);
  console.log(
    `kernel-scale spread: ${sp.s.toFixed(1)} (max/min of lab/reference ratios over ${sp.n} operations` +
      (proxies
        ? `; with the ${plural(proxies, 'proxy reference')} (the tick's) as well: ${all.s.toFixed(1)} over ${all.n})`
        : ')'),
  );
}

export const USAGE: BenchUsage = {
  script: 'bench:scale',
  about:
    "Every operation on the emulated path (copy, checksum, NAPI receive, send, the mix, fast_mix, queue_work_on, switches, the hard IRQ, softirq, tick, tasklet), the lab's cost beside a C or kernel reference measured in the same run (or sourced), their ratio, and the kernel-scale spread; writes the references to ~/.cache/deferlab/bench-scale.json for --tdf auto. About 1 minute; needs a C compiler for the measured references (without one, the sourced ones are used).",
  flags: [{ flag: '--quick', help: 'fewer repetitions and shorter runs' }],
};

if (isMain(import.meta.url)) await main(benchArgs(USAGE));
