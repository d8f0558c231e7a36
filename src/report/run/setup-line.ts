/**
 * The lines above and below the summary table that say what was measured: the setup line (from
 * the resolved config in `meta.options`) and the seed line. Pure; nothing here prints.
 */
import { describeNic, NIC_PROFILE, type NicOptions } from '../../net/profiles.js';
import { plural } from '../../text.js';
import type { RunResults } from '../types.js';

/** `64 B`, `4 KiB`, `1 MiB`. */
export function bytesText(n: number): string {
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n / 2 ** 20} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

/** `20k`, `1.5k`, `1M`, `200`: events per second, as the flags take them. */
function rateText(n: number): string {
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1000 && n % 100 === 0) return `${n / 1000}k`;
  return String(n);
}

/** `1 s`, `1.5 s`, `200 ms`. */
function msText(ms: number): string {
  return ms >= 1000 && ms % 100 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * What was measured, in one line, from the resolved config in `meta.options`:
 * `tcp_lat 64 B between CPU 0 and CPU 1; 2 CPUs, HZ 250, kernel 6.9, idle haltpoll, kthreads on own
 * threads; background interrupts 20k/s per CPU
 * (poisson) on CPUs 0,1; random.c trigger 1024; 5 trials of 1 s (+ 200 ms warm-up) per strategy,
 * interleaved`. A swept setting says `per point` (each point's title gives its value). When a
 * scenario replaced the workload (`meta.workload`), that text stands for the workload, the
 * interrupts and the trigger. Undefined when the options say nothing usable.
 */
export function setupLine(results: Pick<RunResults, 'meta' | 'points'>): string | undefined {
  const o = (results.meta.options ?? {}) as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const obj = (x: unknown) => (x && typeof x === 'object' ? (x as Record<string, unknown>) : {});
  const swept = typeof obj(o.sweep).param === 'string' ? (obj(o.sweep).param as string) : undefined;
  const parts: string[] = [];
  const custom = typeof results.meta.workload === 'string' ? results.meta.workload : undefined;

  const w = obj(o.workload);
  const kind = typeof o.workload === 'string' ? o.workload : typeof w.kind === 'string' ? w.kind : undefined;
  if (custom) parts.push(custom);
  else if (kind === 'tcp_lat') {
    const size =
      swept === 'msg_size'
        ? 'msg_size per point'
        : num(w.msgSize) !== undefined
          ? bytesText(w.msgSize as number)
          : undefined;
    const client = num(w.clientCpu);
    const server = num(w.serverCpu);
    const cpus = client !== undefined && server !== undefined ? ` between CPU ${client} and CPU ${server}` : '';
    parts.push(`tcp_lat${size ? ` ${size}` : ''}${placementText(w) ?? cpus}${nicText(w.nic)}`);
  } else if (kind === 'irq_only') parts.push('irq_only: background interrupts only, no application');
  else if (kind) parts.push(kind);

  const cpus = num(o.cpus);
  const hz = num(o.hz);
  // The ksoftirqd rule when --softirq-defer set it (null: the kernel's own; absent before it existed).
  const rule = typeof o.softirqDefer === 'boolean' ? ` (ksoftirqd rule ${o.softirqDefer ? 'on' : 'off'})` : '';
  const kernel = typeof o.kernel === 'string' ? `kernel ${o.kernel}${rule}` : '';
  const idle =
    o.idle === 'auto' && typeof results.meta.idlePolicy === 'string'
      ? `idle ${results.meta.idlePolicy}`
      : typeof o.idle === 'string'
        ? `idle ${o.idle}`
        : '';
  // --kthread-charge (absent in results from before it): `work` is a model, and says so.
  const charge =
    o.kthreadCharge === 'work'
      ? ', charged their work only (model)'
      : o.kthreadCharge === 'wall'
        ? ', charged wall time'
        : '';
  const kthreads =
    typeof o.kthreads === 'string'
      ? `kthreads on ${o.kthreads === 'cpu' ? 'CPU threads' : 'own threads'}${charge}`
      : '';
  const machine = [
    cpus !== undefined ? `${plural(cpus, 'CPU')}${nodesText(o, results)}` : '',
    hz !== undefined ? `HZ ${hz}` : '',
    kernel,
    idle,
    kthreads,
    // --hogs, where a custom workload (cpu-hog's, bench:twin's) may have hogs: how a switch to or
    // from one is made (a same-thread switch, or a host hand-off).
    custom && typeof o.hogs === 'string' ? `hogs on ${o.hogs === 'cpu' ? 'CPU threads' : 'own threads'}` : '',
    tdfText(results.meta),
    switchCostText(results.meta),
    // --host-helpers nice: the process's other threads (V8's helpers) ran below the machine's.
    (results.meta.hostHelpersNiced ?? 0) > 0
      ? `${results.meta.hostHelpersNiced} helper threads at ${results.meta.hostHelpersPolicy ?? `nice ${results.meta.hostHelpersNice ?? 19}`}${raisedText(results.meta.hostHelpersRaisedMs, results.meta.hostHelpersNice)} (--host-helpers)`
      : '',
  ].filter(Boolean);
  if (machine.length) parts.push(machine.join(', '));

  const irq = obj(o.irq);
  const rate = num(irq.rate);
  const trace = irqTraceText(results.meta, obj(irq.trace));
  if (!custom && trace) parts.push(trace);
  else if (!custom && (rate !== undefined || swept === 'irq_rate')) {
    if (rate === 0 && swept !== 'irq_rate') parts.push('no background interrupts');
    else {
      const burst = num(irq.burstSize);
      const pattern =
        irq.pattern === 'bursts' && burst !== undefined
          ? ` (bursts of ${burst})`
          : typeof irq.pattern === 'string'
            ? ` (${irq.pattern})`
            : '';
      const where = Array.isArray(irq.cpus)
        ? ` on ${irq.cpus.length === 1 ? 'CPU' : 'CPUs'} ${irq.cpus.join(',')}`
        : irq.cpus === 'all'
          ? ' on all CPUs'
          : '';
      const at = swept === 'irq_rate' ? 'at irq_rate per point' : `${rateText(rate as number)}/s`;
      parts.push(`background interrupts ${at} per CPU${pattern}${where}`);
    }
  }
  const trigger = num(obj(o.fastPool).trigger);
  if (!custom && swept === 'trigger') parts.push('random.c trigger per point');
  else if (!custom && trigger !== undefined) parts.push(`random.c trigger ${trigger}`);

  const trials = num(o.trials);
  const trialMs = num(o.trialMs);
  const warmupMs = num(o.warmupMs);
  if (trials !== undefined && trialMs !== undefined) {
    const count = results.points[0]?.strategies.length ?? (Array.isArray(o.strategies) ? o.strategies.length : 0);
    const warm = warmupMs ? ` (+ ${msText(warmupMs)} warm-up)` : '';
    const until = obj(o.until);
    const more =
      num(until.pct) !== undefined
        ? ` or more (--until ±${until.pct}%, up to ${msText(num(until.maxTimeMs) ?? 0)} more per point)`
        : '';
    // A run that stopped early (a fault, Ctrl-C) kept fewer: said here, where the count is read.
    const kept = results.points.flatMap((p) => p.strategies.map((s) => s.trials?.length ?? 0));
    const fewest = kept.length ? Math.min(...kept) : trials;
    const most = kept.length ? Math.max(...kept) : trials;
    const stopped =
      fewest < trials
        ? ` (${fewest === most ? fewest : `${fewest}–${most}`} of them finished: the run stopped early)`
        : '';
    parts.push(
      `${plural(trials, 'trial')}${more} of ${msText(trialMs)}${warm} per strategy${count > 1 ? ', interleaved' : ''}${stopped}`,
    );
  }
  return parts.length ? parts.join('; ') : undefined;
}

/** `0-7,9`: a sorted CPU list in taskset's syntax. */
function cpuListText(ids: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    out.push(j > i ? `${ids[i]}-${ids[j]}` : String(ids[i]));
    i = j + 1;
  }
  return out.join(',');
}

/**
 * `, 8 pairs on CPUs 0-7 (placed at wakeup), NIC vectors on CPU 0`: tcp_lat's --app-cpus and
 * --nic-irq-cpus (src/net/vectors.ts says what the vectors are per profile). Undefined when
 * neither is given (the pinned pairs' text stands).
 */
function placementText(w: Record<string, unknown>): string | undefined {
  const ids = (x: unknown) => (Array.isArray(x) && x.every((v) => typeof v === 'number') ? (x as number[]) : undefined);
  const app = ids(w.appCpus);
  const irq = ids(w.nicIrqCpus);
  if (!app && !irq) return undefined;
  const n = typeof w.instances === 'number' ? w.instances : 1;
  const pairs = n === 1 ? 'a pair' : `${n} pairs`;
  const where = app
    ? ` on CPU${app.length === 1 ? '' : 's'} ${cpuListText(app)}${app.length === 1 ? ' (pinned)' : ' (placed at wakeup)'}`
    : ' pinned';
  const vec = irq ? `, NIC vectors on CPU${irq.length === 1 ? '' : 's'} ${cpuListText(irq)}` : '';
  return `, ${pairs}${where}${vec}`;
}

/**
 * ` in 2 nodes on 2 host cores (CPU threads runnable but waiting for a host core 38% of the time
 * they were runnable)`: the NUMA nodes (from the resolved topology), and, when the machine has more
 * CPUs than the host has cores, what that cost as measured: the host's run_delay over run_delay plus
 * run time of the machine's threads (counters host_thread_wait_ns, host_thread_run_ns, summed over
 * every trial). Empty for one node on enough cores.
 */
export function nodesText(o: Record<string, unknown>, results: Pick<RunResults, 'meta' | 'points'>): string {
  const topology = o.topology && typeof o.topology === 'object' ? (o.topology as Record<string, unknown>) : {};
  const nodes = Array.isArray(topology.numa) ? topology.numa.length : 1;
  const cpus = typeof o.cpus === 'number' ? o.cpus : 0;
  const cores = results.meta.hostCores;
  let text = nodes > 1 ? ` in ${nodes} nodes` : '';
  if (typeof cores !== 'number' || cpus <= cores) return text;
  let wait = 0;
  let run = 0;
  for (const p of results.points)
    for (const s of p.strategies) {
      wait += s.counters.host_thread_wait_ns ?? 0;
      run += s.counters.host_thread_run_ns ?? 0;
    }
  text += ` on ${plural(cores, 'host core')}`;
  if (wait + run > 0)
    text += ` (CPU threads runnable but waiting for a host core ${Math.round((100 * wait) / (wait + run))}% of the time they were runnable)`;
  return text;
}

/**
 * `background interrupts replayed from trace.txt (perf, 290 arrivals in 10.8 ms; host CPUs 3:0,5:1
 * by first arrival; looped; time ×2)`: where the arrivals came from under `--irq-trace`, from the
 * resolved `irq.trace` and `meta.irqTrace`. Undefined without a trace.
 */
function irqTraceText(meta: RunResults['meta'], trace: Record<string, unknown>): string | undefined {
  if (typeof trace.file !== 'string') return undefined;
  const m = meta.irqTrace;
  const what = m ? `${m.format}, ${plural(m.events, 'arrival')} in ${nsText(m.spanNs)}; ` : '';
  const map = m
    ? `host CPUs ${m.mapping.map((x) => `${x.host}:${x.cpu}`).join(',')}${m.mapGiven ? '' : ' by first arrival'}`
    : typeof trace.map === 'string'
      ? `host CPUs ${trace.map}`
      : 'host CPUs by first arrival';
  const loop = trace.loop === true ? '; looped' : '';
  const scale = typeof trace.scale === 'number' && trace.scale !== 1 ? `; time ×${trace.scale}` : '';
  return `background interrupts replayed from ${trace.file} (${what}${map}${loop}${scale})`;
}

/** `10.8 ms`, `2.5 s`, `750 µs`: a trace's span. */
export function nsText(ns: number): string {
  if (ns >= 1e9) return `${+(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${+(ns / 1e6).toFixed(1)} ms`;
  return `${+(ns / 1e3).toFixed(1)} µs`;
}

/** `seed 123456 (replay: --seed 123456)`: the seed every random choice of the run came from. */
export function seedLine(results: Pick<RunResults, 'meta'>): string {
  return `seed ${results.meta.seed} (replay: --seed ${results.meta.seed})`;
}

/**
 * Time dilation, for the setup line: `TDF 2 (given)`, `TDF 6.3 (auto: median lab/reference ...)`;
 * '' without dilation. Every time in the results is then emulated time (src/clock.ts).
 */
export function tdfText(meta: Pick<RunResults['meta'], 'tdf'>): string {
  const t = meta.tdf;
  if (!t || (t.tdf === 1 && t.mode !== 'auto')) return '';
  return t.mode === 'auto' ? `TDF ${t.tdf} (${t.how})` : `TDF ${t.tdf} (emulated time = host time / ${t.tdf})`;
}

/**
 * The context-switch model (`--switch-cost`), for the setup line: `switches at least 2.33 µs
 * (model: this host's kernel, measured at start-up; --switch-cost)`; '' in results from before it.
 */
export function switchCostText(meta: Pick<RunResults['meta'], 'switchCost'>): string {
  const s = meta.switchCost;
  if (!s) return '';
  if (s.mode === 'off') return "switches at the lab's own cost (--switch-cost off)";
  // The reason alone (the setup line's parts are separated by ';'): its first clause.
  if (s.ns <= 0) return `switches not charged (${s.how.replace(/^not charged: /, '').split(';')[0]})`;
  const us = (s.ns / 1000).toFixed(2);
  return s.mode === 'host'
    ? `switches at least ${us} µs (model: this host's kernel switch, measured at start-up; --switch-cost)`
    : `switches at least ${us} µs (model: given; --switch-cost)`;
}

/** `, nice 10 after 1.3 s (one starved)`: idled helpers raised by the machine's watch (host-threads.ts watchIdleHelpers). */
function raisedText(ms: number | undefined, nice: number | undefined): string {
  return ms === undefined ? '' : `, nice ${nice ?? 10} after ${(ms / 1000).toFixed(1)} s (one starved)`;
}

/**
 * ` over ipoib-cm, no moderation`: the NIC a tcp_lat run's packets crossed (src/net/profiles.ts
 * describeNic: its profile, what differs from the profile's MTU and link, its moderation); only
 * the profile's name where results hold less than the whole of it; nothing without a NIC.
 */
function nicText(nic: unknown): string {
  if (!nic || typeof nic !== 'object') return '';
  const n = nic as Record<string, unknown>;
  if (typeof n.profile !== 'string' || !Object.hasOwn(NIC_PROFILE, n.profile)) return '';
  const whole = ['mtu', 'linkGbps', 'rxUsecs', 'rxFrames'].every((k) => typeof n[k] === 'number');
  return ` over ${whole ? describeNic(n as unknown as NicOptions) : n.profile}`;
}
