/**
 * Newidle balancing for the tasks the scheduler places (`--app-cpus`): a CPU about to run its
 * idle task pulls a runnable, not running task that may run on it from the busiest CPU, as
 * newidle_balance() (5.15; sched_balance_newidle() in 6.x) does through load_balance(CPU_NEWLY_IDLE)
 * in kernel/sched/fair.c: domains from the smallest (the LLC) up to the machine, the busiest run
 * queue of the first domain that has one with a task to spare, and detach_tasks() /
 * attach_tasks() of one task (a newly idle CPU pulls to end its idleness, one task is enough).
 *
 * Differences: busiest is the longest run queue (nr_running, not PELT load over group
 * capacity); can_migrate_task checks the allowed CPUs and that the task is not running, not
 * task_hot() (a cache-hot task is pulled too); the avg_idle < max_newidle_lb_cost cut-off, the
 * periodic and NOHZ idle balancing of idle CPUs and active balancing are not modelled; only
 * placed tasks are ever pulled (bound kthreads and unbound workers stay where they are put). A
 * pulled task is enqueued as its fair policy places a waking one.
 *
 * Context: the owner of `cpu`, in schedule(), holding no rq lock. Never allocates.
 */
import { TaskState } from '../../hw/layout.js';
import type { RunQueues } from './rq.js';
import type { TaskPlacement } from './select.js';

/**
 * Pull one task onto `cpu` if some CPU has a runnable, not running placed task allowed here.
 * Returns true when a task was moved onto `cpu`'s queue (the caller picks again).
 */
export function newidleBalance(rqs: RunQueues, placement: TaskPlacement, cpu: number): boolean {
  // Two passes: the LLC domain, then the whole machine (the NUMA domain spans every CPU here).
  for (let pass = 0; pass < 2; pass++) {
    const task = findPullable(rqs, placement, cpu, pass === 0);
    if (task < 0) continue;
    if (pull(rqs, placement, task, cpu)) return true;
  }
  return false;
}

/** A placed task queued but not running on the longest run queue (≥ 2 tasks) of the domain, or -1. */
function findPullable(rqs: RunQueues, placement: TaskPlacement, cpu: number, llcOnly: boolean): number {
  let best = -1;
  let bestLen = 1;
  const tasks = placement.placedTasks;
  for (let k = 0; k < tasks.length; k++) {
    const t = tasks[k];
    if (!placement.isAllowed(t, cpu)) continue;
    const from = rqs.taskCpu(t);
    if (from === cpu || (llcOnly && !placement.sharesCache(from, cpu))) continue;
    const len = rqs.nrRunning(from);
    if (len <= bestLen || !movable(rqs, t, from)) continue;
    best = t;
    bestLen = len;
  }
  return best;
}

/** can_migrate_task(), racy or under the lock: runnable, on `from`'s queue, not its current task. */
function movable(rqs: RunQueues, task: number, from: number): boolean {
  return (
    rqs.state(task) === TaskState.Runnable &&
    rqs.taskCpu(task) === from &&
    rqs.curr(from) !== task &&
    rqs.queued(from, task)
  );
}

/** detach_task / attach_task under both rq locks (double_rq_lock's order: lower CPU first). */
function pull(rqs: RunQueues, placement: TaskPlacement, task: number, cpu: number): boolean {
  const from = rqs.taskCpu(task);
  if (from === cpu) return false;
  const first = Math.min(from, cpu);
  const second = Math.max(from, cpu);
  rqs.lock(first);
  rqs.lock(second);
  const ok = movable(rqs, task, from) && placement.isAllowed(task, cpu);
  if (ok) {
    rqs.dequeue(from, task);
    rqs.setTaskCpu(task, cpu);
    rqs.enqueue(cpu, task);
  }
  rqs.unlock(second);
  rqs.unlock(first);
  return ok;
}
