/**
 * swapper/n, the idle task, and cpuidle's choice of how to wait: poll (spin re-checking, as
 * `idle=poll` and cpuidle's poll state do) or halt (sleep in Atomics.wait on the CPU thread's
 * doorbell, the emulation's `hlt`: a host futex wake to leave it).
 *
 * Policies (`MachineOptions.idle`, `--idle`):
 *   poll      idle=poll (arch/x86/kernel/process.c, cpu_idle_poll): never halt. Bounded here:
 *             the loop re-checks the world every POLL_SLICE_NS, and a CPU polls only while
 *             polling threads do not outnumber the host's cores (C_IDLE_POLLERS), else it halts.
 *   halt      always halt (a CPU with only a halt state).
 *   haltpoll  the cpuidle-haltpoll governor (drivers/cpuidle/governors/haltpoll.c, 5.x–6.8
 *             behaviour): poll up to a per-CPU poll_limit_ns, else halt; the limit starts at 0
 *             (the first idle period halts) and is adjusted only after a halt, from how long it
 *             lasted (adjust_poll_limit): a halt longer than the limit but at most
 *             guest_halt_poll_ns grows it (× guest_halt_poll_grow, at least
 *             guest_halt_poll_grow_start); a longer one shrinks it (÷ guest_halt_poll_shrink). A
 *             poll that times out makes the next idle period halt (haltpoll_select).
 * A halted CPU sleeps until its next device interrupt is due (an arrival, irqchip.ts, or its
 * NIC's next interrupt, src/net/nic.ts) or a kick;
 * how late it wakes for a due interrupt is recorded as `idle_exit`, the emulated idle-exit
 * latency (on this host, Atomics.wait's oversleep); how long after another thread's ring a kicked
 * one runs again, as `kick_wake` (the host's futex wake-up, its run delay included).
 *
 * The policies' names and the governor's parameters are in cpuidle.ts.
 *
 * Context: the CPU's own thread; the task never allocates once running.
 */
import { availableParallelism } from 'node:os';
import { clockTdf, hostWaitMs } from '../clock.js';
import { C_IDLE_POLLERS, CPU_FLAGS, CPU_WORDS, CpuCounter } from '../hw/layout.js';
import { TlWhat } from '../hw/timeline.js';
import { St } from '../hw/trace.js';
import {
  adjustPollLimit,
  HALTPOLL_MAX_NS,
  IDLE_WAKE_EARLY_NS,
  type IdlePolicyName,
  POLL_SLICE_NS,
  SHORT_IDLE_NS,
} from './cpuidle.js';
import type { Runtime } from './runtime.js';
import type { HostedTask } from './tasks.js';

export class IdleTask implements HostedTask {
  /** haltpoll: dev->poll_limit_ns (0: halt). */
  private pollLimitNs = 0;
  /** haltpoll: the last poll ended by its time limit (dev->poll_time_limit): halt next. */
  private pollTimedOut = false;
  private readonly hostCores = availableParallelism();
  private readonly flags: number;

  constructor(
    private readonly rt: Runtime,
    readonly id: number,
    private readonly policy: IdlePolicyName,
    private readonly maxPollNs: number = HALTPOLL_MAX_NS,
  ) {
    this.flags = rt.R.cpu + id * CPU_WORDS + CPU_FLAGS;
  }

