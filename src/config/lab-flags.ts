/**
 * The flags of how the lab runs and reads itself: host stalls and steal (src/machine/host-stall.ts),
 * time dilation (src/harness/tdf.ts) and --explain (src/report/explain/): rows of CONFIG_FLAGS
 * (flags.ts), kept here so the table's file stays small; they appear last in --help.
 */

export const LAB_FLAGS = [
  {
    flag: '--host-stalls',
    path: 'hostStalls',
    value: 'MODE',
    example: 'mark',
    help: "what the latency distribution does with tcp_lat exchanges and driver requests that overlapped a host stall (a CPU's thread held by the host or by V8's GC) on a CPU they involve: keep them, mark them (also reported as one_way_host / request_to_start_host), or drop them (reported only there); their count is always printed",
    accepts: 'keep, mark, drop',
    default: 'keep',
  },
  {
    flag: '--host-steal',
    path: 'hostSteal',
    sets: true,
    help: "leave the host's run delay over a host stall out of the running task's run time and vruntime, as update_rq_clock_task() leaves paravirt steal out of clock_task (by default it is charged to the task: docs/twin.md says why)",
    accepts: '',
    default: 'charged to the running task',
  },
  {
    flag: '--kthread-charge',
    path: 'kthreadCharge',
    value: 'MODE',
    example: 'wall',
    help: "what the scheduler charges a kthread (kworker, unbound worker, ksoftirqd) for: work, only the time its deferred job or softirq pass ran (a model: the lab's own switch and worker loop cost 50-80 µs a run where the kernel's cost ~2 µs, and beside a nice -20 task every µs charged costs 87 µs of waiting; docs/twin.md); wall, every µs its thread held the CPU",
    accepts: 'work, wall',
    default: 'work',
  },
  {
    flag: '--host-helpers',
    path: 'hostHelpers',
    value: 'MODE',
    example: 'leave',
    help: "what the run does with its process's threads that are not the emulated machine's (V8's compiler and GC helpers, libuv's pool): nice sets them to nice 10 once a machine is up, so that an emulated CPU's thread woken on a host core one of them holds gets it at once (with 2 host cores for 2 CPUs they held it for up to a host slice: bench:twin's (c) p99 1.6-2.3 ms with them at nice 0, 0.2-1.5 ms at 19; docs/twin.md), and V8's optimising compiler, which runs on them, still keeps up (at 19 it starved and left the emulated kernel unoptimised); idle puts them under SCHED_IDLE (util-linux's chrt; nice 10 without it), which the host preempts at once for a woken machine thread where a nice-10 helper keeps the core through its protected slice, but which starves the compiler when the machine's threads fill every host core: for machines whose CPUs halt, as the cpu-hog scenario's, which chooses it; leave keeps them at the process's nice. It cannot be undone in the same process without privilege",
    accepts: 'nice, idle, leave',
    default: 'nice (cpu-hog: idle)',
  },
  {
    flag: '--tdf',
    path: 'tdf',
    value: 'N|auto',
    example: '4',
    help: "time dilation factor: the emulated machine's clock runs at host time / N, so its JavaScript kernel appears N times faster against its wire, ticks and interrupt moderation (docs/architecture.md, Time dilation); trials, warm-ups and --duration are emulated time, so a run takes about N times as long; auto: the median lab/reference cost ratio of the operations measured at start-up, at most 8",
    accepts: '1..16 (fractions allowed), or auto',
    default: '1 (no dilation)',
  },
  {
    flag: '--switch-cost',
    path: 'switchCost',
    value: 'host|off|NS',
    example: 'off',
    help: "the least an emulated context switch lasts (a model): the lab's own switch between two tasks on one CPU's thread is a function call, 0.4-0.5x a kernel's, and time dilation cannot raise it; host: this host's kernel switch, measured at start-up (a futex ping-pong on one CPU minus its system calls, lmbench's lat_ctx method; compiled once with cc, no charge where there is none), and every switch the lab did faster is spun out to it; off: the lab's own switch; NS: a given floor in emulated ns (docs/scale.md)",
    accepts: 'host, off, or 0..100000 (ns)',
    default: 'host',
  },
  {
    flag: '--explain',
    path: 'explain',
    sets: true,
    help: "explain each tcp_lat exchange's latency (and each hand-off's wait) by cause along its critical path: wire, NIC moderation, hard IRQ, NET_RX, waiting for ksoftirqd, behind a named task, the deferred work, lock wait, copy, host stall, GC; the table ends with each strategy's median and slowest 1% split so, and the Δ to the baseline's; results.json and report.html carry it, `deferlab explain DIR` prints it again. It turns the timeline recorder on (read after every slice), which costs each event a few stores",
    accepts: '',
    default: 'off',
  },
] as const;
