/**
 * Soak: a long mixed run in ONE process. By default one machine for the whole time (the bar
 * applies to that: a user's run boots one machine per sweep point); with --reboots, rounds of
 * runExperiment, each on a freshly booted machine: every built-in strategy, tcp_lat with background interrupts (the
 * pattern rotates constant → poisson → bursts), a few interleaved trials each, no output
 * directory, until the time is up. It shows whether anything leaks across runs (threads,
 * shared memory, histograms, listeners) and whether the books balance round after round.
 *
 *   npm run build && node dist/bench/soak.js [--minutes N] [--reboots]     (default 10 minutes)
 *   node dist/bench/soak.js --sweep [--points N]               (a sweep: one machine per point)
 *   node --expose-gc dist/bench/soak.js ...                    (collects garbage before each reading: steadier)
 *
 * With --sweep: ONE runExperiment over a msg_size sweep of N points (default 9: 4K..1M doubling,
 * the full random-regression sweep; more points fill in between, geometrically), with random-regression's six
 * strategies, so the harness boots and stops one machine per point exactly as a scenario's
 * sweep does. RSS is read after the first point (its machine stopped, its threads joined) and
 * after the last; the bar is the same 10%. Each row also shows what RSS is made of: the main
 * isolate's heap and ArrayBuffers (the machines' SharedArrayBuffers among them), the resident
 * anonymous memory and the part of it in glibc's secondary malloc arenas (anonymous 64 MiB-aligned
 * mappings in /proc/self/smaps), and the process's thread count: they tell memory a terminated
 * thread's allocator arena kept from a leak (a machine, its threads or its buffer still held).
 *
 * Per round: status (and the error of a failed one), wall time, RSS and heap used after the
 * round, the conservation counters summed over every measured trial of every strategy
 * (hand-offs vs mixes, works queued vs works run, interrupts dropped) and their drift (the
 * difference; the run itself fails if work is lost at a drain, so a small difference here is
 * only hand-offs at a trial's edge whose mix ran after the measured window), and the median of
 * the strategies' one-way p50 (µs) with its drift from the first round.
 *
 * The bar: RSS at the end at most 10% above RSS after the first round (the first round pays
 * for code loading and V8's compilation). Figures are printed, nothing is asserted.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { PartialConfig } from '../src/config/input.js';
import { resolveConfig } from '../src/config/schema.js';
import { reexecWithFixedThreshold } from '../src/harness/malloc.js';
import { runExperiment } from '../src/harness/run.js';
import type { ThreadHeap } from '../src/machine/protocol.js';
import type { RunResults } from '../src/report/types.js';

/** RSS growth allowed from after the first round to the end. */
export const RSS_GROWTH_BAR = 0.1;
const DEFAULT_MINUTES = 10;
const PATTERNS = ['constant', 'poisson', 'bursts'] as const;

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

type Heaps = { thread: string; heap: ThreadHeap }[];

function sumHeaps(heaps: Heaps): ThreadHeap {
  const sum: ThreadHeap = { used: 0, total: 0, external: 0, malloced: 0, code: 0 };
  for (const { heap } of heaps) for (const k of Object.keys(sum) as (keyof ThreadHeap)[]) sum[k] += heap[k];
  return sum;
}

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

function memory(): Memory {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
}

const USAGE = 'usage: soak.js [--minutes N] [--reboots] | soak.js --sweep [--points N]';
/** Points of the sweep mode by default: random-regression's full msg_size sweep (4K..1M, doubling). */
const SWEEP_POINTS = 9;
/** random-regression's strategies (its main comparison). */
const SWEEP_STRATEGIES = ['inline', 'workqueue', 'workqueue:wq=system', 'tasklet', 'timer', 'timer:deferrable=true'];

export interface SoakArgs {
  minutes: number;
  reboots: boolean;
  /** Points of the sweep mode; undefined without --sweep. */
  sweep?: number;
  help?: boolean;
}

