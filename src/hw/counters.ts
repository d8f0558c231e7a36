/**
 * The machine's counters, as shared-memory words: their names (in report order) and indices.
 * Per-CPU counters live in each CPU's block (layout.ts, CPU_COUNTERS); global ones in their own
 * region (layout.ts, globalCounters). Re-exported by layout.ts.
 */
import { LINE_WORDS } from '../shm/layout.js';

/** Per-CPU counters (S, written by whichever thread owns the CPU). Names appear in reports. */
export const CPU_COUNTER_NAMES = [
  'interrupts', // device interrupts handled (each ran add_interrupt_randomness)
  'ipis_received', // IPI records handled (irq_work)
  'irq_entries', // hard-IRQ entries (batches of records)
  'ticks', // ticks processed
  'handoffs', // hand-offs the strategy accepted
  'handoffs_refused', // hand-offs the strategy refused (already pending)
  'mixes', // deferred mixes run (mix_interrupt_randomness) on this CPU
  'mixes_duplicate', // runs with no pending hand-off (a strategy ran the work twice)
  'mixes_remote', // mixes that ran on a CPU other than the fast pool's (random.c skips them)
  'mixes_hardirq', // mixes run in hardirq context
  'mixes_softirq', // mixes run in softirq context
  'mixes_task', // mixes run in task context (a kthread)
  'handoffs_while_pending_accepted', // (conformance) a second hand-off while pending returned true
  'works_run', // work items executed by workers running on this CPU
  'works_queued', // queue_work_on calls that queued (PENDING was clear)
  'works_refused', // queue_work_on calls refused (PENDING was set)
  'tasklets_run',
  'timers_run', // timer callbacks run
  'irq_works_run',
  'softirq_runs', // __do_softirq invocations
  'softirq_restarts', // extra passes over pending softirqs inside one invocation
  'ksoftirqd_wakeups', // budget exhausted: rest handed to ksoftirqd/n
  'ctx_switches', // owner changes on this CPU
  'wakeups', // wake_up_process calls that made a task runnable (issued from this CPU)
  'wakeup_preemptions', // wakeups that set NEED_RESCHED on the target
  'ipis_sent', // IPIs (irq_work) sent from this CPU
  'net_rx_packets', // packets (data and ACKs) NAPI took off this CPU's NIC
  'bh_works_run', // WQ_BH items run in softirq context
  'nohz_kicks', // idle CPU woken for a timer
  'handoffs_lost', // hand-offs refused while nothing was pending: the job is lost (random.c's pool stays in flight)
  'kthread_switches', // context switches into a kthread (kworker, unbound worker, ksoftirqd)
  'idle_polls', // idle periods that polled (idle=poll, or haltpoll's poll state)
  'idle_poll_hits', // polls that ended with work found (no halt, no futex wake)
  'idle_halts', // idle periods that halted (slept in Atomics.wait)
  'softirqs_left_to_ksoftirqd', // irq_exit / local_bh_enable left pending softirqs to a runnable ksoftirqd (5.15, 6.1)
  'nic_irqs', // NIC hard interrupts (RX and send-completion vectors; each ran add_interrupt_randomness)
  'nic_tx_packets', // packets this CPU put on the wire (data and ACKs)
  'nic_tx_completions', // send completions NAPI freed
  'napi_polls', // NAPI poll calls
  'napi_full_weight', // polls that used their whole weight (stay on the list: a re-raise)
  'net_time_squeeze', // net_rx_action stopped by netdev_budget or its 2 jiffies (sd->time_squeeze)
  'net_rx_reraises', // net_rx_action left NAPIs on the list and raised NET_RX again
  'tcp_acks_sent', // ACKs sent by NET_RX (every second full segment)
  'net_csum_errors', // packets whose software checksum did not match (must stay 0)
  'handoffs_app_busy', // hand-offs accepted while an application task was running or runnable on this CPU
  'handoffs_app_idle', // hand-offs accepted while no application task was runnable on this CPU
  'deferred_us_app_waiting', // µs of deferred work run on this CPU while an application task here was runnable
  'requests_slow', // driver payload: requests that waited longer than its slowNs (1 ms) until their work started
  'requests_untimed', // driver payload: requests that found the work pending when the request ring was full (not in request_to_start)
  'softirq_restarts_cut_resched', // __do_softirq stopped restarting with softirqs pending because need_resched() was set (time and passes left)
  'softirq_restarts_cut_budget', // __do_softirq stopped restarting with softirqs pending because MAX_SOFTIRQ_TIME or MAX_SOFTIRQ_RESTART ran out
  'net_rx_left_to_ksoftirqd', // irq exit / local_bh_enable found NET_RX pending and left it to a runnable ksoftirqd (the 5.15 rule)
  'gro_merged', // data segments GRO merged into a held skb of their flow (TCP's receive ran once for the skb: src/net/gro.ts)
  'tcp_backlog', // skbs NET_RX put on a socket's backlog because the reader owned the socket (tcp_add_backlog: src/net/sock.ts)
  'tcp_backlog_runs', // backlogs a reader processed in its own context (__sk_flush_backlog / release_sock), on the reader's CPU
  'mixes_trylock_skipped', // inline_trylock: mixes skipped because input_pool.lock was held (counted in mixes too; the pool retries at the next interrupt)
  'host_stalls', // gaps between two preemption points of this CPU's running thread above the threshold (src/machine/host-stall.ts)
  'host_stall_us', // µs in those gaps
  'host_stalls_preempted', // stalls over which the thread's involuntary context switches grew (/proc/thread-self/status)
  'host_steal_us', // µs of the thread's host run delay over stalls (at most each gap): steal, left out of the running task's time with --host-steal
  'gc_pauses', // V8 garbage collections on the threads homed on this CPU (v8.GCProfiler)
  'gc_us', // µs in those collections
  'samples_host_stalled', // tcp_lat exchanges (client's CPU) and driver-payload requests (serving CPU) that overlapped a host stall on a CPU they involve
  'wakeup_migrations', // wakeups that placed a task (--app-cpus) on another CPU than it last ran on (select.ts)
  'newidle_pulls', // runnable placed tasks a CPU going idle pulled from a busier one (newidle.ts)
] as const;
export type CpuCounterName = (typeof CPU_COUNTER_NAMES)[number];
export const CpuCounter = Object.fromEntries(CPU_COUNTER_NAMES.map((n, i) => [n, i])) as Record<CpuCounterName, number>;
if (CPU_COUNTER_NAMES.length > 5 * LINE_WORDS) throw new Error('too many per-CPU counters for their lines');

// ---------------------------------------------------------------------------------------------
// Global counters: R (Atomics.add by any thread).
// ---------------------------------------------------------------------------------------------
export const GLOBAL_COUNTER_NAMES = [
  'irqs_raised', // device interrupts the irq thread published (NIC interrupts: nic_irqs)
  'irqs_dropped', // raises refused by a full IRQ ring
  'irqs_skipped', // device interrupts the generator skipped because it fell > 10 ms behind
  'ipis_dropped',
  'deferred_pending_at_stop',
  'app_messages', // tcp_lat messages sent
  'items_produced', // cross_cpu items queued
  'items_consumed', // cross_cpu items drained
  'items_refused', // cross_cpu pushes refused by a full ring (the producer retries later)
  'net_events_dropped', // send completions or ACKs not recorded because their NIC ring was full (src/net/)
  'irqs_replayed', // device interrupts published from an --irq-trace replay (counted in irqs_raised too)
] as const;
export type GlobalCounterName = (typeof GLOBAL_COUNTER_NAMES)[number];
export const GlobalCounter = Object.fromEntries(GLOBAL_COUNTER_NAMES.map((n, i) => [n, i])) as Record<
  GlobalCounterName,
  number
>;
