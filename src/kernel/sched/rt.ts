/**
 * The real-time class (kernel/sched/rt.c), the part the run queues need: SCHED_RR's time slice,
 * RT throttling (sched_rt_period_us / sched_rt_runtime_us) and the pick of the highest-priority
 * runnable RT task. The queue's words (RQ_*, CPUF_RT_*) are declared, with who writes and reads
 * them, in ./layout.ts and src/hw/layout.ts; everything here runs under the CPU's rq lock
 * (RunQueues, ./rq.ts), so plain loads and stores.
 */
import { CPUF_RT_PERIOD, CPUF_RT_TIME, CPUF_RT_UNTHROTTLE, SchedPolicy } from '../../hw/layout.js';
import type { RqView } from './fair.js';
import { RQ_LEN, RQ_QUEUE, RQ_RT_THROTTLED, T_POLICY, T_RT_PRIO } from './layout.js';

/** RR_TIMESLICE: 100 ms (include/linux/sched/rt.h, `#define RR_TIMESLICE (100 * HZ / 1000)` jiffies). */
export const RR_TIMESLICE_NS = 100_000_000;
/**
 * sched_rt_period_us / sched_rt_runtime_us, the defaults 1000000 / 950000
 * (Documentation/scheduler/sched-rt-group.rst): RT tasks get at most 95% of each second.
 */
export const RT_PERIOD_NS = 1_000_000_000;
export const RT_RUNTIME_NS = 950_000_000;

/** RT throttling bookkeeping at a tick on `cpu`: true when the throttle state changed. Under the rq lock. */
export function rtPeriod(q: RqView, cpu: number, now: number): boolean {
  const f64 = q.v.f64;
  const i32 = q.v.i32;
  const b = q.rq(cpu);
  let changed = false;
  if (now - f64[q.cf(cpu, CPUF_RT_PERIOD)] >= RT_PERIOD_NS) {
    f64[q.cf(cpu, CPUF_RT_PERIOD)] = now;
    f64[q.cf(cpu, CPUF_RT_TIME)] = 0;
    if (i32[b + RQ_RT_THROTTLED]) changed = true;
    i32[b + RQ_RT_THROTTLED] = 0;
    f64[q.cf(cpu, CPUF_RT_UNTHROTTLE)] = Number.POSITIVE_INFINITY;
  } else if (!i32[b + RQ_RT_THROTTLED] && f64[q.cf(cpu, CPUF_RT_TIME)] > RT_RUNTIME_NS) {
    i32[b + RQ_RT_THROTTLED] = 1;
    // The period timer's expiry: the irq thread ticks this CPU then even when idle (layout.ts).
    f64[q.cf(cpu, CPUF_RT_UNTHROTTLE)] = f64[q.cf(cpu, CPUF_RT_PERIOD)] + RT_PERIOD_NS;
    changed = true;
  }
  return changed;
}

/** Highest-priority runnable RT task on `cpu` (first in queue order among equals), or -1. Under the rq lock. */
export function pickRt(q: RqView, cpu: number): number {
  const i32 = q.v.i32;
  const b = q.rq(cpu);
  if (i32[b + RQ_RT_THROTTLED]) return -1;
  const n = i32[b + RQ_LEN];
  let best = -1;
  let bestPrio = 0;
  for (let i = 0; i < n; i++) {
    const t = i32[b + RQ_QUEUE + i];
    const pol = i32[q.tw(t, T_POLICY)];
    if (pol !== SchedPolicy.Fifo && pol !== SchedPolicy.RoundRobin) continue;
    const p = i32[q.tw(t, T_RT_PRIO)];
    if (p > bestPrio) {
      bestPrio = p;
      best = t;
    }
  }
  return best;
}
