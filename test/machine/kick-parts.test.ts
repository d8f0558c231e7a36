/**
 * KickParts (src/machine/kick-parts.ts): a wake-up onto a halted CPU split into wake_to_kick and
 * kick_to_run, which with kick_wake add up to its wakeup_to_run; only a wake-up made before the
 * ring that ended the halt is split, once. Pure: a recorder in place of the thread's Tracer.
 */
import { describe, expect, it } from 'vitest';
import { St } from '../../src/hw/trace.js';
import { KickParts } from '../../src/machine/kick-parts.js';

function recorder() {
  const got: [St, number][] = [];
  return { got, record: (s: St, ns: number) => void got.push([s, ns]) };
}

describe('KickParts', () => {
  it('splits a wake-up made before the ring into parts that add up to its wakeup_to_run', () => {
    const k = new KickParts();
    const r = recorder();
    k.halting();
    // Woken at 600; the ring at 700 ended the halt; the thread ran at 1000 (kick_wake 300); the
    // task ran at 1500 (wakeup_to_run 900).
    k.kicked(1_000, 300);
    k.taskRuns(r, 1_500, 900);
    expect(r.got).toEqual([
      [St.WakeToKick, 100],
      [St.KickToRun, 500],
    ]);
    expect(100 + 300 + 500).toBe(900);
    k.taskRuns(r, 1_600, 50);
    expect(r.got.length, 'once per kick').toBe(2);
  });

  it('records nothing for a wake-up after the ring, nor after the next halt begins', () => {
    const k = new KickParts();
    const r = recorder();
    k.kicked(1_000, 300); // rung at 700
    k.taskRuns(r, 1_500, 100); // woken at 1400: the thread was awake, no ring of its own
    expect(r.got).toEqual([]);
    k.kicked(2_000, 100);
    k.halting();
    k.taskRuns(r, 2_500, 1_000);
    expect(r.got, 'a kick before the halt no longer applies').toEqual([]);
    k.taskRuns(r, 2_600, 10);
    expect(r.got, 'nothing without a kick').toEqual([]);
  });
});
