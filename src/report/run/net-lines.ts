/**
 * The network path per tcp_lat exchange (a request and its reply), under a point's table: what
 * the NIC model (src/net/) turned each message into, and where the hand-offs landed. Absent
 * for workloads without a NIC or results written before it existed.
 */
import type { PointResult, StrategyResult } from '../types.js';

const PER_MESSAGE: ReadonlyArray<readonly [counter: string, title: string]> = [
  ['nic_tx_packets', 'pkts'],
  ['nic_irqs', 'NIC irqs'],
  ['napi_polls', 'polls'],
  ['napi_full_weight', 'full'],
  ['net_time_squeeze', 'squeeze'],
  ['net_rx_reraises', 'reraise'],
  ['tcp_acks_sent', 'ACKs'],
];

/** What the columns are, under them (the table keeps to the terminal's 120 columns). */
export const NET_LINES_LEGEND =
  'per exchange (a request and its reply): packets on the wire, NIC interrupts, NAPI polls (full: used the whole weight), net_rx_action stops at its budget and re-raises, ACKs; device interrupts per second per CPU (background and NIC); hand-offs/s; app busy: hand-offs that found the application running or runnable on their CPU; lost/h-o: deferred work run on that CPU while it waited, per such hand-off';

const fmt = (x: number) => (!Number.isFinite(x) ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** Hand-offs that landed while the application was running or runnable on that CPU, of all. */
function appShare(c: StrategyResult['counters']): string {
  const busy = c.handoffs_app_busy ?? 0;
  const idle = c.handoffs_app_idle ?? 0;
  if (busy + idle === 0) return '-';
  return `${((100 * busy) / (busy + idle)).toFixed(0)}% (${busy}/${busy + idle})`;
}

/** Deferred work's run time on a CPU whose application task was runnable, per such hand-off. */
function lostPerHandoff(c: StrategyResult['counters']): string {
  const busy = c.handoffs_app_busy ?? 0;
  const us = c.deferred_us_app_waiting ?? 0;
  return busy > 0 ? `${(us / busy).toFixed(1)} µs` : '-';
}

export function netLines(point: PointResult, cpus = 1): string[] {
  const rows = point.strategies.filter(
    (s) => (s.counters.app_messages ?? 0) > 0 && s.counters.nic_tx_packets !== undefined,
  );
  if (rows.length === 0) return [];
  const header = [
    'per exchange',
    ...PER_MESSAGE.map(([, t]) => t),
    'irqs/s/CPU',
    'hand-offs/s',
    'app busy',
    'lost/h-o',
  ];
  const body = rows.map((s) => {
    const m = s.counters.app_messages as number;
    return [
      s.label,
      ...PER_MESSAGE.map(([k]) => fmt((s.counters[k] ?? Number.NaN) / m)),
      fmt((s.rates.interrupts ?? Number.NaN) / cpus),
      fmt(s.rates.handoffs ?? Number.NaN),
      appShare(s.counters),
      lostPerHandoff(s.counters),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((x, i) => (i === 0 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
  return ['', line(header), ...body.map(line), NET_LINES_LEGEND];
}