  run(): void {
    const rt = this.rt;
    const cpu = this.id;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      // Anything runnable (woken from a remote CPU without a preemption flag)? Schedule.
      if (rt.sched.rqs.nrRunning(cpu) > 0) {
        rt.sched.schedule();
        if (rt.task !== this.id) return;
      }
      if (rt.newEpochPending()) return; // let the thread loop report
      if (this.selectPoll() && this.pollIdle()) continue;
      this.halt();
    }
  }

  /** Something for this CPU to do: a flag, a runnable task, a due interrupt, the control region. */
  private work(now: number): boolean {
    const rt = this.rt;
    return (
      Atomics.load(rt.i32, this.flags) !== 0 ||
      rt.sched.rqs.nrRunning(this.id) > 0 ||
      rt.nextDeviceDue(this.id) <= now ||
      rt.isStopping() ||
      rt.newEpochPending()
    );
  }

  /** haltpoll_select(), or the fixed policy. */
  private selectPoll(): boolean {
    if (this.policy === 'poll') return true;
    if (this.policy === 'halt' || this.pollLimitNs === 0) return false;
    if (this.pollTimedOut) {
      this.pollTimedOut = false;
      return false;
    }
    return true;
  }

  /**
   * The poll state: spin re-checking until there is work or the limit passes. Returns true when
   * the CPU should not halt now (work found, or idle=poll's slice ended). At most as many
   * threads poll as the host has cores (C_IDLE_POLLERS); past that the CPU halts instead.
   */
  private pollIdle(): boolean {
    const rt = this.rt;
    const i32 = rt.i32;
    const pollers = rt.R.control + C_IDLE_POLLERS;
    if (Atomics.add(i32, pollers, 1) >= this.hostCores) {
      Atomics.sub(i32, pollers, 1);
      return false;
    }
    rt.count(CpuCounter.idle_polls);
    const limit = this.policy === 'poll' ? POLL_SLICE_NS : this.pollLimitNs;
    const cpu = this.id;
    const t0 = rt.now();
    rt.stalls.idle(t0);
    // Arrivals are published in due order, so the next one cannot become due before `due`; one
    // published into an empty ring is picked up every 256 turns (~2 µs). A wake-up from another
    // CPU sets NEED_RESCHED in the flags, looked at every turn; the clock is read every 16th turn
    // and the rest of work() every 256th. Why not the clock every turn: on Node 20 every clock read
    // allocates a HeapNumber (performance.now() is not a fast API call); with one read a turn a
    // CPU thread allocated ~60 MB/s, 55% of it in this loop, and collected its young generation
    // every ~13 ms (a sampling heap profile and --trace-gc). A turn
    // without the clock is one Atomics.load, ~5.5 ns against the read's 40–150 ns, so a due
    // interrupt is seen up to ~90 ns later; the kernel's poll_idle() reads its clock once per
    // POLL_IDLE_RELAX_COUNT = 200 turns (drivers/cpuidle/poll_state.c).
    let due = rt.nextDeviceDue(cpu);
    let hit = false;
    for (let k = 1; ; k++) {
      if (Atomics.load(i32, this.flags) !== 0) {
        hit = true;
        break;
      }
      if ((k & 15) !== 0) continue;
      const now = rt.now();
      if (now >= due) {
        hit = true;
        break;
      }
      if ((k & 255) === 0) {
        if (this.work(now)) {
          hit = true;
          break;
        }
        if (due === Number.POSITIVE_INFINITY) due = rt.nextDeviceDue(cpu);
        if (now - t0 > limit) break;
      }
    }
    Atomics.sub(i32, pollers, 1);
    if (hit) rt.count(CpuCounter.idle_poll_hits);
    else if (this.policy === 'haltpoll') this.pollTimedOut = true;
    return hit || this.policy === 'poll';
  }

  /**
   * The halt state: sleep on the doorbell until kicked or the next device interrupt is due
   * (under poll and haltpoll, until IDLE_WAKE_EARLY_NS before it, then poll up to it).
   */
  private halt(): void {
    const rt = this.rt;
    const bell = rt.bells[rt.threadId];
    // An idle period known to end within SHORT_IDLE_NS (a NIC's next packet is on the wire) is
    // not worth a halt: cpuidle picks the poll state below the first halt state's residency.
    const soon = rt.nextDeviceDue(this.id);
    const now = rt.now();
    rt.stalls.idle(now);
    if (soon - now <= SHORT_IDLE_NS && this.pollUntil(soon)) return;
    bell.prepare();
    const t0 = rt.now();
    if (this.work(t0)) {
      bell.cancel();
      return;
    }
    const due = rt.nextDeviceDue(this.id);
    // IDLE_WAKE_EARLY_NS is the host's oversleep (host ns): 1/TDF of it in emulated time. The
    // sleep is an emulated span waited on the host: × TDF (src/clock.ts hostWaitMs).
    const early = this.policy === 'halt' ? 0 : IDLE_WAKE_EARLY_NS / clockTdf();
    rt.count(CpuCounter.idle_halts);
    rt.kick.halting();
    bell.sleep(due === Number.POSITIVE_INFINITY ? due : hostWaitMs(due - early - t0));
    const t1 = rt.now();
    rt.ctx.timeline.span(TlWhat.Halt, this.id, 0, t0, t1);
    if (this.policy === 'haltpoll') this.pollLimitNs = adjustPollLimit(this.pollLimitNs, t1 - t0, this.maxPollNs);
    // Woken by a ring (a remote wake-up, an IPI, a kick): how long the host took to run this
    // thread after the notify (kick_wake), whatever it finds to do.
    const kicked = bell.wokenNsAgo(t1);
    if (kicked >= 0) {
      rt.tracer.record(St.KickWake, kicked);
      rt.kick.kicked(t1, kicked);
    }
    if (due <= t1) {
      rt.tracer.record(St.IdleExit, t1 - due);
      return;
    }
    if (this.work(t1)) return;
    if (early > 0 && due - t1 <= early && this.pollUntil(due)) return;
    bell.noteSpurious();
  }

  /** Woken early for a due interrupt: poll until it is due (or other work comes). False: the
   *  poller cap was reached, the caller halts again. */
  private pollUntil(due: number): boolean {
    const rt = this.rt;
    const pollers = rt.R.control + C_IDLE_POLLERS;
    if (Atomics.add(rt.i32, pollers, 1) >= this.hostCores) {
      Atomics.sub(rt.i32, pollers, 1);
      return false;
    }
    for (;;) {
      const now = rt.now();
      if (now >= due || this.work(now)) break;
    }
    Atomics.sub(rt.i32, pollers, 1);
    return true;
  }
}
