/**
 * The kernel on one thread: a machine's memory with no thread started (MachineMemory.build), a
 * Runtime over it driven by a fake clock, and this thread entered as CPU 0's idle task. No
 * worker threads, no wall clock: what a test sees is the kernel's logic, step by step.
 */

import { C_JIFFIES, SchedPolicy, TaskState } from '../../src/hw/layout.js';
import type { FairPolicyName } from '../../src/kernel/sched/fair.js';
import { T_STATE, T_WAKEUPS } from '../../src/kernel/sched/rq.js';
import { MachineMemory } from '../../src/machine/memory.js';
import type { MachineOptions } from '../../src/machine/options.js';
import { Runtime } from '../../src/machine/runtime.js';
import { options } from '../machine/helpers.js';

export interface OneThreadKernel {
  mem: MachineMemory;
  rt: Runtime;
  /** The fake clock (ns); advance it with `clock.ns += ...`. */
  clock: { ns: number };
  /** Store jiffies as the irq thread would at a tick boundary. */
  setJiffies(j: number): void;
}

/** Boot the kernel's memory for `o` and enter CPU `cpu` (default 0) as its idle task. */
export function oneThreadKernel(o: Partial<MachineOptions> = {}, cpu = 0): OneThreadKernel {
  const opts = options({ irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] }, tracing: false, ...o });
  const mem = MachineMemory.build(opts);
  const clock = { ns: 1_000_000 };
  const rt = new Runtime(mem.sab, mem.R, mem.plan, opts, cpu, () => clock.ns);
  rt.enterCpu(cpu, cpu);
  return {
    mem,
    rt,
    clock,
    setJiffies: (j) => Atomics.store(mem.i32, mem.R.control + C_JIFFIES, j),
  };
}

/**
 * CPU 0's run queue on one thread, with three spare task slots (the plan's kthreads kworker/0:0,
 * kworker/0:0H and ksoftirqd/0, re-initialised by hand as the test needs them), and the
 * scheduler's locked entry points as one-line calls at a given time `now` (ns). `schedule` is a
 * context switch that takes no time; `pick` then `switchIn` one whose thread takes the CPU later.
 */
export function cpu0Queue(o: Partial<MachineOptions> = {}) {
  const k = oneThreadKernel(o);
  const rqs = k.rt.sched.rqs;
  const [a, b, c] = [k.mem.plan.kworker[0], k.mem.plan.kworkerHi[0], k.mem.plan.ksoftirqd[0]];
  const f64 = k.rt.ctx.f64;
  const locked = <T>(f: () => T): T => {
    rqs.lock(0);
    try {
      return f();
    } finally {
      rqs.unlock(0);
    }
  };
  /** try_to_wake_up: 0 already runnable, 1 woken, 2 woken and CPU 0 must reschedule. */
  const wake = (task: number, now: number) => locked(() => rqs.wakeLocked(0, task, now));
  /** A fresh task, woken. `seen`: it has been woken before (not a new task: no fork placement). */
  const run = (task: number, policy = SchedPolicy.Normal, nice = 0, rtPrio = 0, now = 0, seen = false) => {
    rqs.initTask(task, 0, policy, nice, rtPrio);
    if (seen) k.mem.i32[rqs.tw(task, T_WAKEUPS)] = 1;
    return wake(task, now);
  };
  /** __schedule()'s pick alone: `next` is CPU 0's current task, its thread not yet running it. */
  const pick = (now: number) => locked(() => rqs.scheduleLocked(0, now));
  /**
   * The picked task's thread takes CPU 0 at `now` (Runtime.enterCpu, as the thread loop calls it
   * when it finds itself owner): the end of the lab's context switch, `now − pick` after the pick.
   */
  const switchIn = (task: number, now: number) => {
    k.clock.ns = now;
    k.rt.leaveCpu();
    k.rt.enterCpu(0, task);
  };
  /** A context switch that takes no time: pick at `now`, the next task's thread running at `now`. */
  const schedule = (now: number) => {
    const next = pick(now);
    switchIn(next, now);
    return next;
  };
  const tick = (now: number) => locked(() => rqs.tickLocked(0, now));
  return { k, rqs, a, b, c, f64, wake, run, pick, switchIn, schedule, tick };
}