/** `--minutes N` (a positive number), `--reboots`, `--sweep [--points N]`; anything else is an error. */
export function parseArgs(argv: readonly string[]): SoakArgs {
  let minutes = DEFAULT_MINUTES;
  let reboots = false;
  let sweep = false;
  let points = SWEEP_POINTS;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') return { minutes, reboots, help: true };
    if (a === '--reboots' || a === '--sweep') {
      if (a === '--reboots') reboots = true;
      else sweep = true;
      continue;
    }
    const flag = a.startsWith('--points') ? '--points' : '--minutes';
    const value = a === flag ? argv[++i] : a.startsWith(`${flag}=`) ? a.slice(flag.length + 1) : undefined;
    if (value === undefined) throw new Error(`soak: unknown argument ${JSON.stringify(a)}; ${USAGE}`);
    const n = Number(value);
    if (flag === '--points') {
      if (!Number.isInteger(n) || n < 2 || n > 100)
        throw new Error(`soak: --points must be an integer from 2 to 100 (got ${JSON.stringify(value)})`);
      points = n;
      continue;
    }
    if (!Number.isFinite(n) || n <= 0)
      throw new Error(`soak: --minutes must be a positive number (got ${JSON.stringify(value)})`);
    minutes = n;
  }
  if (sweep && reboots) throw new Error(`soak: --sweep and --reboots are different modes; ${USAGE}`);
  return { minutes, reboots, ...(sweep ? { sweep: points } : {}) };
}

