/**
 * Timers and the tick (kernel/time/timer.c): add_timer_on, mod_timer, del_timer, timer_pending,
 * TIMER_DEFERRABLE, run_local_timers raising TIMER_SOFTIRQ once a timer expired, the
 * TIMER_SOFTIRQ action (expire_timers), and update_process_times (the tick: timers, then
 * scheduler_tick).
 *
 * Emulates the semantics the seeds rest on: a timer armed with `expires = jiffies` expires at
 * the next tick of its CPU and not before (seed 001's fix); NOHZ: an idle CPU takes no tick, and
 * the irq thread kicks it only for an expired non-deferrable timer (CPU_NEXT_TIMER), so a
 * deferrable timer on an idle CPU waits (src/machine/irq-thread.ts).
 * Differences: one flat, unordered list per CPU instead of the timer wheel (a handful of
 * timers: a scan is cheaper than the wheel's bookkeeping, and expiry is exact, without the
 * wheel's granularity); no timer migration.
 *
 * Context: any thread for add/del/mod/pending (under the base's lock); the CPU's owner for the
 * tick and the softirq. Never allocates.
 */

import type { Timer } from '../api/types.js';
import { CPU_LAST_TICK, CPU_NEXT_TIMER, CPU_NEXT_TIMER_ANY, CPU_WORDS, CpuCounter, Softirq } from '../hw/layout.js';
import { TlWhat } from '../hw/timeline.js';
import { LINE_WORDS } from '../shm/layout.js';
import { LOCK_WORDS, ShmLock } from '../shm/lock.js';
import type { CpuContext } from './context.js';
import type { Mechanism } from './mechanism.js';
import { KernelBug, MAX_OBJECTS, O_ARG, O_CPU, O_FLAGS, O_STATE, type Objects, ObjState } from './objects.js';
import type { Scheduler } from './sched/core.js';
import type { Softirqs } from './softirq.js';

/** Pending timers per CPU. */
export const MAX_TIMERS_PER_CPU = MAX_OBJECTS;

/**
 * The value CPU_NEXT_TIMER / CPU_NEXT_TIMER_ANY hold when no timer is pending, at jiffies `j`:
 * half the int32 range ahead, so that `time_after` arithmetic (`j - next >= 0`) reads it as far in
 * the future for the next ~12 days of jiffies at HZ 1000.
 */
export function timerNone(j: number): number {
  return (j + 0x3fffffff) | 0;
}

/** Words of one CPU's timer base: lock, a header line, the pending timer ids. */
export const TIMER_BASE_WORDS = LOCK_WORDS + LINE_WORDS + MAX_TIMERS_PER_CPU;
/** L timer base lock: number of ids in the pending list. */
export const TB_LEN = LOCK_WORDS;
/** L timer base lock: pending timer ids (unordered). */
export const TB_LIST = LOCK_WORDS + LINE_WORDS;

export class Timers {
  private readonly locks: ShmLock[] = [];
  /** Base of the `timerBase` region (TIMER_BASE_WORDS per CPU). */
  private readonly base: number;
  private readonly expired = new Int32Array(MAX_TIMERS_PER_CPU);

  constructor(
    private readonly ctx: CpuContext,
    private readonly objects: Objects,
    private readonly softirqs: Softirqs,
    private readonly sched: Scheduler,
    lockSpins: number,
  ) {
    this.base = ctx.R.parts.timerBase[0];
    for (let c = 0; c < ctx.nrCpus; c++) this.locks.push(new ShmLock(ctx.i32, this.tb(c, 0), lockSpins));
    softirqs.open(Softirq.Timer, (c) => this.run(c));
  }

  /** Index of word `w` (TB_*) of CPU `c`'s timer base. */
  private tb(c: number, w: number): number {
    return this.base + c * TIMER_BASE_WORDS + w;
  }

