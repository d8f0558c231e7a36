/**
 * The field tables of the machine's fixed-size records (src/machine/layout.ts): every named
 * field as [offset, words], checked for overlaps and bounds when a machine's memory is planned
 * (src/machine/memory.ts) and by test/machine/layout.test.ts.
 */
import { FAST_POOL_WORDS, FastPoolWord } from '../random/fastpool.js';
import { LINE_WORDS } from '../shm/layout.js';
import { LOCK_WORDS } from '../shm/lock.js';
import {
  C_ACTIVE,
  C_EPOCH,
  C_FAULT,
  C_GEN_INFLIGHT,
  C_IDLE_POLLERS,
  C_IRQ_CPU_NS,
  C_JIFFIES,
  C_PHASE,
  C_STOP,
  C_TEST,
  C_TRIGGER,
  CONTROL_WORDS,
  CPU_COUNTER_NAMES,
  CPU_COUNTERS,
  CPU_DEFERRED,
  CPU_F64,
  CPU_FLAGS,
  CPU_HEARTBEAT,
  CPU_IN_SOFTIRQ,
  CPU_IPI_PENDING,
  CPU_LAST_TICK,
  CPU_NEXT_TIMER,
  CPU_NEXT_TIMER_ANY,
  CPU_ON_CPU,
  CPU_OWNER,
  CPU_SOFTIRQ,
  CPU_WHERE,
  CPU_WORDS,
  CPUF_HANDOFF_NS,
  CPUF_MIN_VRUNTIME,
  CPUF_NIC_DUE,
  CPUF_RT_PERIOD,
  CPUF_RT_TIME,
  CPUF_SWITCH_NS,
  CPUF_V_HINT,
  GLOBAL_COUNTER_NAMES,
  MAX_RQ_TASKS,
  MAX_TIMERS_PER_CPU,
  O_ARG,
  O_CPU,
  O_FLAGS,
  O_STATE,
  OBJ_WORDS,
  P_NR_RUNNING,
  POOL_WORDS,
  RQ_CURR,
  RQ_LAST_BUDDY,
  RQ_LEN,
  RQ_NEXT_BUDDY,
  RQ_NR_RUNNING,
  RQ_QUEUE,
  RQ_RT_THROTTLED,
  RQ_WORDS,
  T_CPU,
  T_MIGRATED,
  T_NICE,
  T_POLICY,
  T_RT_PRIO,
  T_SLICES,
  T_STATE,
  T_TICKS,
  T_WAKEUPS,
  T_WEIGHT,
  TASK_F64,
  TASK_WORDS,
  TB_LEN,
  TB_LIST,
  TF_DEADLINE,
  TF_EXEC_START,
  TF_PREV_SUM_EXEC,
  TF_RR_LEFT,
  TF_SUM_EXEC,
  TF_VLAG,
  TF_VRUNTIME,
  TIMER_BASE_WORDS,
} from './layout.js';

// ---------------------------------------------------------------------------------------------
// The field tables: every named field of every fixed-size record above, as [offset, words].
// Offsets are declared by hand; `recordFieldProblems` proves at load time that no two fields of a
// record overlap and that each lies inside its record (two such overlaps were once found only
// by their symptoms). A new field must be added here as well as declared.
// ---------------------------------------------------------------------------------------------

export interface RecordFields {
  /** Words (Int32, or doubles for the *F64 records) in one record. */
  size: number;
  fields: Record<string, readonly [offset: number, words: number]>;
}

