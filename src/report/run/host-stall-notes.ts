/**
 * The host-stall line of a run's table (issue 28, item 4; src/machine/host-stall.ts): per
 * strategy, how many samples (tcp_lat exchanges, driver-payload requests) overlapped a host stall
 * on a CPU they involve, always printed whatever `--host-stalls` did with them, beside the stalls
 * and V8 GCs the machine saw. Results without the counters (older runs) print nothing.
 */
import type { PointResult } from '../types.js';

const ms = (us: number) => `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)} ms`;

export function hostStallNotes(point: PointResult): string[] {
  const parts: string[] = [];
  let marked = false;
  for (const s of point.strategies) {
    const c = s.counters;
    if (typeof c.host_stalls !== 'number' || typeof c.samples_host_stalled !== 'number') continue;
    const kept = (s.merged.one_way?.summary.count ?? 0) + (s.merged.request_to_start?.summary.count ?? 0);
    if ((s.merged.one_way_host?.summary.count ?? 0) + (s.merged.request_to_start_host?.summary.count ?? 0) > 0)
      marked = true;
    const pre =
      c.host_stalls > 0 ? `, ${Math.round((100 * (c.host_stalls_preempted ?? 0)) / c.host_stalls)}% preempted` : '';
    parts.push(
      `${s.label} ${c.samples_host_stalled} (${kept} in the distribution) ` +
        `(stalls ${c.host_stalls}, ${ms(c.host_stall_us ?? 0)}${pre}; GC ${c.gc_pauses ?? 0}, ${ms(c.gc_us ?? 0)})`,
    );
  }
  if (!parts.length) return [];
  return [
    `host stalls: samples that overlapped a stall of a CPU thread they involve: ${parts.join('; ')}; ` +
      (marked
        ? 'also in one_way_host / request_to_start_host (--host-stalls mark or drop)'
        : 'kept in the distribution (--host-stalls keep; mark or drop reports them apart)'),
  ];
}
