/**
 * workqueue.c on one thread: queue_work_on's PENDING bit, PENDING cleared before the function
 * runs, and need_more_worker's rule (a bound worker is woken only when none is running; an
 * unbound pool's idle worker on every queue).
 */
import { describe, expect, it } from 'vitest';
import type { Work } from '../../src/api/types.js';
import { TaskState } from '../../src/hw/layout.js';
import { boundPool, P_NR_RUNNING } from '../../src/kernel/workqueue.js';
import { type OneThreadKernel, oneThreadKernel } from './helpers.js';

function work(k: OneThreadKernel, fn: () => void): Work {
  return { kind: 'work', id: k.rt.objects.create('work', 'w', fn, -1), name: 'w' };
}

describe('queue_work_on', () => {
  it('returns false while the work is PENDING, and queues it again once it started running', () => {
    const k = oneThreadKernel();
    const wq = k.rt.workqueues.system('system_highpri_wq');
    let pendingInside: boolean | undefined;
    let requeued: boolean | undefined;
    let runs = 0;
    const w = work(k, () => {
      runs++;
      pendingInside = k.rt.workqueues.pending(w);
      if (runs === 1) requeued = k.rt.workqueues.queueOn(0, wq, w);
    });
    expect(k.rt.workqueues.queueOn(0, wq, w)).toBe(true);
    expect(k.rt.workqueues.queueOn(0, wq, w)).toBe(false);
    expect(k.rt.workqueues.pending(w)).toBe(true);
    const c = k.mem.cpuCounters(0);
    expect(c.works_queued).toBe(1);
    expect(c.works_refused).toBe(1);
    const pool = boundPool(0, true);
    const id = k.rt.workqueues.pop(pool);
    expect(id).toBe(w.id);
    expect(k.rt.workqueues.pop(pool)).toBe(-1); // queued once
    k.rt.workqueues.run(id);
    expect(pendingInside).toBe(false); // process_one_work clears PENDING before calling
    expect(requeued).toBe(true);
    expect(k.rt.workqueues.pop(pool)).toBe(w.id);
  });

  it('wakes the bound kworker only when none of its pool is running', () => {
    const k = oneThreadKernel();
    const wq = k.rt.workqueues.system('system_wq');
    const kworker = k.mem.plan.kworker[0];
    const pool = boundPool(0, false);
    const nr = k.rt.workqueues.pw(pool, P_NR_RUNNING);
    Atomics.store(k.mem.i32, nr, 1); // a worker is awake and processing
    expect(
      k.rt.workqueues.queueOn(
        0,
        wq,
        work(k, () => {}),
      ),
    ).toBe(true);
    expect(k.rt.sched.rqs.state(kworker)).toBe(TaskState.Sleeping);
    Atomics.store(k.mem.i32, nr, 0);
    expect(
      k.rt.workqueues.queueOn(
        0,
        wq,
        work(k, () => {}),
      ),
    ).toBe(true);
    expect(k.rt.sched.rqs.state(kworker)).toBe(TaskState.Runnable);
    expect(k.mem.cpuCounters(0).wakeups).toBe(1);
  });

  // kernel/workqueue.c: unbound workers carry WORKER_UNBOUND (in WORKER_NOT_RUNNING), so an
  // unbound pool's nr_running stays 0 and every insert_work() kicks an idle worker. One worker
  // awake (say kept off its CPU by a hog) must not strand the item while others sleep.
  it('wakes an idle unbound worker on every queue, whatever workers of the pool are awake', () => {
    const k = oneThreadKernel({ cpus: 3, kthreads: 'cpu', unboundWorkers: 3 });
    const wq = k.rt.workqueues.system('system_unbound_wq');
    const pool = k.mem.plan.unboundPool;
    const workers = k.mem.plan.pools[pool].workers;
    Atomics.store(k.mem.i32, k.rt.workqueues.pw(pool, P_NR_RUNNING), 1); // one is awake somewhere
    expect(workers.map((w) => k.rt.sched.rqs.state(w))).toEqual(workers.map(() => TaskState.Sleeping));
    expect(
      k.rt.workqueues.queueOn(
        0,
        wq,
        work(k, () => {}),
      ),
    ).toBe(true);
    const woken = workers.filter((w) => k.rt.sched.rqs.state(w) !== TaskState.Sleeping);
    expect(woken.length, 'one idle unbound worker woken').toBe(1);
  });

  it('refuses a WQ_BH queue onto another CPU, leaving the work not pending', () => {
    const k = oneThreadKernel();
    const wq = k.rt.workqueues.system('system_bh_wq');
    const w = work(k, () => {});
    expect(() => k.rt.workqueues.queueOn(1, wq, w)).toThrow(/runs on the queueing CPU only/);
    expect(k.rt.workqueues.pending(w)).toBe(false);
  });
});

describe('kernel profiles', () => {
  it('refuses WQ_BH workqueues before 6.9, with a line saying what to do', () => {
    for (const kernel of ['5.15', '6.1'] as const) {
      const k = oneThreadKernel({ kernel });
      expect(() => k.rt.workqueues.system('system_bh_wq')).toThrow(
        /WQ_BH workqueues exist from Linux 6\.9 on.*--kernel 6\.9/,
      );
      expect(() => k.rt.workqueues.alloc('mine', { bh: true, highpri: true })).toThrow(/kernel is /);
    }
    expect(oneThreadKernel({ kernel: '6.9' }).rt.workqueues.system('system_bh_wq').attrs.bh).toBe(true);
  });
});
