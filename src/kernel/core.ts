/**
 * The kernel's base as mechanisms (src/kernel/mechanism.ts): the kernel objects' words, the
 * scheduler's run queues and task records, the softirq pending bits. Every thread builds their
 * parts itself (src/machine/runtime.ts), since every other mechanism is built over them; here
 * is what the machine plans, initialises and drains of them. Their records' fields are read
 * from the modules that declare them (`words`).
 */
import { CPU_SOFTIRQ, CPU_WORDS } from '../hw/layout.js';
import { LOCK_WORDS } from '../shm/lock.js';
import type { Mechanism } from './mechanism.js';
import * as objectWords from './objects.js';
import { MAX_OBJECTS, O_CPU, OBJ_WORDS } from './objects.js';
import * as schedWords from './sched/layout.js';
import { MAX_RQ_TASKS, RQ_WORDS, TASK_F64, TASK_WORDS } from './sched/layout.js';
import { RunQueues } from './sched/rq.js';

/** The objects' shared words: one record per object, on no CPU until queued. Built by the runtime. */
export const objects: Mechanism = {
  name: 'objects',
  regions: () => ({ objects: { words: OBJ_WORDS * MAX_OBJECTS, count: 1 } }),
  words: objectWords,
  records: { object: { prefix: /^O_[A-Z_]+$/, size: OBJ_WORDS } },
  init(m) {
    const base = m.R.parts.objects[0];
    for (let o = 0; o < MAX_OBJECTS; o++) m.i32[base + o * OBJ_WORDS + O_CPU] = -1; // on no CPU
  },
};

/**
 * The scheduler as a kernel mechanism (src/kernel/mechanism.ts): its regions and records. The
 * run queues themselves are part of every thread's base (built by the runtime, not here).
 */
export const sched: Mechanism = {
  name: 'sched',
  regions: (s) => ({
    rq: { words: RQ_WORDS * s.cpus, count: 1 },
    task: { words: TASK_WORDS * s.tasks, count: 1 },
    taskF64: { words: 2 * TASK_F64 * s.tasks, count: 1 },
  }),
  words: schedWords,
  records: {
    rq: {
      prefix: /^RQ_[A-Z_]+$/,
      size: RQ_WORDS,
      wide: { RQ_QUEUE: MAX_RQ_TASKS },
      not: ['RQ_WORDS'],
      extra: { lock: [0, LOCK_WORDS] },
    },
    task: { prefix: /^T_[A-Z_]+$/, size: TASK_WORDS },
    taskF64: { prefix: /^TF_[A-Z_]+$/, size: TASK_F64 },
  },
  init(m) {
    const rqs = RunQueues.of(m.i32, m.f64, m.R, m.cpus, m.lockSpins, m.fair, m.hz);
    for (let c = 0; c < m.cpus; c++) rqs.initCpu(c);
    const workOnly = (kind: string) =>
      m.kthreadCharge === 'work' && (kind === 'kworker' || kind === 'unbound' || kind === 'ksoftirqd');
    for (const t of m.plan.tasks) rqs.initTask(t.id, t.cpu, t.policy, t.nice, t.rtPrio, workOnly(t.kind));
  },
};

/** Softirqs as a kernel mechanism (src/kernel/mechanism.ts): pending bits per CPU (CPU_SOFTIRQ). */
export const softirq: Mechanism = {
  name: 'softirq',
  busy(m) {
    for (let c = 0; c < m.cpus; c++)
      if (Atomics.load(m.i32, m.R.cpu + c * CPU_WORDS + CPU_SOFTIRQ) !== 0) return `softirqs pending on CPU ${c}`;
    return '';
  },
};
