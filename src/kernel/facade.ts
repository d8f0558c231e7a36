/**
 * What a strategy sees of the kernel: the `Kernel` facade at run time and the `StrategySetup`
 * it gets in setup() (src/api/types.ts, docs/strategies.md). The built-in strategies use
 * nothing else: there is no back door.
 *
 * Every call checks its handles (objects.ts) before it reaches a subsystem, so a strategy that
 * passes the wrong thing gets a message naming the call, not an internal error.
 */
import type {
  CpuView,
  Deferred,
  IrqWork,
  Kernel,
  StrategySetup,
  SystemWorkqueue,
  Tasklet,
  Timer,
  Work,
  Workqueue,
} from '../api/types.js';
import { WORK_CPU_UNBOUND } from '../api/types.js';
import type { ContextName, CpuContext } from './context.js';
import type { IrqWorks } from './irq_work.js';
import { KernelBug, type Objects } from './objects.js';
import type { Scheduler } from './sched/core.js';
import type { Softirqs } from './softirq.js';
import type { Tasklets } from './tasklet.js';
import type { Timers } from './timer.js';
import type { Workqueues } from './workqueue.js';

/** The subsystems a facade forwards to. */
export interface KernelParts {
  readonly ctx: CpuContext;
  readonly objects: Objects;
  readonly sched: Scheduler;
  readonly softirqs: Softirqs;
  readonly tasklets: Tasklets;
  readonly timers: Timers;
  readonly workqueues: Workqueues;
  readonly irqWorks: IrqWorks;
  /** Interrupt records waiting in CPU `cpu`'s IRQ ring (racy). */
  irqBacklog(cpu: number): number;
}

/** The read-only kernel facade strategies see: the API, no internals. */
export class KernelFacade implements Kernel {
  readonly #k: KernelParts;
  constructor(k: KernelParts) {
    this.#k = k;
  }
  get cpu(): number {
    return this.#k.ctx.cpu;
  }
  get nrCpus(): number {
    return this.#k.ctx.nrCpus;
  }
  get context(): ContextName {
    return this.#k.ctx.contextName();
  }
  get jiffies(): number {
    return this.#k.ctx.jiffies();
  }
  get hz(): number {
    return this.#k.ctx.hz;
  }
  nowNs(): number {
    return this.#k.ctx.now();
  }
  cpuView(cpu: number): CpuView {
    const k = this.#k;
    if (!Number.isInteger(cpu) || cpu < 0 || cpu >= k.ctx.nrCpus) throw new Error(`cpuView: CPU ${cpu} does not exist`);
    return {
      idle: k.sched.isIdle(cpu),
      nrRunning: k.sched.rqs.nrRunning(cpu),
      softirqPending: k.softirqs.pending(cpu),
      irqBacklog: k.irqBacklog(cpu),
    };
  }
  queueWorkOn(cpu: number, wq: Workqueue, work: Work): boolean {
    this.#k.workqueues.check('queueWorkOn', wq);
    this.#k.objects.checkHandle('queueWorkOn', 'work', work);
    return this.#k.workqueues.queueOn(cpu, wq, work);
  }
  queueWork(wq: Workqueue, work: Work): boolean {
    this.#k.workqueues.check('queueWork', wq);
    this.#k.objects.checkHandle('queueWork', 'work', work);
    return this.#k.workqueues.queueOn(WORK_CPU_UNBOUND, wq, work);
  }
  workPending(work: Work): boolean {
    this.#k.objects.checkHandle('workPending', 'work', work);
    return this.#k.workqueues.pending(work);
  }
  taskletSchedule(t: Tasklet): boolean {
    this.#k.objects.checkHandle('taskletSchedule', 'tasklet', t);
    return this.#k.tasklets.schedule(t, false);
  }
  taskletHiSchedule(t: Tasklet): boolean {
    this.#k.objects.checkHandle('taskletHiSchedule', 'tasklet', t);
    return this.#k.tasklets.schedule(t, true);
  }
  addTimerOn(timer: Timer, cpu: number, expires: number): void {
    this.#k.objects.checkHandle('addTimerOn', 'timer', timer);
    this.#k.timers.addOn(timer, cpu, expires);
  }
  modTimer(timer: Timer, expires: number): boolean {
    this.#k.objects.checkHandle('modTimer', 'timer', timer);
    return this.#k.timers.mod(timer, expires);
  }
  timerPending(timer: Timer): boolean {
    this.#k.objects.checkHandle('timerPending', 'timer', timer);
    return this.#k.timers.pending(timer);
  }
  delTimer(timer: Timer): boolean {
    this.#k.objects.checkHandle('delTimer', 'timer', timer);
    return this.#k.timers.del(timer);
  }
  irqWorkQueue(iw: IrqWork): boolean {
    this.#k.objects.checkHandle('irqWorkQueue', 'irq_work', iw);
    return this.#k.irqWorks.queueOn(iw, this.#k.ctx.cpu);
  }
  irqWorkQueueOn(iw: IrqWork, cpu: number): boolean {
    this.#k.objects.checkHandle('irqWorkQueueOn', 'irq_work', iw);
    return this.#k.irqWorks.queueOn(iw, cpu);
  }
  raiseSoftirq(nr: number): void {
    if (!Number.isInteger(nr) || nr < 0 || nr > 9) throw new Error(`raiseSoftirq: vector must be 0..9 (got ${nr})`);
    this.#k.softirqs.raise(nr);
  }
  mightSleep(): void {
    const ctx = this.#k.ctx;
    const name = ctx.contextName();
    if (name !== 'task') {
      throw new KernelBug(`BUG: sleeping function called from invalid context (${name}) on CPU ${ctx.cpu}`);
    }
  }
}

/** The setup context strategy `index` receives; `deferred(cpu)` is the driver's per-CPU job. */
export function strategySetup(
  k: KernelParts,
  index: number,
  options: Record<string, string | number | boolean>,
  deferred: (cpu: number) => Deferred,
): StrategySetup {
  const { ctx, objects, workqueues } = k;
  return {
    nrCpus: ctx.nrCpus,
    hz: ctx.hz,
    options: Object.freeze({ ...options }),
    deferred: (cpu: number) => {
      objects.checkCpu(cpu, 'deferred');
      return deferred(cpu);
    },
    createWork: (name, fn) => ({ kind: 'work', id: objects.create('work', name, fn, index), name }) as Work,
    createTasklet: (name, fn) => ({ kind: 'tasklet', id: objects.create('tasklet', name, fn, index), name }) as Tasklet,
    createTimer: (name, fn, o) => {
      const id = objects.create('timer', name, fn, index);
      return { kind: 'timer', id, name, deferrable: !!o?.deferrable } as Timer;
    },
    createIrqWork: (name, fn) =>
      ({ kind: 'irq_work', id: objects.create('irq_work', name, fn, index), name }) as IrqWork,
    workqueue: (name: SystemWorkqueue) => workqueues.system(name),
    allocWorkqueue: (name, attrs) => workqueues.alloc(name, attrs),
  };
}
