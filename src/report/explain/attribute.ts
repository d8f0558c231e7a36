/**
 * Critical-path attribution (`--explain`, `deferlab explain DIR`): each tcp_lat exchange's time
 * from send to receive, and each accepted hand-off's time until its deferred work starts, split
 * into named causes, from the records the machine's timeline rings hold (src/hw/timeline.ts).
 *
 * The method. An exchange's progress is, at every moment, in one place (its critical path):
 *
 *   client sends  [Exchange Begin, MsgSent(request))        on the client's CPU
 *   wire          [MsgSent, its arrival (AUX))              the wire model (src/net/profiles.ts)
 *   server        [arrival, MsgSent(reply))                 on the server's CPU
 *   wire          [MsgSent(reply), its arrival)
 *   client reads  [arrival, Exchange End)                   on the client's CPU
 *
 * Each boundary is clamped to the one before it, so the five parts tile the exchange exactly. A
 * part on a CPU is then cut at every record of that CPU (every thread's records carry the CPU
 * they happened on) and each piece named by what the CPU was doing then, innermost first: a host
 * stall or GC of the thread (TlWhat.HostStall, TlWhat.Gc), the NIC's moderation (from a message's
 * arrival until the RX vector's hard IRQ was due: TlWhat.NicDue), the lock wait, the deferred
 * work, NET_RX or another softirq, the strategy's hand-off call, a hard IRQ, waiting for ksoftirqd (NET_RX raised by the NIC's
 * hard IRQ and run, later, by ksoftirqd), the idle task (the wake-up from a halt), a context
 * switch (a task's end until the next one's begin: on this machine a futex hand-off when the
 * next task has a thread of its own), and otherwise
 * the task on the CPU: the exchange's own endpoint ('endpoint task': its copies and TCP work),
 * or another task it waits behind, by name. A piece no record covers is 'other'. The causes of
 * one exchange add up to its latency by construction; the tests check that they do.
 *
 * A hand-off (TlWhat.Handoff End, accepted) and the start of its work (TlWhat.Work Begin, the
 * same AUX) make a request: [hand-off, its return) on the hand-off's CPU, then until the work
 * starts on the work's CPU (the worker that runs it is named 'the worker'). A request that
 * found the work pending (TlWhat.Request: a driver's, cpu-hog) waits from when it was made until
 * the run that served it started, on that run's CPU. Both are series kind 'handoff': together
 * they are what the stage request_to_start times.
 *
 * Limits (docs/results.md): a message's wire part is its last packet's (earlier packets overlap
 * it); the lock wait's position inside the work is not recorded (its length is); an exchange
 * whose records a ring overwrote before they were read is not explained but counted.
 *
 * Context: main thread; allocates (it runs between slices, never on a CPU thread).
 */
import { Vector } from '../../hw/irqchip.js';
import { Softirq } from '../../hw/layout.js';
import { TlOp, type TlRecord, TlWhat } from '../../hw/timeline.js';

/** The causes with fixed names (tasks waited behind are named `behind <task>`). */
export const CAUSE = {
  wire: 'wire',
  moderation: 'NIC moderation',
  hardirq: 'hard IRQ',
  handoff: 'hand-off call',
  netRx: 'softirq NET_RX',
  softirq: 'other softirq',
  ksoftirqd: 'waiting for ksoftirqd',
  work: 'deferred work',
  lock: 'lock wait',
  endpoint: 'endpoint task (copy)',
  worker: 'the worker',
  idle: 'idle (wake-up)',
  switch: 'context switch',
  stall: 'host stall',
  gc: 'GC',
  other: 'other',
} as const;

/** What the attribution needs of the machine's plan. */
export interface ExplainTask {
  id: number;
  name: string;
  kind: string;
  /** A tcp_lat endpoint's peer: the task id of the other end of its pair. */
  peer?: number;
  /** A tcp_lat endpoint: the CPU its received flow's vector interrupts (absent: the CPU it runs on). */
  rxCpu?: number;
}