/**
 * The soak the bar applies to: ONE machine for the whole time, as a user's run has (one boot
 * per sweep point). Every built-in strategy, interleaved, tcp_lat with Poisson background
 * interrupts, trial after trial until the time is up; memory is read at every trial.
 */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const { minutes, reboots, sweep, help } = parseArgs(argv);
  if (help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (sweep !== undefined) {
    await mainSweep(sweep);
    return;
  }
  if (reboots) {
    await mainReboots(minutes);
    return;
  }
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const start = memory();
  const t0 = Date.now();
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), minutes * 60_000);
  const config = resolveConfig({
    flags: {
      workload: { kind: 'tcp_lat' },
      irq: { rate: '20k', pattern: 'poisson' },
      trials: 1000,
      trialMs: '300ms',
      warmupMs: '100ms',
      seed: 1,
      outDir: null,
    },
    cwd: process.cwd(),
  });
  const nStrategies = config.strategies.length;
  say(
    `soak: one machine for ${minutes} min (Node ${process.version}): ${nStrategies} strategies interleaved, tcp_lat, 20k Poisson irq/s per CPU, trials of 300 ms`,
  );
  say(`start: RSS ${mib(start.rss)}, heap used ${mib(start.heapUsed)}`);
  const samples: { trial: number; t: number; mem: Memory }[] = [];
  let threadHeaps = sumHeaps([]);
  /** Each thread's heap after the first round, and at the last trial. */
  let firstRound: Heaps = [];
  let lastTrial: Heaps = [];
  let measured = 0;
  let trial = 0;
  const results = await runExperiment(config, {
    signal: ac.signal,
    trialDone: (info) => {
      threadHeaps = sumHeaps(info.threadHeaps);
      lastTrial = info.threadHeaps;
      if (++measured === nStrategies) firstRound = info.threadHeaps;
    },
    progress: (line) => {
      if (!line.startsWith('trial ')) return;
      trial++;
      const mem = memory();
      samples.push({ trial, t: Date.now() - t0, mem });
      if (trial % (nStrategies * 10) === 1)
        say(
          `  trial ${String(trial).padStart(5)} at ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s: RSS ${mib(mem.rss)}, main heap used ${mib(mem.heapUsed)}; machine threads: heap used ${mib(threadHeaps.used)}, total ${mib(threadHeaps.total)}, code ${mib(threadHeaps.code)}, external ${mib(threadHeaps.external)}, malloced ${mib(threadHeaps.malloced)}`,
        );
    },
  });
  clearTimeout(timer);
  // The last reading taken while the machine ran: after the run its threads are gone, and
  // their memory with them, so a reading now would flatter the figure.
  const end = samples.length ? samples[samples.length - 1].mem : memory();
  const after = memory();
  const atTwoMin = samples.find((x) => x.t >= 120_000)?.mem;
  const afterRound1 = samples[Math.min(nStrategies, samples.length - 1)]?.mem ?? end;
  const growth = end.rss / afterRound1.rss - 1;
  const f = figuresOf(results);
  say(
    `status: ${results.status}${results.error ? ` (${results.error.message})` : ''}; ${f.trials} trials in ${((Date.now() - t0) / 60_000).toFixed(1)} min`,
  );
  say(
    `RSS: start ${mib(start.rss)}, after the first round of ${nStrategies} trials ${mib(afterRound1.rss)}, end ${mib(end.rss)}: ${pct(growth)} (bar: at most ${pct(RSS_GROWTH_BAR)}) -> ${growth <= RSS_GROWTH_BAR ? 'within the bar' : 'ABOVE THE BAR'}`,
  );
  if (atTwoMin) say(`RSS from minute 2 (${mib(atTwoMin.rss)}) to the end: ${pct(end.rss / atTwoMin.rss - 1)}`);
  say(
    `heap used: after round 1 ${mib(afterRound1.heapUsed)}, end ${mib(end.heapUsed)}; RSS after the machine stopped: ${mib(after.rss)}`,
  );
  say(
    `counters over all measured trials: handoffs ${f.handoffs}, mixes ${f.mixes} (drift ${f.handoffs - f.mixes}, trial-edge only: every drain checks the books); works queued ${f.worksQueued}, run ${f.worksRun} (drift ${f.worksQueued - f.worksRun}); irqs_dropped ${f.irqsDropped}`,
  );
  if (firstRound.length && lastTrial.length) {
    say(`machine threads' V8 memory, MiB, after round 1 → last trial (total: committed to the heap's spaces, code`);
    say(`included; external: ArrayBuffers V8 was told of; malloced: V8's own malloc, compiler zones):`);
    const rows = [...firstRound.map((x) => x.thread), 'all threads'];
    for (const name of rows) {
      const a = name === 'all threads' ? sumHeaps(firstRound) : firstRound.find((x) => x.thread === name)?.heap;
      const b = name === 'all threads' ? sumHeaps(lastTrial) : lastTrial.find((x) => x.thread === name)?.heap;
      if (!a || !b) continue;
      const col = (k: keyof ThreadHeap) => `${k} ${(a[k] / MiB).toFixed(1)} → ${(b[k] / MiB).toFixed(1)}`.padEnd(24);
      say(`  ${name.padEnd(14)} ${col('used')} ${col('total')} ${col('code')} ${col('external')} ${col('malloced')}`);
    }
  }
  const per = results.points[0]?.strategies ?? [];
  const first = per.map((s) => s.trials[0]?.stages.one_way?.p50 ?? Number.NaN);
  const last = per.map((s) => s.trials[s.trials.length - 1]?.stages.one_way?.p50 ?? Number.NaN);
  say(
    `one-way p50 of each strategy, first trial → last: ${per.map((s, i) => `${s.label} ${(first[i] / 1000).toFixed(1)}→${(last[i] / 1000).toFixed(1)} µs`).join(', ')}`,
  );
}

export interface RoundFigures {
  round: number;
  pattern: string;
  status: RunResults['status'];
  error?: string;
  seconds: number;
  mem: Memory;
  trials: number;
  handoffs: number;
  mixes: number;
  worksQueued: number;
  worksRun: number;
  irqsDropped: number;
  /** Median over strategies of the one-way p50, µs (NaN if none measured). */
  oneWayP50Us: number;
}

