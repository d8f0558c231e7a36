import { describe, expect, it } from 'vitest';
import { hostStallNotes } from '../../src/report/run/host-stall-notes.js';
import { syntheticResults } from '../fixtures/synthetic.js';

describe('the host-stall line under the table', () => {
  const point = () => syntheticResults({ samples: 300, trials: 2, msgSizes: [64] }).points[0];

  it('is absent for results without the host-stall counters (older runs)', () => {
    const p = point();
    for (const s of p.strategies) {
      delete s.counters.host_stalls;
      delete s.counters.samples_host_stalled;
    }
    expect(hostStallNotes(p)).toEqual([]);
  });

  it('gives each strategy its affected samples beside its distribution, its stalls and GCs', () => {
    const p = point();
    p.strategies.forEach((s, i) => {
      Object.assign(s.counters, {
        host_stalls: 10 + i,
        host_stall_us: 5000,
        host_stalls_preempted: 5 + i,
        samples_host_stalled: 7 + i,
        gc_pauses: 2,
        gc_us: 1500,
      });
    });
    const [line] = hostStallNotes(p);
    const s0 = p.strategies[0];
    expect(line).toContain(
      `${s0.label} 7 (${s0.merged.one_way?.summary.count} in the distribution) (stalls 10, 5.0 ms, 50% preempted; GC 2, 1.5 ms)`,
    );
    expect(line).toContain(`${p.strategies[1].label} 8 (`);
    expect(line).toContain('kept in the distribution (--host-stalls keep');
  });
});