/** One explained exchange or request: its latency and its causes (ns; they sum to it). */
export interface Explained {
  kind: 'exchange' | 'handoff';
  startNs: number;
  /** When it ended (the reply read; the work started). */
  endNs: number;
  latencyNs: number;
  causes: Map<string, number>;
}

/** What a CPU was doing over a piece of time. */
enum In {
  Task = 0,
  Hardirq = 1,
  NetRx = 2,
  Softirq = 3,
  Work = 4,
  Lock = 5,
  Halt = 6,
  Handoff = 7,
}

/** NET_RX raised by the NIC's hard IRQ until it runs: did it run in ksoftirqd? */
interface Pending {
  inKsoftirqd: boolean;
}

interface Seg {
  t0: number;
  t1: number;
  inner: In;
  task: number;
  pend: Pending | null;
}

/** One CPU's history over the records read. */
interface CpuHistory {
  segs: Seg[];
  /** Host stalls and GC: [start, end, 0 stall | 1 GC]. */
  overlays: [number, number, number][];
  /** The RX vector's hard IRQs: [taken, due] (TlWhat.NicDue, NAPI_RX = 1), by time taken. */
  rxDue: [number, number][];
}

const NAPI_RX = 1;

function innerOf(stack: TlRecord[]): In {
  for (let i = stack.length - 1; i >= 0; i--) {
    const r = stack[i];
    switch (r.what) {
      case TlWhat.LockWait:
        return In.Lock;
      case TlWhat.Work:
        return In.Work;
      case TlWhat.Softirq:
        return r.arg === Softirq.NetRx ? In.NetRx : In.Softirq;
      case TlWhat.Irq:
      case TlWhat.Hardirq:
      case TlWhat.Tick:
        return In.Hardirq;
      case TlWhat.Halt:
        return In.Halt;
      case TlWhat.Handoff:
        return In.Handoff;
      default:
        break; // others: what holds them says
    }
  }
  return In.Task;
}

const NESTED = new Set<TlWhat>([
  TlWhat.Hardirq,
  TlWhat.Irq,
  TlWhat.Tick,
  TlWhat.Softirq,
  TlWhat.Handoff,
  TlWhat.Work,
  TlWhat.Halt,
  TlWhat.LockWait,
]);

/** Rebuild what each CPU did from its records (all threads', ordered by time). */
export function cpuHistories(cpus: number, records: readonly TlRecord[], tasks: readonly ExplainTask[]): CpuHistory[] {
  const per: { r: TlRecord; k: number }[][] = Array.from({ length: cpus }, () => []);
  records.forEach((r, k) => {
    const cpu = r.cpu >= 0 ? r.cpu : (r.what === TlWhat.HostStall || r.what === TlWhat.Gc) && r.arg >= 0 ? r.arg : -1;
    if (cpu >= 0 && cpu < cpus) per[cpu].push({ r, k });
  });
  return per.map((list) => {
    list.sort((a, b) => a.r.ts - b.r.ts || a.k - b.k);
    const h: CpuHistory = { segs: [], overlays: [], rxDue: [] };
    const firstTask = list.find((e) => e.r.what === TlWhat.Task);
    let task = firstTask && firstTask.r.op === TlOp.End ? firstTask.r.arg : -1;
    const stack: TlRecord[] = [];
    const open = new Map<TlWhat, number>();
    let pend: Pending | null = null;
    let prev = list.length ? list[0].r.ts : 0;
    for (const { r } of list) {
      if (r.ts > prev) h.segs.push({ t0: prev, t1: r.ts, inner: innerOf(stack), task, pend });
      if (r.ts > prev) prev = r.ts;
      if (r.what === TlWhat.HostStall || r.what === TlWhat.Gc) {
        const kind = r.what === TlWhat.Gc ? 1 : 0;
        if (r.op === TlOp.Begin) open.set(r.what, r.ts);
        else if (r.op === TlOp.End) h.overlays.push([open.get(r.what) ?? r.ts, r.ts, kind]);
        else if (r.aux > r.ts) h.overlays.push([r.ts, r.aux, kind]); // an instant carrying its end
        continue;
      }
      if (r.op === TlOp.Instant) {
        if (r.what === TlWhat.NicDue && r.arg === NAPI_RX) h.rxDue.push([r.ts, r.aux]);
        continue;
      }
      if (r.what === TlWhat.Task) {
        stack.length = 0;
        // Between a task's end and the next one's begin: switching (-2 − next; -1: unknown).
        task = r.op === TlOp.Begin ? r.arg : r.op === TlOp.End && r.arg2 > 0 ? -2 - r.arg2 : -1;
        continue;
      }
      if (!NESTED.has(r.what)) continue;
      if (r.op === TlOp.Begin) {
        stack.push(r);
        if (r.what === TlWhat.Softirq && r.arg === Softirq.NetRx && pend) {
          pend.inKsoftirqd = tasks[task]?.kind === 'ksoftirqd';
          pend = null;
        }
        continue;
      }
      let at = stack.length - 1;
      while (at >= 0 && stack[at].what !== r.what) at--;
      if (at >= 0) stack.length = at;
      if (r.what === TlWhat.Irq && r.arg === Vector.Net && !pend) pend = { inKsoftirqd: false };
    }
    h.rxDue.sort((a, b) => a[0] - b[0]);
    h.overlays = disjoint(h.overlays);
    return h;
  });
}

