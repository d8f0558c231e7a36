/**
 * The scheduler's shared words: a run queue per CPU and a record per task (Int32 words, then
 * doubles in the `taskF64` region). Legend as in src/hw/layout.ts (L rq lock: plain under the
 * CPU's rq lock; I: written once before workers start). Read by the run queues (rq.ts) and the
 * fair policies (cfs.ts, eevdf.ts, fair.ts).
 */
import { LINE_WORDS } from '../../shm/layout.js';
import { LOCK_WORDS } from '../../shm/lock.js';

/** Tasks a CPU's run queue can hold at once. */
export const MAX_RQ_TASKS = 32;

// ---------------------------------------------------------------------------------------------
// Run queue, per CPU: a lock line, then the queue under it.
// ---------------------------------------------------------------------------------------------
export const RQ_WORDS = LOCK_WORDS + LINE_WORDS + MAX_RQ_TASKS;
/** L rq lock (Atomics.store so the irq thread and idle checks may load it racily): tasks queued
 *  (runnable), the current one included. */
export const RQ_NR_RUNNING = LOCK_WORDS;
/** L rq lock: the task the scheduler picked last (== OWNER except during a hand-off). */
export const RQ_CURR = LOCK_WORDS + 1;
/** L rq lock: number of entries in RQ_QUEUE. */
export const RQ_LEN = LOCK_WORDS + 2;
/** L rq lock: real-time tasks are throttled until the period ends (1) or not (0). */
export const RQ_RT_THROTTLED = LOCK_WORDS + 3;
/** L rq lock: CFS's next buddy (cfs_rq->next: a woken task that preempted), task id, −1 none.
 *  Unused under EEVDF. */
export const RQ_NEXT_BUDDY = LOCK_WORDS + 4;
/** L rq lock: CFS's last buddy (cfs_rq->last: the task a wakeup preempted), task id, −1 none.
 *  Unused under EEVDF. */
export const RQ_LAST_BUDDY = LOCK_WORDS + 5;
/** L rq lock: task ids queued on this CPU (runnable, including the current one), in queue order. */
export const RQ_QUEUE = LOCK_WORDS + LINE_WORDS;

// ---------------------------------------------------------------------------------------------
// Tasks: TASK_WORDS Int32 + TASK_F64 doubles each.
// ---------------------------------------------------------------------------------------------
export const TASK_WORDS = LINE_WORDS;
/** L rq lock of TASK_CPU (Atomics.store; Atomics.load for racy checks): TaskState. */
export const T_STATE = 0;
/** L rq lock: the CPU whose run queue holds / will hold the task. Unbound workers move: the
 *  waker stores the new CPU under the new CPU's rq lock while the task sleeps. */
export const T_CPU = 1;
/** I: SchedPolicy. */
export const T_POLICY = 2;
/** I: nice, -20..19 (normal tasks). */
export const T_NICE = 3;
/** I: real-time priority 1..99 (higher runs first), 0 for normal tasks. */
export const T_RT_PRIO = 4;
/** I: load weight from the nice-to-weight table. */
export const T_WEIGHT = 5;
/** L rq lock: times the task was picked to run (slices). */
export const T_SLICES = 6;
/** L rq lock: times the task was woken. 0 until its first wakeup, which the run queues treat
 *  as the task's first enqueue (its fork: CFS places it as a new task, START_DEBIT). */
export const T_WAKEUPS = 7;
/** L rq lock: ticks at which the task was the one running (its share of the CPU, in slices). */
export const T_TICKS = 8;
/** L rq lock of T_CPU (the old CPU's while a waker moves the task, then the new one's): CFS: 1
 *  while a sleeping task's vruntime is relative to the min_vruntime of the CPU it left
 *  (migrate_task_rq_fair) until its enqueue on the new CPU adds that CPU's (ENQUEUE_MIGRATED). */
export const T_MIGRATED = 9;
/** I: 1 when update_curr() charges the task only the work it reports ({@link T_WORK_NS}: a
 *  kthread under `--kthread-charge work`, rq.ts KTHREAD_CHARGES), 0 when it charges wall time. */
export const T_CHARGE = 10;
/** Atomics (no lock): ns of work the task's thread ran and update_curr() has not yet charged.
 *  Writer: the thread running the task, Atomics.add after each work item (RunQueues.addWork);
 *  reader: update_curr() under the task's CPU's rq lock, Atomics.exchange to 0 (any thread). */
export const T_WORK_NS = 11;
/** L rq lock: 1 while the task sleeps but stays on its CPU's queue, competing until it is
 *  eligible (6.12+ DELAY_DEQUEUE, eevdf.ts; `se->sched_delayed`), 0 otherwise. Written by the
 *  CPU's owner at schedule() (set) and pick (reaped), and by a waker under the lock (requeued). */
export const T_DELAYED = 12;

export const TASK_F64 = 9;
export const TF_VRUNTIME = 0; // L rq lock: virtual runtime (ns, weighted)
export const TF_DEADLINE = 1; // L rq lock: EEVDF virtual deadline (unused under CFS)
export const TF_VLAG = 2; // L rq lock: EEVDF lag saved at dequeue (unused under CFS)
export const TF_EXEC_START = 3; // L rq lock: clock when it last started running / was accounted
export const TF_SUM_EXEC = 4; // L rq lock: total runtime (ns)
export const TF_RR_LEFT = 5; // L rq lock: round-robin time left in the slice (ns)
export const TF_PREV_SUM_EXEC = 6; // L rq lock: CFS prev_sum_exec_runtime: TF_SUM_EXEC when last picked
export const TF_VPROT = 7; // L rq lock: EEVDF 6.17+ se->vprot: the vruntime up to which a picked task is protected (set_protect_slice)
/** L rq lock: the clock of the wake-up that queued the sleeping task (try_to_wake_up), 0 once it
 *  ran since. Writer: the waker, in RunQueues.wakeLocked; reader: the CPU's owner when the task's
 *  thread takes the CPU (switchedIn), which clears it and records wakeup_to_run. */
export const TF_WOKEN_AT = 8;
