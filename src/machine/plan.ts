/**
 * Who runs where: the tasks, threads and worker pools of a machine, derived from its options.
 *
 * Task ids:   0..N-1         idle task of CPU c (hosted on CPU c's thread)
 *             then           the workload's tasks (hosted on their CPU's thread)
 *             then per CPU   kworker/c:0 (system_wq pool), kworker/c:0H (highpri pool), ksoftirqd/c
 *             then           unbound workers kworker/uN:i
 * Thread ids: 0..N-1         CPU threads (workers/cpu); with `kthreads: 'cpu'` they also host
 *                            their CPU's kworkers and ksoftirqd, and unbound worker i on CPU i mod N
 *             then           one thread per other kthread task and hog (workers/kthread)
 *             last           the irq thread (workers/irq)
 * Pool ids:   per CPU c      2c = bound normal, 2c+1 = bound highpri
 *             2N             the unbound pool
 *             2N+1+2c (+1)   BH pools of CPU c (normal, highpri): run in softirq, no workers
 * The plan is plain JSON, computed once by the main thread and posted to every worker; its types
 * are the board's (src/hw/board.ts), the pool numbering the workqueue's (src/kernel/workqueue.ts).
 */

import type { MachinePlan as BoardPlan, TaskPlan as BoardTask, PoolPlan, ThreadPlan } from '../hw/board.js';
import { SchedPolicy } from '../hw/layout.js';
import { bhPool, boundPool } from '../kernel/workqueue.js';
import { workloadOf } from '../workloads/index.js';
import { type AppTaskSpec, DEFAULT_HOGS, DEFAULT_KTHREADS, type MachineOptions } from './options.js';

export type { PoolPlan, TaskKind, ThreadPlan } from '../hw/board.js';
/** The board of a machine whose application tasks are the workloads' (AppTaskSpec). */
export type MachinePlan = BoardPlan<AppTaskSpec>;
export type TaskPlan = BoardTask<AppTaskSpec>;