/** Sum the conservation counters over every measured trial of every strategy. */
export function figuresOf(results: RunResults): Omit<RoundFigures, 'round' | 'pattern' | 'seconds' | 'mem'> {
  let trials = 0;
  const sum = { handoffs: 0, mixes: 0, works_queued: 0, works_run: 0, irqs_dropped: 0 };
  const p50s: number[] = [];
  for (const point of results.points) {
    for (const s of point.strategies) {
      for (const t of s.trials) {
        trials++;
        for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += t.counters[k] ?? 0;
      }
      const p50 = s.merged.one_way?.summary.p50;
      if (p50 !== undefined && Number.isFinite(p50)) p50s.push(p50 / 1000);
    }
  }
  p50s.sort((a, b) => a - b);
  return {
    status: results.status,
    ...(results.error ? { error: results.error.message } : {}),
    trials,
    handoffs: sum.handoffs,
    mixes: sum.mixes,
    worksQueued: sum.works_queued,
    worksRun: sum.works_run,
    irqsDropped: sum.irqs_dropped,
    oneWayP50Us: p50s.length ? p50s[Math.floor(p50s.length / 2)] : Number.NaN,
  };
}

function configFor(round: number) {
  const flags: PartialConfig = {
    // strategies: not given, so every built-in (DEFAULT_STRATEGY_SPECS).
    workload: { kind: 'tcp_lat' },
    irq: { rate: '20k', pattern: PATTERNS[round % PATTERNS.length] },
    trials: 2,
    trialMs: '300ms',
    warmupMs: '100ms',
    seed: round + 1,
    outDir: null,
  };
  return resolveConfig({ flags, cwd: process.cwd() });
}