export const RECORD_FIELDS: Record<string, RecordFields> = {
  control: {
    size: CONTROL_WORDS,
    fields: {
      C_PHASE: [C_PHASE, 1],
      C_EPOCH: [C_EPOCH, 1],
      C_ACTIVE: [C_ACTIVE, 1],
      C_STOP: [C_STOP, 1],
      C_TRIGGER: [C_TRIGGER, 1],
      C_TEST: [C_TEST, 1],
      C_GEN_INFLIGHT: [C_GEN_INFLIGHT, 1],
      C_IDLE_POLLERS: [C_IDLE_POLLERS, 1],
      C_IRQ_CPU_NS: [C_IRQ_CPU_NS, 2],
      C_JIFFIES: [C_JIFFIES, 1],
      C_FAULT: [C_FAULT, 1],
    },
  },
  cpu: {
    size: CPU_WORDS,
    fields: {
      CPU_FLAGS: [CPU_FLAGS, 1],
      CPU_OWNER: [CPU_OWNER, 1],
      CPU_ON_CPU: [CPU_ON_CPU, 1],
      CPU_SOFTIRQ: [CPU_SOFTIRQ, 1],
      CPU_NEXT_TIMER: [CPU_NEXT_TIMER, 1],
      CPU_NEXT_TIMER_ANY: [CPU_NEXT_TIMER_ANY, 1],
      CPU_DEFERRED: [CPU_DEFERRED, 1],
      CPU_LAST_TICK: [CPU_LAST_TICK, 1],
      CPU_IN_SOFTIRQ: [CPU_IN_SOFTIRQ, 1],
      CPU_IPI_PENDING: [CPU_IPI_PENDING, 1],
      CPU_HEARTBEAT: [CPU_HEARTBEAT, 1],
      CPU_WHERE: [CPU_WHERE, 1],
      CPU_COUNTERS: [CPU_COUNTERS, CPU_COUNTER_NAMES.length],
    },
  },
  cpuF64: {
    size: CPU_F64,
    fields: {
      CPUF_SWITCH_NS: [CPUF_SWITCH_NS, 1],
      CPUF_HANDOFF_NS: [CPUF_HANDOFF_NS, 1],
      CPUF_RT_TIME: [CPUF_RT_TIME, 1],
      CPUF_RT_PERIOD: [CPUF_RT_PERIOD, 1],
      CPUF_MIN_VRUNTIME: [CPUF_MIN_VRUNTIME, 1],
      CPUF_V_HINT: [CPUF_V_HINT, 1],
      CPUF_NIC_DUE: [CPUF_NIC_DUE, 1],
    },
  },
  rq: {
    size: RQ_WORDS,
    fields: {
      lock: [0, LOCK_WORDS],
      RQ_NR_RUNNING: [RQ_NR_RUNNING, 1],
      RQ_CURR: [RQ_CURR, 1],
      RQ_LEN: [RQ_LEN, 1],
      RQ_RT_THROTTLED: [RQ_RT_THROTTLED, 1],
      RQ_NEXT_BUDDY: [RQ_NEXT_BUDDY, 1],
      RQ_LAST_BUDDY: [RQ_LAST_BUDDY, 1],
      RQ_QUEUE: [RQ_QUEUE, MAX_RQ_TASKS],
    },
  },
  timerBase: {
    size: TIMER_BASE_WORDS,
    fields: { lock: [0, LOCK_WORDS], TB_LEN: [TB_LEN, 1], TB_LIST: [TB_LIST, MAX_TIMERS_PER_CPU] },
  },
  task: {
    size: TASK_WORDS,
    fields: {
      T_STATE: [T_STATE, 1],
      T_CPU: [T_CPU, 1],
      T_POLICY: [T_POLICY, 1],
      T_NICE: [T_NICE, 1],
      T_RT_PRIO: [T_RT_PRIO, 1],
      T_WEIGHT: [T_WEIGHT, 1],
      T_SLICES: [T_SLICES, 1],
      T_WAKEUPS: [T_WAKEUPS, 1],
      T_TICKS: [T_TICKS, 1],
      T_MIGRATED: [T_MIGRATED, 1],
    },
  },
  taskF64: {
    size: TASK_F64,
    fields: {
      TF_VRUNTIME: [TF_VRUNTIME, 1],
      TF_DEADLINE: [TF_DEADLINE, 1],
      TF_VLAG: [TF_VLAG, 1],
      TF_EXEC_START: [TF_EXEC_START, 1],
      TF_SUM_EXEC: [TF_SUM_EXEC, 1],
      TF_RR_LEFT: [TF_RR_LEFT, 1],
      TF_PREV_SUM_EXEC: [TF_PREV_SUM_EXEC, 1],
    },
  },
  object: {
    size: OBJ_WORDS,
    fields: { O_STATE: [O_STATE, 1], O_ARG: [O_ARG, 1], O_CPU: [O_CPU, 1], O_FLAGS: [O_FLAGS, 1] },
  },
  pool: {
    size: POOL_WORDS,
    fields: {
      lock: [0, LOCK_WORDS],
      P_NR_RUNNING: [P_NR_RUNNING, 1],
    },
  },
  fastPool: {
    size: FAST_POOL_WORDS,
    fields: {
      POOL: [FastPoolWord.POOL, 8], // pool[4] as 64-bit words, lo/hi halves
      LAST: [FastPoolWord.LAST, 1],
      COUNT: [FastPoolWord.COUNT, 1],
      WRONG_CPU: [FastPoolWord.WRONG_CPU, 1],
      HANDOFFS: [FastPoolWord.HANDOFFS, 1],
      MIXES: [FastPoolWord.MIXES, 1],
      VARIANT: [FastPoolWord.VARIANT, 1],
      CPU: [FastPoolWord.CPU, 1],
    },
  },
  globalCounters: {
    size: Math.max(LINE_WORDS, GLOBAL_COUNTER_NAMES.length),
    fields: { counters: [0, GLOBAL_COUNTER_NAMES.length] },
  },
};

/**
 * Every problem with a record's field table: a field outside its record (or of no words), or
 * two fields sharing a word. Empty when the layout is sound.
 */
export function recordFieldProblems(tables: Record<string, RecordFields>): string[] {
  const out: string[] = [];
  for (const [record, { size, fields }] of Object.entries(tables)) {
    const spans = Object.entries(fields)
      .map(([name, [at, words]]) => ({ name, at, end: at + words }))
      .sort((a, b) => a.at - b.at);
    for (const f of spans) {
      if (!Number.isInteger(f.at) || f.at < 0 || f.end > size || f.end <= f.at)
        out.push(`${record}.${f.name}: words ${f.at}..${f.end - 1} do not fit a record of ${size} words`);
    }
    // Sorted by start: a field overlaps an earlier one iff it starts before the furthest end so far.
    let reach = spans[0];
    for (const f of spans.slice(1)) {
      if (f.at < reach.end)
        out.push(`${record}: ${f.name} (word ${f.at}) overlaps ${reach.name} (words ${reach.at}..${reach.end - 1})`);
      if (f.end > reach.end) reach = f;
    }
  }
  return out;
}

/** Throw if any record's field table has a problem (called when a machine's memory is planned). */
export function assertLayoutSound(): void {
  const problems = recordFieldProblems(RECORD_FIELDS);
  if (problems.length) throw new Error(`machine layout: ${problems.join('; ')}`);
}
