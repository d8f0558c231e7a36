/**
 * The scheduler on hand-made run queues (one thread, fake times): EEVDF's pick and wakeup
 * preemption by lag, and the RT class over the fair class.
 */
import { describe, expect, it } from 'vitest';
import { SchedPolicy, TaskState } from '../../src/hw/layout.js';
import { T_STATE, TF_VLAG } from '../../src/kernel/sched/rq.js';
import { cpu0Queue, oneThreadKernel } from './helpers.js';

const setup = () => cpu0Queue();

describe('EEVDF wakeup preemption', () => {
  it('a task woken on an idle CPU preempts the idle task and is picked', () => {
    const { run, schedule, a } = setup();
    expect(run(a)).toBe(2);
    expect(schedule(0)).toBe(a);
  });

  it('a woken task owed time (positive lag) preempts; one that over-ran (negative lag) does not', () => {
    const { rqs, run, schedule, a, b, c, f64 } = setup();
    run(a);
    expect(schedule(0)).toBe(a);
    rqs.initTask(b, 0, SchedPolicy.Normal, 0, 0);
    f64[rqs.tf(b, TF_VLAG)] = 3_000_000; // slept owed 3 ms of service
    rqs.lock(0);
    expect(rqs.wakeLocked(0, b, 1_000_000)).toBe(2);
    rqs.unlock(0);
    rqs.initTask(c, 0, SchedPolicy.Normal, 0, 0);
    f64[rqs.tf(c, TF_VLAG)] = -3_000_000; // had run 3 ms ahead of its share
    rqs.lock(0);
    expect(rqs.wakeLocked(0, c, 1_000_000)).toBe(1);
    rqs.unlock(0);
    expect(schedule(1_000_000)).toBe(b);
  });

  it('waking a runnable task is a no-op', () => {
    const { rqs, run, a } = setup();
    run(a);
    expect(rqs.state(a)).toBe(TaskState.Runnable);
    rqs.lock(0);
    expect(rqs.wakeLocked(0, a, 0)).toBe(0);
    rqs.unlock(0);
  });
});

describe('classes', () => {
  it('an RT task preempts a normal one; a normal task never preempts an RT one', () => {
    const { run, schedule, a, b, c } = setup();
    run(a);
    expect(schedule(0)).toBe(a);
    expect(run(b, SchedPolicy.Fifo, 0, 50)).toBe(2);
    expect(schedule(10)).toBe(b);
    expect(run(c)).toBe(1);
    expect(schedule(20)).toBe(b);
  });

  it('picks the highest RT priority first', () => {
    const { run, schedule, a, b } = setup();
    run(a, SchedPolicy.Fifo, 0, 10);
    run(b, SchedPolicy.Fifo, 0, 60);
    expect(schedule(0)).toBe(b);
  });
});

describe('kernel profiles select the scheduler', () => {
  it('5.15 and 6.1 run CFS, 6.9 EEVDF', () => {
    expect(oneThreadKernel({ kernel: '5.15' }).rt.sched.rqs.fair.name).toBe('cfs');
    expect(oneThreadKernel({ kernel: '6.1' }).rt.sched.rqs.fair.name).toBe('cfs');
    expect(oneThreadKernel({ kernel: '6.9' }).rt.sched.rqs.fair.name).toBe('eevdf');
  });
});

describe('loadWeight (where a waking unbound worker goes when no CPU is idle)', () => {
  it('weighs a nice -20 hog far above a nice 0 kworker, and a real-time task above both', () => {
    const k = oneThreadKernel();
    const rqs = k.rt.sched.rqs;
    const [a, b, c] = [k.mem.plan.kworker[0], k.mem.plan.kworker[1], k.mem.plan.ksoftirqd[1]];
    const put = (task: number, cpu: number, policy: SchedPolicy, nice: number, rtPrio = 0) => {
      rqs.initTask(task, cpu, policy, nice, rtPrio);
      rqs.lock(cpu);
      rqs.wakeLocked(cpu, task, 0);
      rqs.unlock(cpu);
    };
    put(a, 0, SchedPolicy.Normal, -20);
    put(b, 1, SchedPolicy.Normal, 0);
    expect(rqs.nrRunning(0)).toBe(rqs.nrRunning(1)); // one task each: a count ties them
    expect(rqs.loadWeight(0)).toBeGreaterThan(50 * rqs.loadWeight(1));
    put(c, 1, SchedPolicy.Fifo, 0, 10);
    expect(rqs.loadWeight(1)).toBeGreaterThan(rqs.loadWeight(0));
  });
});

// wakeup_to_run (runqlat's run-queue latency): the waker stamps TF_WOKEN_AT in try_to_wake_up,
// and the woken task's first switch-in reads and clears it. Only a wake-up that queued the task
// counts: a preempted task resumed, or one woken before it left the CPU, records nothing.
describe('wakeup_to_run', () => {
  const switchedIn = (q: ReturnType<typeof setup>, task: number, now: number) => {
    q.rqs.lock(0);
    try {
      return q.rqs.switchedIn(0, task, now);
    } finally {
      q.rqs.unlock(0);
    }
  };

  it('is the time from the wake-up that queued the task to its first run, once', () => {
    const q = setup();
    q.run(q.a, SchedPolicy.Normal, 0, 0, 1_000);
    expect(q.pick(1_200)).toBe(q.a);
    expect(switchedIn(q, q.a, 1_700)).toBe(700);
    expect(switchedIn(q, q.a, 1_900), 'read once').toBe(-1);
  });

  it('records nothing for a preempted task resumed, nor for one woken before it left the CPU', () => {
    const q = setup();
    q.run(q.a, SchedPolicy.Normal, 0, 0, 0);
    expect(q.schedule(0)).toBe(q.a); // a runs (its wake-up read here)
    // An RT task preempts a; a stays runnable and later resumes: no wake-up in between.
    expect(q.run(q.b, SchedPolicy.Fifo, 0, 10, 1_000)).toBe(2);
    expect(q.schedule(1_000)).toBe(q.b);
    Atomics.store(q.k.mem.i32, q.rqs.tw(q.b, T_STATE), TaskState.Sleeping); // b goes to sleep...
    expect(q.pick(2_000)).toBe(q.a);
    expect(switchedIn(q, q.a, 2_500), 'a was preempted, not woken').toBe(-1);
    // a marks itself sleeping but is still current and queued when a wake-up comes: it just keeps running.
    Atomics.store(q.k.mem.i32, q.rqs.tw(q.a, T_STATE), TaskState.Sleeping);
    q.rqs.lock(0);
    expect(q.rqs.wakeLocked(0, q.a, 3_000)).toBe(1);
    q.rqs.unlock(0);
    expect(switchedIn(q, q.a, 3_500)).toBe(-1);
  });
});