/** Overlapping stalls and GCs as disjoint pieces (a host stall wins where both cover). */
function disjoint(o: [number, number, number][]): [number, number, number][] {
  if (o.length < 2) return o;
  const cuts = [...new Set(o.flatMap((x) => [x[0], x[1]]))].sort((x, y) => x - y);
  const out: [number, number, number][] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const a = cuts[i];
    const b = cuts[i + 1];
    let kind = -1;
    for (const [x, y, k] of o) if (x <= a && y >= b && (kind < 0 || k < kind)) kind = k;
    if (kind < 0) continue;
    const last = out[out.length - 1];
    if (last && last[1] === a && last[2] === kind) last[1] = b;
    else out.push([a, b, kind]);
  }
  return out;
}

/** First index of `segs` whose end is after `t`. */
function firstSeg(segs: readonly Seg[], t: number): number {
  let lo = 0;
  let hi = segs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (segs[mid].t1 <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function add(m: Map<string, number>, cause: string, ns: number): void {
  if (ns > 0) m.set(cause, (m.get(cause) ?? 0) + ns);
}

/** Who the piece of a part is waiting for, by the CPU's state (see the file's comment). */
function nameOf(s: Seg, own: number, worker: boolean, tasks: readonly ExplainTask[]): string {
  switch (s.inner) {
    case In.Lock:
      return CAUSE.lock;
    case In.Work:
      return CAUSE.work;
    case In.NetRx:
      return CAUSE.netRx;
    case In.Softirq:
      return CAUSE.softirq;
    case In.Hardirq:
      return CAUSE.hardirq;
    case In.Halt:
      return CAUSE.idle;
    case In.Handoff:
      return CAUSE.handoff;
    default:
      break;
  }
  if (s.pend?.inKsoftirqd) return CAUSE.ksoftirqd;
  if (s.task <= -2) return CAUSE.switch;
  if (s.task < 0) return CAUSE.other;
  if (s.task === own) return worker ? CAUSE.worker : CAUSE.endpoint;
  const t = tasks[s.task];
  if (!t) return CAUSE.other;
  if (t.kind === 'idle') return CAUSE.idle;
  return `behind ${t.name}`;
}

/** Add the causes of [t0, t1) on `cpu` to `m`: `own` is the task whose progress it is. */
export function attributePart(
  h: CpuHistory,
  t0: number,
  t1: number,
  own: number,
  worker: boolean,
  tasks: readonly ExplainTask[],
  m: Map<string, number>,
): void {
  if (!(t1 > t0)) return;
  let t = t0;
  for (let i = firstSeg(h.segs, t0); i < h.segs.length && t < t1; i++) {
    const s = h.segs[i];
    if (s.t0 > t) {
      add(m, CAUSE.other, Math.min(s.t0, t1) - t); // no record covers it
      t = Math.min(s.t0, t1);
      if (t >= t1) break;
    }
    const e = Math.min(s.t1, t1);
    let rest = e - t;
    for (const [a, b, kind] of h.overlays) {
      const o = Math.min(b, e) - Math.max(a, t);
      if (o > 0) {
        add(m, kind === 1 ? CAUSE.gc : CAUSE.stall, o);
        rest -= o;
      }
    }
    add(m, nameOf(s, own, worker, tasks), Math.max(0, rest));
    t = e;
  }
  if (t < t1) add(m, CAUSE.other, t1 - t);
}

/** The first index in 0..n whose entry is not `before` (entries sorted so that `before` holds for a prefix). */
function firstNot(n: number, before: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** When the first RX hard IRQ taken at or after `t` was due (+Infinity: none taken). */
function rxDueAfter(h: CpuHistory, t: number): number {
  const d = h.rxDue;
  const i = firstNot(d.length, (k) => d[k][0] < t);
  return i < d.length ? d[i][1] : Number.POSITIVE_INFINITY;
}

/** When NET_RX first runs on the CPU at or after `t` (`t` itself if it is running then; +Infinity: never). */
function netRxFrom(h: CpuHistory, t: number): number {
  const s = h.segs;
  for (let i = firstNot(s.length, (k) => s[k].t1 <= t); i < s.length; i++)
    if (s[i].inner === In.NetRx) return Math.max(t, s[i].t0);
  return Number.POSITIVE_INFINITY;
}

/**
 * A receive part: the NIC's moderation, from the arrival until the first RX hard IRQ taken after
 * it was due on the vector's CPU `hRx` (the flow's receive vector: --nic-irq-cpus may put it on
 * another CPU than the reader's), or until NET_RX first runs there (a NAPI poll already running
 * picks the message up without an IRQ of its own); then the reader's CPU `h`.
 */
function receivePart(
  hRx: CpuHistory,
  h: CpuHistory,
  t0: number,
  t1: number,
  own: number,
  tasks: readonly ExplainTask[],
  m: Map<string, number>,
): void {
  const due = Math.min(Math.max(t0, Math.min(rxDueAfter(hRx, t0), netRxFrom(hRx, t0))), t1);
  add(m, CAUSE.moderation, due - t0);
  attributePart(h, due, t1, own, false, tasks, m);
}

/** Where the reader starts trusting the records (a ring that lost records: its oldest kept). */
export interface ExplainInput {
  cpus: number;
  tasks: readonly ExplainTask[];
  /** Every thread's records of one read, in ring order per thread. */
  records: readonly TlRecord[];
  /** Exchanges that begin before this are not explained (a ring lost their records). */
  validFromNs: number;
  /**
   * Exchanges that end after this are neither explained nor counted as unexplained: the measured
   * window's end, past which the histogram holds none of them either (so that explained + not
   * explained is the histogram's count). Absent: no end.
   */
  untilNs?: number;
}

/** Every exchange and request the records hold from start to end, explained; and how many were seen but could not be. */
export function explainRecords(inp: ExplainInput): {
  explained: Explained[];
  unexplained: { exchange: number; handoff: number };
} {
  const h = cpuHistories(inp.cpus, inp.records, inp.tasks);
  // The task on `cpu` just before `t` (the piece of time that ends at t, or holds it).
  const taskAt = (cpu: number, t: number): number => {
    const segs = h[cpu].segs;
    let lo = 0;
    let hi = segs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (segs[mid].t1 < t) lo = mid + 1;
      else hi = mid;
    }
    return lo < segs.length && segs[lo].t0 <= t ? segs[lo].task : -1;
  };
  const sent = new Map<string, TlRecord>();
  const begins = new Map<string, TlRecord>();
  const handoffs = new Map<string, TlRecord>();
  const out: Explained[] = [];
  const unexplained = { exchange: 0, handoff: 0 };
  // Before the first record read, a CPU's history is unknown: a request made then is not explained.
  let from = inp.validFromNs;
  let first = Number.POSITIVE_INFINITY;
  for (const r of inp.records) if (r.op !== TlOp.Instant && r.ts < first) first = r.ts;
  from = Math.max(from, first);
  for (const r of inp.records) {
    if (r.what === TlWhat.MsgSent) sent.set(`${r.arg}:${r.arg2}`, r);
    else if (r.what === TlWhat.Exchange && r.op === TlOp.Begin) begins.set(`${r.aux}:${r.arg2}`, r);
    else if (r.what === TlWhat.Handoff && r.op === TlOp.End && r.arg2 === 1) handoffs.set(`${r.cpu}:${r.aux}`, r);
  }
  for (const end of inp.records) {
    if (end.what === TlWhat.Exchange && end.op === TlOp.End) {
      if (inp.untilNs !== undefined && end.ts > inp.untilNs) continue;
      const b = begins.get(`${end.arg}:${end.arg2}`);
      const req = b && sent.get(`${b.arg}:${end.arg2}`);
      const rep = sent.get(`${end.arg}:${end.arg2}`);
      if (!b || !req || !rep || b.ts < inp.validFromNs || b.cpu !== end.cpu) {
        unexplained.exchange++;
        continue;
      }
      out.push(explainExchange(h, inp.tasks, b, req, rep, end, taskAt));
    } else if (end.what === TlWhat.Work && end.op === TlOp.Begin) {
      const ho = handoffs.get(`${end.arg}:${end.aux}`);
      if (!ho || end.aux < inp.validFromNs) {
        if (end.aux >= inp.validFromNs) unexplained.handoff++;
        continue;
      }
      const m = new Map<string, number>();
      const t0 = end.aux;
      const mid = Math.min(Math.max(t0, ho.ts), end.ts);
      attributePart(h[ho.cpu], t0, mid, taskAt(ho.cpu, t0), false, inp.tasks, m);
      attributePart(h[end.cpu], mid, end.ts, taskAt(end.cpu, end.ts), true, inp.tasks, m);
      out.push({ kind: 'handoff', startNs: t0, endNs: end.ts, latencyNs: end.ts - t0, causes: m });
    } else if (end.what === TlWhat.Request) {
      // A request that found the work pending: it waited for the run on this CPU.
      if (end.aux < from) {
        unexplained.handoff++;
        continue;
      }
      const m = new Map<string, number>();
      attributePart(h[end.cpu], end.aux, end.ts, taskAt(end.cpu, end.ts), true, inp.tasks, m);
      out.push({ kind: 'handoff', startNs: end.aux, endNs: end.ts, latencyNs: end.ts - end.aux, causes: m });
    }
  }
  return { explained: out, unexplained };
}

/** One exchange: its five parts (the file's comment), one-way (halved, as qperf reports). */
function explainExchange(
  h: CpuHistory[],
  tasks: readonly ExplainTask[],
  b: TlRecord,
  req: TlRecord,
  rep: TlRecord,
  end: TlRecord,
  taskAt: (cpu: number, t: number) => number,
): Explained {
  const m = new Map<string, number>();
  const c = b.cpu;
  const s = rep.cpu >= 0 && rep.cpu < h.length ? rep.cpu : c;
  const client = taskAt(c, b.ts);
  const server = tasks[client]?.peer ?? taskAt(s, rep.ts);
  // Boundaries, each clamped to [previous, end].
  const at = (x: number, lo: number) => Math.min(Math.max(x, lo), end.ts);
  const t1 = at(req.ts, b.ts);
  const t2 = at(req.aux, t1);
  const t3 = at(rep.ts, t2);
  const t4 = at(rep.aux, t3);
  attributePart(h[c], b.ts, t1, client, false, tasks, m);
  add(m, CAUSE.wire, t2 - t1);
  const rx = (task: number, cpu: number) => h[tasks[task]?.rxCpu ?? cpu] ?? h[cpu];
  receivePart(rx(server, s), h[s], t2, t3, server, tasks, m);
  add(m, CAUSE.wire, t4 - t3);
  receivePart(rx(client, c), h[c], t4, end.ts, client, tasks, m);
  for (const [k, v] of m) m.set(k, v / 2);
  return { kind: 'exchange', startNs: b.ts, endNs: end.ts, latencyNs: (end.ts - b.ts) / 2, causes: m };
}