export async function mainReboots(minutes: number): Promise<RoundFigures[]> {
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const gc = typeof (globalThis as { gc?: unknown }).gc === 'function';
  const start = memory();
  const t0 = Date.now();
  const deadline = t0 + minutes * 60_000;
  say(
    `soak: ${minutes} min of runExperiment rounds in one process (Node ${process.version}, pid ${process.pid}${gc ? ', gc before each reading' : ', no --expose-gc: readings include garbage'})`,
  );
  say(
    `each round: every built-in strategy, tcp_lat, 20k background irq/s per CPU, 2 trials × (100 ms warm-up + 300 ms), no output`,
  );
  say(`start: RSS ${mib(start.rss)}, heap used ${mib(start.heapUsed)}, external ${mib(start.external)}`);
  say('');
  say(
    'round  pattern   status      s  trials   RSS MiB  heap MiB  handoffs   mixes  drift  works q/run      drift  irqs_dropped  one-way p50 µs (drift)',
  );

  const rounds: RoundFigures[] = [];
  for (let round = 0; round === 0 || Date.now() < deadline; round++) {
    const config = configFor(round);
    const ts = Date.now();
    let f: Omit<RoundFigures, 'round' | 'pattern' | 'seconds' | 'mem'>;
    try {
      f = figuresOf(await runExperiment(config));
    } catch (e) {
      // runExperiment reports machine faults in its result; anything thrown is a harness bug.
      f = {
        status: 'failed',
        error: `threw: ${e instanceof Error ? e.message : String(e)}`,
        trials: 0,
        handoffs: 0,
        mixes: 0,
        worksQueued: 0,
        worksRun: 0,
        irqsDropped: 0,
        oneWayP50Us: Number.NaN,
      };
    }
    const r: RoundFigures = {
      round,
      pattern: config.irq.pattern,
      seconds: (Date.now() - ts) / 1000,
      mem: memory(),
      ...f,
    };
    rounds.push(r);
    const base = rounds.find((x) => Number.isFinite(x.oneWayP50Us))?.oneWayP50Us ?? Number.NaN;
    const latDrift = Number.isFinite(base) && Number.isFinite(r.oneWayP50Us) ? pct(r.oneWayP50Us / base - 1) : '-';
    say(
      [
        String(round + 1).padStart(5),
        r.pattern.padEnd(8),
        r.status.padEnd(11),
        r.seconds.toFixed(1).padStart(5),
        String(r.trials).padStart(7),
        (r.mem.rss / MiB).toFixed(1).padStart(9),
        (r.mem.heapUsed / MiB).toFixed(1).padStart(9),
        String(r.handoffs).padStart(9),
        String(r.mixes).padStart(7),
        String(r.handoffs - r.mixes).padStart(6),
        `${r.worksQueued}/${r.worksRun}`.padStart(12),
        String(r.worksQueued - r.worksRun).padStart(10),
        String(r.irqsDropped).padStart(13),
        `${Number.isFinite(r.oneWayP50Us) ? r.oneWayP50Us.toFixed(2) : '-'} (${latDrift})`.padStart(24),
      ].join('  '),
    );
    if (r.error) say(`       error: ${r.error}`);
  }

  const end = memory();
  const first = rounds[0].mem;
  const growth = end.rss / first.rss - 1;
  const failed = rounds.filter((r) => r.status !== 'completed');
  say('');
  say(
    `rounds: ${rounds.length} in ${((Date.now() - t0) / 60_000).toFixed(1)} min; completed ${rounds.length - failed.length}, not completed ${failed.length}`,
  );
  say(
    `RSS: start ${mib(start.rss)}, after round 1 ${mib(first.rss)}, end ${mib(end.rss)}: ${pct(growth)} since round 1 (bar: at most ${pct(RSS_GROWTH_BAR)}) -> ${growth <= RSS_GROWTH_BAR ? 'within the bar' : 'ABOVE THE BAR'}`,
  );
  say(
    `heap used: start ${mib(start.heapUsed)}, after round 1 ${mib(first.heapUsed)}, end ${mib(end.heapUsed)} (${pct(end.heapUsed / first.heapUsed - 1)}); external: ${mib(first.external)} -> ${mib(end.external)}`,
  );
  const tot = rounds.reduce(
    (a, r) => ({
      h: a.h + r.handoffs,
      m: a.m + r.mixes,
      q: a.q + r.worksQueued,
      w: a.w + r.worksRun,
      d: a.d + r.irqsDropped,
    }),
    { h: 0, m: 0, q: 0, w: 0, d: 0 },
  );
  say(
    `over all measured trials: handoffs ${tot.h}, mixes ${tot.m} (drift ${tot.h - tot.m}); works queued ${tot.q}, run ${tot.w} (drift ${tot.q - tot.w}); irqs_dropped ${tot.d}`,
  );
  for (const r of failed) say(`round ${r.round + 1} ${r.status}: ${r.error ?? '(no error recorded)'}`);
  return rounds;
}

/** What RSS is made of, from /proc/self (undefined off Linux). */
export interface ProcMemory {
  /** Resident anonymous memory, bytes (RSS less mapped files). */
  anon: number;
  /** The part of it in glibc's main malloc arena (the brk heap, `[heap]`). */
  brk: number;
  /** The part of it in glibc's non-main malloc arenas (anonymous mappings at 64 MiB boundaries). */
  arenas: number;
  /** Freed with MADV_FREE but still counted in RSS until the kernel needs the pages. */
  lazyFree: number;
  threads: number;
}

export function procMemory(): ProcMemory | undefined {
  try {
    let anon = 0;
    let brk = 0;
    let arenas = 0;
    let lazyFree = 0;
    let inArena = false;
    let inBrk = false;
    const kib = (line: string, key: string) => Number(line.slice(key.length).trim().split(' ')[0]) * 1024;
    for (const line of readFileSync('/proc/self/smaps', 'latin1').split('\n')) {
      const m = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
      if (m) {
        // A secondary arena's heap is mmapped aligned to HEAP_MAX_SIZE (64 MiB on 64-bit).
        inArena = m[2] === '0' && m[3] === '' && Number.parseInt(m[1], 16) % (64 * MiB) === 0;
        inBrk = m[3] === '[heap]';
      } else if (line.startsWith('Anonymous:')) {
        anon += kib(line, 'Anonymous:');
      } else if (line.startsWith('LazyFree:')) {
        lazyFree += kib(line, 'LazyFree:');
      } else if (line.startsWith('Rss:')) {
        if (inArena) arenas += kib(line, 'Rss:');
        if (inBrk) brk += kib(line, 'Rss:');
      }
    }
    const threads = Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1]);
    return { anon, brk, arenas, lazyFree, threads };
  } catch {
    return undefined;
  }
}

