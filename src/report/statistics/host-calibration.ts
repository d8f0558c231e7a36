/**
 * The calibration block (`meta.calibration`, measured by src/harness/calibrate.ts) as text: one
 * line under the terminal table, and labelled rows for report.html. Nothing here prints.
 */
import { plural } from '../../text.js';
import type { Calibration, RunMeta } from '../types.js';

/** `6.8 µs`, `0.09 µs`: one decimal from 1 µs up, two below. */
function us(ns: number): string {
  if (!Number.isFinite(ns)) return '? µs';
  const v = ns / 1000;
  return `${v >= 1 ? v.toFixed(1) : v.toFixed(2)} µs`;
}

/** `38 ns`. */
function ns(x: number): string {
  return Number.isFinite(x) ? `${Math.round(x)} ns` : '? ns';
}

/** The 1-minute load average, one decimal. */
function load1(avg: readonly number[]): string {
  const x = avg[0];
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(1) : '?';
}

const histNote = (c: Calibration): string => (c.histWasm ? '' : ' (JS build)');

/**
 * `host: futex wake 6.8 µs p50, hand-off 7.9 µs, same-thread switch 0.09 µs, clock 38 ns, hist
 * record 21 ns; 2 cores, load 0.4 → 1.1` (load: the 1-minute average at the start and the end of
 * the run). Undefined for results without the block (written before it existed).
 * Context: any; pure.
 */
export function calibrationLine(meta: Pick<RunMeta, 'calibration'>): string | undefined {
  const c = meta.calibration;
  if (!c) return undefined;
  return (
    `host: futex wake ${us(c.futexWakeP50Ns)} p50, hand-off ${us(c.handoffP50Ns)}, ` +
    `same-thread switch ${us(c.sameThreadSwitchNs)}${charged(c)}, clock ${ns(c.clockReadNs)}, ` +
    `hist record ${ns(c.histRecordNs)}${histNote(c)}; ${plural(c.hostCores, 'core')}, ` +
    `load ${load1(c.loadAvgStart)} → ${load1(c.loadAvgEnd)}`
  );
}

/** `0.42 / 0.61 / 0.70`: 1, 5 and 15 minutes. */
function loadAvg(avg: readonly number[]): string {
  return avg.map((x) => (Number.isFinite(x) ? x.toFixed(2) : '?')).join(' / ');
}

/**
 * The block as labelled rows (label, value), for report.html's calibration section; undefined
 * without the block. Context: any; pure.
 */
export function calibrationRows(meta: Pick<RunMeta, 'calibration'>): Array<[string, string]> | undefined {
  const c = meta.calibration;
  if (!c) return undefined;
  return [
    ['host futex wake, one-way', `${us(c.futexWakeP50Ns)} p50, ${us(c.futexWakeP99Ns)} p99`],
    ['cross-thread hand-off, one-way', `${us(c.handoffP50Ns)} p50, ${us(c.handoffP99Ns)} p99`],
    ['same-thread switch', `${us(c.sameThreadSwitchNs)}${charged(c)}`],
    ['clock read (nowNs)', ns(c.clockReadNs)],
    ['histogram record', `${ns(c.histRecordNs)}${histNote(c)}`],
    ['host', `${c.cpuModel}, ${plural(c.hostCores, 'core')}`],
    ['load average 1 / 5 / 15 min', `${loadAvg(c.loadAvgStart)} at the start, ${loadAvg(c.loadAvgEnd)} at the end`],
    [
      'measured',
      `${c.repetitions} × ${c.roundTrips} round trips (medians of the p50s and p99s), ` +
        `${c.batches} short batches (median) for the rest, in ${Math.round(c.durationMs)} ms`,
    ],
  ];
}

/** ` (2.41 µs charged)`: the switch with the run's --switch-cost floor (a model); '' without one. */
function charged(c: NonNullable<RunMeta['calibration']>): string {
  return c.sameThreadSwitchChargedNs !== undefined ? ` (${us(c.sameThreadSwitchChargedNs)} charged)` : '';
}