/** What {@link hogAndWaker} saw at each wake-up of its nice-0 task. */
export interface WakeCycle {
  /** try_to_wake_up's answer: 1 woken, 2 woken and the hog preempted at once. */
  woke: number;
  /** From the wake-up to the pick of the woken task (ns). */
  waitNs: number;
}

/**
 * Seed 004's setup on CPU 0 of a 2-CPU machine at `hz`, on the fake clock: a nice −20 hog always
 * runnable, and a nice-0 task (one that has run before) woken every `periodNs` (the next period
 * after its last run ended) that runs `workNs` and sleeps. Each context switch's thread takes the
 * CPU `handoffNs` after the pick (the lab's hand-off between host threads; 0: the kernel's).
 * Ticks every 1/hz; a task picked at a tick or a wake-up runs from there.
 */
export function hogAndWaker(o: {
  sched: FairPolicyName;
  hz: number;
  handoffNs: number;
  periodNs: number;
  workNs: number;
  cycles: number;
  /** The host holds the nice-0 task's thread this long inside each of its runs (a host stall). */
  stallNs?: number;
  /** ... and that stall is steal (Scheduler.chargeSteal, src/machine/host-stall.ts), not its run time. */
  steal?: boolean;
}): WakeCycle[] {
  const q = cpu0Queue({ sched: o.sched, cpus: 2, hz: o.hz });
  const { rqs, a: hog, b: waker } = q;
  const tickNs = 1e9 / o.hz;
  q.run(hog, SchedPolicy.Normal, -20, 0, 0, true);
  q.schedule(0);
  rqs.initTask(waker, 0, SchedPolicy.Normal, 0, 0);
  q.k.mem.i32[rqs.tw(waker, T_WAKEUPS)] = 1;
  const out: WakeCycle[] = [];
  let tick = tickNs;
  let wake = 0;
  let lastEnd = 0;
  /** A tick at each boundary up to `until`; returns the time the waker was picked, or -1. */
  const ticksUntil = (until: number, watch: boolean): number => {
    for (; tick <= until; tick += tickNs) {
      if (!q.tick(tick)) continue;
      const next = q.pick(tick);
      if (watch && next === waker) {
        tick += tickNs;
        return tick - tickNs;
      }
      q.switchIn(next, tick + o.handoffNs);
    }
    return -1;
  };
  for (let k = 0; k < o.cycles; k++) {
    wake += o.periodNs;
    while (wake < lastEnd) wake += o.periodNs;
    ticksUntil(wake, false);
    const woke = q.wake(waker, wake);
    let at = -1;
    if (woke === 2) {
      const next = q.pick(wake);
      if (next === waker) at = wake;
      else q.switchIn(next, wake + o.handoffNs);
    }
    // Bounded: a waker not picked within 10 s of fake time is a failure, not a hang.
    while (at < 0) {
      if (tick - wake > 10e9) throw new Error(`cycle ${k}: the woken task was not picked within 10 s`);
      at = ticksUntil(tick, true);
    }
    out.push({ woke, waitNs: at - wake });
    // Its thread takes the CPU, it works, it sleeps (a tick inside so short a run is ignored).
    q.switchIn(waker, at + o.handoffNs);
    const stall = o.stallNs ?? 0;
    const end = at + o.handoffNs + o.workNs + stall;
    if (stall > 0 && o.steal) q.k.rt.sched.chargeSteal(0, end - stall, end);
    Atomics.store(q.k.mem.i32, rqs.tw(waker, T_STATE), TaskState.Sleeping);
    q.switchIn(q.pick(end), end + o.handoffNs);
    lastEnd = end + o.handoffNs;
    while (tick <= lastEnd) tick += tickNs;
  }
  return out;
}
