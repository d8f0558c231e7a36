/**
 * The lab's scheduler rules alone, on a fake clock, for bench:twin's question (a): the run
 * queues of a machine's memory (MachineMemory.build, no thread started) driven event by event:
 * N always-runnable hogs at one nice level and a nice-0 waker (the bound kworker's task slot) on
 * CPU 0, the waker woken every period, running `workNs` and sleeping; ticks at 1/HZ. A context
 * switch takes no time. What the running lab adds to these waits is its own time accounting
 * (docs/twin.md): this column separates the rules from the emulator.
 *
 * Context: main thread; synchronous; allocates per call, never in the loop's steps.
 */
import { machineDefaults } from '../src/config/defaults.js';
import { TaskState } from '../src/hw/layout.js';
import type { KernelName } from '../src/kernel/profiles.js';
import { T_STATE, T_WAKEUPS } from '../src/kernel/sched/rq.js';
import { MachineMemory } from '../src/machine/memory.js';
import { type AppTaskSpec, fairPolicyOf, type MachineOptions } from '../src/machine/options.js';
import { Runtime } from '../src/machine/runtime.js';

export interface ModelQuestion {
  kernel: KernelName;
  hz: number;
  cpus: number;
  hogs: number;
  nice: number;
  periodNs: number;
  workNs: number;
  /** Wake-ups measured, after as many again to reach a steady state (at each phase). */
  wakeups: number;
  /**
   * Phases of the tick against the waker's period, each asked on its own and the waits pooled
   * (default 1: the first wake-up at a tick's time plus T). A host run's waker starts at an
   * arbitrary time, so its period beats against the tick at a phase of its own, fixed for the
   * run (both are hrtimers on one clock); on the fake clock, where nothing jitters, the answer
   * depends on that phase (one nice-0 hog, 121 µs of waker CPU: 0–3.5% of wake-ups waiting a
   * tick, docs/twin.md). The phases step through the tick by the golden ratio's fraction, so
   * that they spread over any shorter beat of the period against the tick as well.
   */
  phases?: number;
  /**
   * The waker's CPU per wake-up, one value per wake-up in order, cycled (ns); absent: workNs
   * every time. The host's waker does not use the same CPU at every wake-up (twin.c's
   * CPUSEQ_FILE: 42–74 µs from p10 to p90 about a 58 µs mean, one run), and beside a nice −20
   * hog near where every wake-up waits the spread decides the share: the rules at the mean
   * waited on 6–100% of wake-ups where the host waited on 72–88%, at the host's own sequence
   * on 57–85% (docs/twin.md, "The host's wake-ups one by one").
   */
  workSeq?: readonly number[];
}

/** The golden ratio's fractional part: successive multiples spread evenly over [0, 1). */
const GOLDEN = (Math.sqrt(5) - 1) / 2;

/** Each measured wake-up's wait (ns), pooled over `q.phases` phases of the tick, sorted. */
export function modelWaits(q: ModelQuestion): number[] {
  const waits: number[] = [];
  const tickNs = 1e9 / q.hz;
  const phases = q.phases ?? 1;
  for (let i = 0; i < phases; i++) waitsAt(q, ((i * GOLDEN) % 1) * tickNs, waits);
  return waits.sort((a, b) => a - b);
}

/** Each measured wake-up's wait, from the wake-up to the waker's pick (ns), the first tick `phaseNs` before a tick's time. */
function waitsAt(q: ModelQuestion, phaseNs: number, waits: number[]): void {
  const tasks: AppTaskSpec[] = Array.from({ length: q.hogs }, () => ({
    kind: 'hog',
    cpu: 0,
    policy: 'normal',
    nice: q.nice,
    rtPrio: 0,
  }));
  const opts: MachineOptions = {
    ...machineDefaults(q.cpus),
    hz: q.hz,
    kernel: q.kernel,
    tracing: false,
    irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] },
    workload: { kind: 'custom', tasks },
  };
  opts.sched = fairPolicyOf(opts);
  const mem = MachineMemory.build(opts);
  const clock = { ns: 1_000_000 };
  const rt = new Runtime(mem.sab, mem.R, mem.plan, opts, 0, () => clock.ns);
  rt.enterCpu(0, 0);
  const rqs = rt.sched.rqs;
  const i32 = mem.i32;
  const locked = <T>(f: () => T): T => {
    rqs.lock(0);
    try {
      return f();
    } finally {
      rqs.unlock(0);
    }
  };
  const switchIn = (task: number, now: number) => {
    clock.ns = now;
    rt.leaveCpu();
    rt.enterCpu(0, task);
  };
  const schedule = (now: number) => {
    const next = locked(() => rqs.scheduleLocked(0, now));
    switchIn(next, now);
    return next;
  };
  // Every task has run before (no fork placement): the hogs and the kworker are long-lived.
  const hogIds = mem.plan.tasks.filter((t) => t.kind === 'app').map((t) => t.id);
  const waker = mem.plan.kworker[0];
  for (const t of [...hogIds, waker]) i32[rqs.tw(t, T_WAKEUPS)] = 1;
  for (const h of hogIds) locked(() => rqs.wakeLocked(0, h, 0));
  schedule(0);
  const tickNs = 1e9 / q.hz;
  let tick = tickNs - phaseNs;
  let wake = 0;
  let lastEnd = 0;
  const total = 2 * q.wakeups;
  for (let k = 0; k < total; k++) {
    wake += q.periodNs;
    while (wake < lastEnd) wake += q.periodNs;
    for (; tick <= wake; tick += tickNs) if (locked(() => rqs.tickLocked(0, tick))) schedule(tick);
    let at = -1;
    if (locked(() => rqs.wakeLocked(0, waker, wake)) === 2 && schedule(wake) === waker) at = wake;
    // Bounded: 10 s of fake time without the waker picked ends the question.
    for (; at < 0; tick += tickNs) {
      if (tick - wake > 10e9) throw new Error(`the waker was not picked within 10 s (wake-up ${k})`);
      if (locked(() => rqs.tickLocked(0, tick)) && schedule(tick) === waker) at = tick;
    }
    if (k >= q.wakeups) waits.push(at - wake);
    const end = at + (q.workSeq?.length ? q.workSeq[k % q.workSeq.length] : q.workNs);
    // The waker's work; a tick inside it charges it as the kernel's would. The waker is the
    // kworker's task, charged by the work it reports (--kthread-charge work, the default), so the
    // work is reported as the driver's job reports it: in parts, up to each tick and at its end.
    let reported = at;
    for (; tick < end; tick += tickNs) {
      rqs.addWork(waker, tick - reported);
      reported = tick;
      locked(() => rqs.tickLocked(0, tick));
    }
    rqs.addWork(waker, end - reported);
    Atomics.store(i32, rqs.tw(waker, T_STATE), TaskState.Sleeping);
    schedule(end);
    lastEnd = end;
  }
}