  /**
   * update_process_times(), on a tick of CPU `c`: run_local_timers() raises TIMER_SOFTIRQ once
   * the earliest timer (deferrable ones included: the CPU is awake) expired; then
   * scheduler_tick(). Context: hardirq on `c`.
   */
  tick(c: number): void {
    const ctx = this.ctx;
    ctx.timeline.begin(TlWhat.Tick, c);
    ctx.count(CpuCounter.ticks);
    const j = ctx.jiffies();
    ctx.i32[ctx.cw(c, CPU_LAST_TICK)] = j;
    if (j - Atomics.load(ctx.i32, ctx.cw(c, CPU_NEXT_TIMER_ANY)) >= 0) this.softirqs.raise(Softirq.Timer);
    this.sched.tick(c);
    ctx.timeline.end(TlWhat.Tick, c);
  }

  /** Recompute a base's next-expiry words. Under its lock. */
  private next(c: number, j: number): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const n = i32[this.tb(c, TB_LEN)];
    let nd = 0;
    let na = 0;
    let haveD = false;
    let haveA = false;
    for (let i = 0; i < n; i++) {
      const id = i32[this.tb(c, TB_LIST + i)];
      const e = i32[this.objects.ow(id, O_ARG)];
      if (!haveA || e - na < 0) {
        na = e;
        haveA = true;
      }
      if (i32[this.objects.ow(id, O_FLAGS)] & 1) continue;
      if (!haveD || e - nd < 0) {
        nd = e;
        haveD = true;
      }
    }
    Atomics.store(i32, ctx.cw(c, CPU_NEXT_TIMER), haveD ? nd : timerNone(j));
    Atomics.store(i32, ctx.cw(c, CPU_NEXT_TIMER_ANY), haveA ? na : timerNone(j));
  }

  /** add_timer_on(): arm `t` on `cpu` to expire at jiffy `expires`; BUG if already pending. */
  addOn(t: Timer, cpu: number, expires: number): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    this.objects.checkCpu(cpu, 'add_timer_on');
    const lock = this.locks[cpu];
    lock.lock();
    const st = this.objects.ow(t.id, O_STATE);
    if ((Atomics.load(i32, st) & ObjState.Pending) !== 0) {
      lock.unlock();
      throw new KernelBug(`add_timer_on: timer "${t.name}" is already pending (kernel: BUG_ON(timer_pending(timer)))`);
    }
    const n = i32[this.tb(cpu, TB_LEN)];
    i32[this.tb(cpu, TB_LIST + n)] = t.id;
    i32[this.tb(cpu, TB_LEN)] = n + 1;
    i32[this.objects.ow(t.id, O_ARG)] = expires | 0;
    i32[this.objects.ow(t.id, O_FLAGS)] = t.deferrable ? 1 : 0;
    Atomics.store(i32, this.objects.ow(t.id, O_CPU), cpu);
    Atomics.or(i32, st, ObjState.Pending);
    this.next(cpu, ctx.jiffies());
    lock.unlock();
  }

  /** del_timer(): detach a pending timer from whatever base holds it. True when it was pending. */
  del(t: Timer): boolean {
    const ctx = this.ctx;
    for (;;) {
      const cpu = Atomics.load(ctx.i32, this.objects.ow(t.id, O_CPU));
      if ((Atomics.load(ctx.i32, this.objects.ow(t.id, O_STATE)) & ObjState.Pending) === 0 || cpu < 0) return false;
      const lock = this.locks[cpu];
      lock.lock();
      if (Atomics.load(ctx.i32, this.objects.ow(t.id, O_CPU)) !== cpu) {
        lock.unlock();
        continue;
      }
      const pending = this.detachLocked(cpu, t.id);
      if (pending) this.next(cpu, ctx.jiffies());
      lock.unlock();
      return pending;
    }
  }

  private detachLocked(cpu: number, id: number): boolean {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const n = i32[this.tb(cpu, TB_LEN)];
    for (let i = 0; i < n; i++) {
      if (i32[this.tb(cpu, TB_LIST + i)] !== id) continue;
      i32[this.tb(cpu, TB_LIST + i)] = i32[this.tb(cpu, TB_LIST + n - 1)];
      i32[this.tb(cpu, TB_LEN)] = n - 1;
      Atomics.and(i32, this.objects.ow(id, O_STATE), ~ObjState.Pending);
      Atomics.store(i32, this.objects.ow(id, O_CPU), -1);
      return true;
    }
    return false;
  }

  /** mod_timer() on the current CPU. True when the timer was pending. */
  mod(t: Timer, expires: number): boolean {
    const was = this.del(t);
    this.addOn(t, this.ctx.cpu, expires);
    return was;
  }

  /** timer_pending(). */
  pending(t: Timer): boolean {
    return (Atomics.load(this.ctx.i32, this.objects.ow(t.id, O_STATE)) & ObjState.Pending) !== 0;
  }

  /** TIMER_SOFTIRQ on CPU `c`: detach every expired timer under the lock, then run them. */
  private run(c: number): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const j = ctx.jiffies();
    const lock = this.locks[c];
    let k = 0;
    lock.lock();
    let n = i32[this.tb(c, TB_LEN)];
    for (let i = 0; i < n; ) {
      const id = i32[this.tb(c, TB_LIST + i)];
      if (j - i32[this.objects.ow(id, O_ARG)] >= 0) {
        this.expired[k++] = id;
        i32[this.tb(c, TB_LIST + i)] = i32[this.tb(c, TB_LIST + n - 1)];
        n--;
        Atomics.and(i32, this.objects.ow(id, O_STATE), ~ObjState.Pending);
        Atomics.store(i32, this.objects.ow(id, O_CPU), -1);
      } else {
        i++;
      }
    }
    i32[this.tb(c, TB_LEN)] = n;
    this.next(c, j);
    lock.unlock();
    for (let i = 0; i < k; i++) {
      ctx.count(CpuCounter.timers_run);
      this.objects.call(this.expired[i]);
    }
  }
}

