/**
 * select_task_rq_fair's wakeup placement (src/kernel/sched/select.ts) on constructed states: a
 * machine of 16 CPUs in two LLCs (0-7, 8-15), run-queue lengths and idle CPUs set by hand.
 */
import { describe, expect, it } from 'vitest';
import { nodeGroups } from '../../src/config/placement.js';
import { type PlacementView, TaskPlacement } from '../../src/kernel/sched/select.js';

const CPUS = 16;
const LLC = nodeGroups(CPUS, 2);

/** A view whose CPUs are busy with `nr[c]` tasks (0: idle). */
function state(nr: Partial<Record<number, number>>, idleDefault = false): PlacementView & { nr: number[] } {
  const arr = Array.from({ length: CPUS }, (_, c) => nr[c] ?? (idleDefault ? 0 : 1));
  return { nr: arr, idle: (c) => arr[c] === 0, nrRunning: (c) => arr[c] };
}

/** Task 0 allowed `allowed`; task 1 not placed. */
function placement(allowed: number[], view: PlacementView): TaskPlacement {
  return new TaskPlacement(CPUS, LLC, [allowed, undefined], view);
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe('select_task_rq', () => {
  it('leaves tasks without an allowed mask alone', () => {
    expect(placement(range(0, 7), state({})).selectTaskRq(1, 3, 0, false)).toBe(-1);
  });

  it('pins a task allowed one CPU, whatever is idle', () => {
    const p = placement([5], state({ 0: 0, 1: 0 }, false));
    expect(p.selectTaskRq(0, 5, 0, true)).toBe(5);
  });

  it('never places outside the allowed CPUs, whatever the state', () => {
    // Every CPU outside 2-4 idle, every allowed one busy: the choice stays inside 2-4.
    const busyInside = state({ 2: 3, 3: 2, 4: 1 }, true);
    const p = placement([2, 3, 4], busyInside);
    for (let waker = 0; waker < CPUS; waker++)
      for (const prev of [2, 3, 4]) expect([2, 3, 4]).toContain(p.selectTaskRq(0, prev, waker, waker % 2 === 0));
  });
});

describe('select_idle_sibling', () => {
  it('takes the target when it is idle', () => {
    const p = placement(range(0, 7), state({ 3: 0 }));
    expect(p.selectIdleSibling(0, 5, 3)).toBe(3);
  });

  it('takes an idle prev that shares the target LLC', () => {
    const p = placement(range(0, 15), state({ 5: 0 }));
    expect(p.selectIdleSibling(0, 5, 3)).toBe(5);
  });

  it('does not take an idle prev in another LLC, and scans the target LLC instead', () => {
    const p = placement(range(0, 15), state({ 9: 0, 6: 0 }));
    expect(p.selectIdleSibling(0, 9, 3)).toBe(6);
  });

  it('finds an idle sibling in the LLC, scanning from target + 1 and wrapping', () => {
    const p = placement(range(0, 7), state({ 1: 0, 6: 0 }));
    expect(p.selectIdleSibling(0, 2, 5)).toBe(6);
    const q = placement(range(0, 7), state({ 1: 0 }));
    expect(q.selectIdleSibling(0, 2, 5)).toBe(1); // wrapped past 7
  });

  it('skips idle CPUs the task may not use, even in the same LLC', () => {
    const p = placement([0, 1, 2, 3], state({ 4: 0, 5: 0, 6: 0, 7: 0 }));
    expect(p.selectIdleSibling(0, 1, 2)).toBe(2); // nothing allowed is idle: the target
  });

  it('does not look for idle CPUs beyond the LLC', () => {
    const p = placement(range(0, 15), state({ 12: 0 }));
    expect(p.selectIdleSibling(0, 1, 2)).toBe(2);
  });

  it('returns to recent_used_cpu when it is idle, allowed and shares the LLC', () => {
    const v = state({});
    const p = placement(range(0, 7), v);
    p.selectIdleSibling(0, 4, 2); // remembers 4 as recent_used_cpu; nothing idle
    v.nr[4] = 0;
    v.nr[3] = 0; // the scan from target 2 + 1 would find 3 first
    expect(p.selectIdleSibling(0, 6, 2)).toBe(4);
    // Without the memory (a fresh task state), the scan's 3.
    expect(placement(range(0, 7), v).selectIdleSibling(0, 6, 2)).toBe(3);
  });
});

describe('wake_affine', () => {
  it('WA_IDLE: an idle waker sharing the LLC takes the task unless prev is idle too', () => {
    const p = placement(range(0, 15), state({ 0: 0 }));
    expect(p.wakeAffine(5, 0, false)).toBe(0);
    const q = placement(range(0, 15), state({ 0: 0, 5: 0 }));
    expect(q.wakeAffine(5, 0, false)).toBe(5);
  });

  it('WA_IDLE: a sync wakeup from a CPU running only the waker pulls the task there', () => {
    const p = placement(range(0, 15), state({ 0: 1, 5: 2 }));
    expect(p.wakeAffineIdle(0, 5, true)).toBe(0);
    expect(p.wakeAffineIdle(0, 5, false)).toBe(-1);
  });

  it('WA_WEIGHT: the less loaded side by imbalance_pct; prev when no choice', () => {
    // this runs 1 (about to sleep: sync) against prev's 3: this.
    const p = placement(range(0, 15), state({ 0: 2, 5: 3 }));
    expect(p.wakeAffineWeight(0, 5, true)).toBe(0);
    // this runs 3, prev 1: no choice, wake_affine keeps prev.
    const q = placement(range(0, 15), state({ 0: 3, 5: 1 }));
    expect(q.wakeAffineWeight(0, 5, false)).toBe(-1);
    expect(q.wakeAffine(5, 0, false)).toBe(5);
  });

  it('is skipped when the waker CPU is not allowed (want_affine false): prev LLC searched', () => {
    // Waker 12 idle in the other LLC and not allowed; prev 3 busy; 6 idle: select_idle_sibling(prev).
    const p = placement(range(0, 7), state({ 12: 0, 6: 0 }));
    expect(p.selectTaskRqFair(0, 3, 12, true)).toBe(6);
  });

  it('an idle waker in the other node takes the task over a busy prev, as 2-node domains keep SD_WAKE_AFFINE', () => {
    const p = placement(range(0, 15), state({ 12: 0 }));
    // wake_affine_idle: 12 idle but not sharing prev's LLC; prev busy → no choice; WA_WEIGHT:
    // this 0 (+1 woken) · 100 < prev 1 · 108 → 12; select_idle_sibling(prev 3, target 12): 12 idle.
    expect(p.selectTaskRqFair(0, 3, 12, false)).toBe(12);
  });
});