export function planMachineTasks(o: MachineOptions): MachinePlan {
  const n = o.cpus;
  const tasks: TaskPlan[] = [];
  const threads: ThreadPlan[] = [];
  for (let c = 0; c < n; c++) threads.push({ id: c, name: `cpu${c}`, kind: 'cpu', cpu: c, tasks: [] });
  const add = (
    t: Omit<TaskPlan, 'id' | 'thread' | 'startsOnPhase'> & { startsOnPhase?: boolean },
    thread: number,
  ): TaskPlan => {
    const task: TaskPlan = { startsOnPhase: false, ...t, id: tasks.length, thread };
    tasks.push(task);
    threads[thread].tasks.push(task.id);
    return task;
  };
  const kthread = (t: Omit<TaskPlan, 'id' | 'thread' | 'startsOnPhase'> & { startsOnPhase?: boolean }): TaskPlan => {
    const th: ThreadPlan = { id: threads.length, name: t.name, kind: 'kthread', cpu: t.cpu, tasks: [] };
    threads.push(th);
    return add(t, th.id);
  };
  const base = { pool: -1, poolSlot: -1, rtPrio: 0, nice: 0, bound: true } as const;
  const hogTasks: Omit<TaskPlan, 'id' | 'thread'>[] = [];
  for (let c = 0; c < n; c++) add({ ...base, name: `swapper/${c}`, kind: 'idle', cpu: c, policy: SchedPolicy.Idle }, c);
  for (const app of workloadOf(o).tasks()) {
    const policy =
      app.kind === 'hog' && app.policy === 'fifo'
        ? SchedPolicy.Fifo
        : app.kind === 'hog' && app.policy === 'rr'
          ? SchedPolicy.RoundRobin
          : SchedPolicy.Normal;
    const nice = app.kind === 'hog' || app.kind === 'spinner' ? app.nice : 0;
    const rtPrio = app.kind === 'hog' && policy !== SchedPolicy.Normal ? app.rtPrio : 0;
    const spec = {
      ...base,
      name: `${app.kind}/${app.cpu}`,
      kind: 'app' as const,
      cpu: app.cpu,
      policy,
      nice,
      rtPrio,
      app,
      startsOnPhase: app.kind !== 'tcp_server',
    };
    // A hog is a process of its own (`stress --cpu`). With `hogs: 'cpu'` (the default) it lives
    // on its CPU's thread, as qperf's client and server do: taking the CPU from it costs a
    // same-CPU switch. With `hogs: 'thread'` it is a thread of its own, and losing the CPU to it
    // or taking the CPU from it is a host hand-off (options.ts, HOG_HOSTINGS: why the default).
    if (app.kind === 'hog' || app.kind === 'spinner') {
      if ((o.hogs ?? DEFAULT_HOGS) === 'cpu') add(spec, app.cpu);
      else hogTasks.push(spec);
    }
    // A task the scheduler places (--app-cpus) runs wherever it is put: a thread of its own, as
    // an unbound worker is, starting on the CPU its fork placement gave it.
    else if ((app.kind === 'tcp_client' || app.kind === 'tcp_server') && app.allowed)
      kthread({ ...spec, bound: false, allowed: [...app.allowed] });
    else add(spec, app.cpu);
  }
  for (const spec of hogTasks) kthread(spec);
  const pools: PoolPlan[] = [];
  for (let c = 0; c < n; c++) {
    pools.push({ id: boundPool(c, false), kind: 'bound', cpu: c, highpri: false, workers: [] });
    pools.push({ id: boundPool(c, true), kind: 'bound', cpu: c, highpri: true, workers: [] });
  }
  const unboundPool = pools.length;
  pools.push({ id: unboundPool, kind: 'unbound', cpu: -1, highpri: false, workers: [] });
  for (let c = 0; c < n; c++) {
    pools.push({ id: bhPool(n, c, false), kind: 'bh', cpu: c, highpri: false, workers: [] });
    pools.push({ id: bhPool(n, c, true), kind: 'bh', cpu: c, highpri: true, workers: [] });
  }
  const kworker: number[] = [];
  const kworkerHi: number[] = [];
  const ksoftirqd: number[] = [];
  // A bound kthread is a thread of its own (`kthreads: 'thread'`: a switch into it is a host
  // futex wake) or hosted on its CPU's thread (`'cpu'`: a same-thread switch, kernel-scale).
  const bound = (t: Omit<TaskPlan, 'id' | 'thread' | 'startsOnPhase'>): TaskPlan =>
    (o.kthreads ?? DEFAULT_KTHREADS) === 'cpu' ? add(t, t.cpu) : kthread(t);
  for (let c = 0; c < n; c++) {
    const w = bound({
      ...base,
      name: `kworker/${c}:0`,
      kind: 'kworker',
      cpu: c,
      policy: SchedPolicy.Normal,
      pool: boundPool(c, false),
      poolSlot: 0,
    });
    const h = bound({
      ...base,
      name: `kworker/${c}:0H`,
      kind: 'kworker',
      cpu: c,
      policy: SchedPolicy.Normal,
      nice: -20,
      pool: boundPool(c, true),
      poolSlot: 0,
    });
    const s = bound({ ...base, name: `ksoftirqd/${c}`, kind: 'ksoftirqd', cpu: c, policy: SchedPolicy.Normal });
    pools[boundPool(c, false)].workers.push(w.id);
    pools[boundPool(c, true)].workers.push(h.id);
    kworker.push(w.id);
    kworkerHi.push(h.id);
    ksoftirqd.push(s.id);
  }
  // Unbound workers. With `kthreads: 'thread'` each is a thread of its own that the waker places
  // on a CPU (wakeUpOn moves a sleeping one): waking it onto an idle CPU is two host wake-ups in
  // series, the CPU's thread (the IPI) and then the worker's (the switch). With `kthreads: 'cpu'`
  // (the default) worker i is hosted on CPU i mod N's thread and stays there, as a bound kthread
  // does: the waker picks the CPU (kickUnbound, placeUnbound) and wakes a worker hosted on it,
  // one host wake-up and a same-thread switch, as the kernel switches on the woken CPU itself.
  // Nothing modelled is lost: an unbound worker is never migrated once woken (newidle.ts pulls
  // placed tasks only), and a work item still waits on the pool's one worklist for any worker.
  const hostedUnbound = (o.kthreads ?? DEFAULT_KTHREADS) === 'cpu';
  for (let i = 0; i < o.unboundWorkers; i++) {
    const u = {
      ...base,
      bound: hostedUnbound,
      name: `kworker/u${n}:${i}`,
      kind: 'unbound' as const,
      cpu: i % n,
      policy: SchedPolicy.Normal,
      pool: unboundPool,
      poolSlot: i,
    };
    pools[unboundPool].workers.push((hostedUnbound ? add(u, u.cpu) : kthread(u)).id);
  }
  const irqThread = threads.length;
  threads.push({ id: irqThread, name: 'irq', kind: 'irq', cpu: -1, tasks: [] });
  return { cpus: n, tasks, threads, pools, irqThread, kworker, kworkerHi, ksoftirqd, unboundPool };
}