/**
 * A sweep in one process, as a scenario runs one: runExperiment over `points` msg_size points,
 * one machine booted and stopped per point by the harness. Returns the RSS growth from after the
 * first point to after the last.
 */
export async function mainSweep(points: number): Promise<number> {
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const gc = typeof (globalThis as { gc?: unknown }).gc === 'function';
  // 4K..1M, geometric: 9 points are random-regression's doublings, more fill in between.
  const values = Array.from({ length: points }, (_, i) => 64 * Math.round((4096 * 256 ** (i / (points - 1))) / 64));
  const maxMsg = Math.max(...values);
  const config = resolveConfig({
    flags: {
      strategies: SWEEP_STRATEGIES,
      baseline: 'inline',
      workload: { kind: 'tcp_lat', ringBytes: 2 ** Math.ceil(Math.log2(maxMsg * 4 + 64)) },
      irq: { rate: '20k', pattern: 'poisson' },
      trials: 1,
      trialMs: '200ms',
      warmupMs: '100ms',
      seed: 1,
      outDir: null,
      sweep: { param: 'msg_size', values },
    },
    cwd: process.cwd(),
  });
  say(
    `soak --sweep: one runExperiment, msg_size sweep of ${points} points (one machine per point), ${config.strategies.length} strategies, 1 trial × (100 ms warm-up + 200 ms) each, tcp_lat, 20k Poisson irq/s per CPU (Node ${process.version}${gc ? ', gc before each reading' : ', no --expose-gc: readings include garbage'})`,
  );
  const row = (tag: string) => {
    const m = memory();
    const p = procMemory();
    const ab = process.memoryUsage().arrayBuffers;
    say(
      `  ${tag.padEnd(22)} RSS ${mib(m.rss).padStart(10)}  heap used ${mib(m.heapUsed).padStart(9)}  ArrayBuffers ${mib(ab).padStart(9)}${p ? `  anonymous ${mib(p.anon).padStart(9)}, of it malloc: main arena ${mib(p.brk).padStart(8)}, thread arenas ${mib(p.arenas).padStart(9)}; lazy-free ${mib(p.lazyFree).padStart(8)}  threads ${p.threads}` : ''}`,
    );
    return m;
  };
  row('start');
  const after: Memory[] = [];
  let booted = 0;
  const t0 = Date.now();
  const results = await runExperiment(config, {
    progress: (line) => {
      if (!line.startsWith('booting')) return;
      // The previous point's machine has stopped and its threads have been joined.
      if (booted > 0) after.push(row(`after point ${booted}`));
      booted++;
    },
  });
  after.push(row(`after point ${booted}`));
  const first = after[0];
  const last = after[after.length - 1];
  const growth = last.rss / first.rss - 1;
  say(
    `status: ${results.status}${results.error ? ` (${results.error.message})` : ''}; ${results.points.length} points in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
  say(
    `RSS after the first point ${mib(first.rss)}, after the last ${mib(last.rss)}: ratio ${(last.rss / first.rss).toFixed(3)} (${pct(growth)}; bar: at most ${pct(RSS_GROWTH_BAR)}) -> ${growth <= RSS_GROWTH_BAR ? 'within the bar' : 'ABOVE THE BAR'}`,
  );
  return growth;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // As the CLI: glibc's mmap threshold fixed, in a second process (src/harness/malloc.ts).
  await reexecWithFixedThreshold();
  try {
    await main();
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  }
}