/** Timers as a kernel mechanism (src/kernel/mechanism.ts): a timer base per CPU, run by the tick. */
export const mechanism: Mechanism<Timers> = {
  name: 'timer',
  regions: (s) => ({ timerBase: { words: TIMER_BASE_WORDS * s.cpus, count: 1 } }),
  records: {
    timerBase: {
      prefix: /^TB_[A-Z_]+$/,
      size: TIMER_BASE_WORDS,
      wide: { TB_LIST: MAX_TIMERS_PER_CPU },
      extra: { lock: [0, LOCK_WORDS] },
    },
  },
  init(m) {
    const base = m.R.parts.timerBase[0];
    for (let c = 0; c < m.cpus; c++) {
      ShmLock.init(m.i32, base + c * TIMER_BASE_WORDS);
      m.i32[m.R.cpu + c * CPU_WORDS + CPU_NEXT_TIMER] = timerNone(0);
      m.i32[m.R.cpu + c * CPU_WORDS + CPU_NEXT_TIMER_ANY] = timerNone(0);
    }
  },
  build: (k) => new Timers(k.ctx, k.objects, k.softirqs, k.sched, k.lockSpins),
  hooks: (t) => ({ tick: (c) => t.tick(c) }),
  facade: (t, k) => ({
    addTimerOn(timer: Timer, cpu: number, expires: number): void {
      k.objects.checkHandle('addTimerOn', 'timer', timer);
      t.addOn(timer, cpu, expires);
    },
    modTimer(timer: Timer, expires: number): boolean {
      k.objects.checkHandle('modTimer', 'timer', timer);
      return t.mod(timer, expires);
    },
    timerPending(timer: Timer): boolean {
      k.objects.checkHandle('timerPending', 'timer', timer);
      return t.pending(timer);
    },
    delTimer(timer: Timer): boolean {
      k.objects.checkHandle('delTimer', 'timer', timer);
      return t.del(timer);
    },
  }),
  setup: (_t, k, index) => ({
    createTimer: (name, fn, o) => {
      const id = k.objects.create('timer', name, fn, index);
      return { kind: 'timer', id, name, deferrable: !!o?.deferrable } as Timer;
    },
  }),
};
