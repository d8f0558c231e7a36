/**
 * The machine's record layouts: each field table is generated from the constants that declare its
 * fields (layout-fields.ts, fieldTable; the kernel's through its registry), and no table has
 * overlapping or out-of-record fields (checked when a machine's memory is planned; here the check
 * itself is shown to catch what it is for).
 */
import { describe, expect, it } from 'vitest';
import * as Words from '../../src/hw/layout.js';
import * as F from '../../src/hw/layout-fields.js';
import { O_CPU } from '../../src/kernel/objects.js';
import { kernelRecords } from '../../src/kernel/registry.js';
import { MAX_RQ_TASKS, RQ_QUEUE } from '../../src/kernel/sched/layout.js';
import { MAX_TIMERS_PER_CPU, TB_LIST } from '../../src/kernel/timer.js';
import { P_NR_RUNNING } from '../../src/kernel/workqueue.js';
import { FAST_POOL_FIELDS } from '../../src/random/fastpool.js';

/** The layout's words and the field tables that list them. */
const L = { ...Words, ...F };
const ALL = { ...F.RECORD_FIELDS, ...kernelRecords(), fastPool: FAST_POOL_FIELDS };

describe('machine record layout', () => {
  it("has no overlapping or out-of-record fields, the kernel's and random.c's records included", () => {
    expect(L.recordFieldProblems(ALL)).toEqual([]);
    expect(Object.keys(ALL).sort()).toEqual(
      [
        'control',
        'cpu',
        'cpuF64',
        'fastPool',
        'globalCounters',
        'object',
        'pool',
        'rq',
        'task',
        'taskF64',
        'timerBase',
      ].sort(),
    );
  });

  it('generates a table from the constants that match its prefix, sizes and non-numbers left out', () => {
    const ns = { R_A: 0, R_LIST: 2, R_WORDS: 8, R_NAMES: ['x'], OTHER: 5 };
    const t = L.fieldTable(ns, /^R_[A-Z_]+$/, 8, { R_LIST: 4 }, ['R_WORDS'], { lock: [6, 2] });
    expect(t).toEqual({ size: 8, fields: { lock: [6, 2], R_A: [0, 1], R_LIST: [2, 4] } });
  });

  it("reads each mechanism's record from the module that declares it", () => {
    const k = kernelRecords();
    expect(k.timerBase.fields.TB_LIST).toEqual([TB_LIST, MAX_TIMERS_PER_CPU]);
    expect(k.rq.fields.RQ_QUEUE).toEqual([RQ_QUEUE, MAX_RQ_TASKS]);
    expect(k.pool.fields.P_NR_RUNNING).toEqual([P_NR_RUNNING, 1]);
    expect(k.object.fields.O_CPU).toEqual([O_CPU, 1]);
    expect(Object.keys(k.taskF64.fields)).toContain('TF_VRUNTIME');
    expect(L.RECORD_FIELDS.cpu.fields.CPU_OWNER).toEqual([Words.CPU_OWNER, 1]);
    expect(FAST_POOL_FIELDS.fields.POOL).toEqual([0, 8]);
  });

  it('finds two fields sharing a word, however far apart they start', () => {
    const problems = L.recordFieldProblems({
      r: { size: 16, fields: { LIST: [0, 8], A: [2, 1], B: [7, 1], C: [8, 1] } },
    });
    expect(problems).toEqual(['r: A (word 2) overlaps LIST (words 0..7)', 'r: B (word 7) overlaps LIST (words 0..7)']);
  });

  it('finds a field that runs past its record or has no words', () => {
    const problems = L.recordFieldProblems({ r: { size: 4, fields: { A: [0, 1], LIST: [2, 3], E: [1, 0] } } });
    expect(problems).toContain('r.LIST: words 2..4 do not fit a record of 4 words');
    expect(problems).toContain('r.E: words 1..0 do not fit a record of 4 words');
  });
});
