/**
 * The setup line's `--host-helpers` part reads the nice the run gave its helpers from the results
 * (meta.hostHelpersNice), so that re-rendering an older run (whose helpers went to 19, before the
 * field) does not claim today's value; and whether idled helpers were raised mid-run (one starved).
 */
import { describe, expect, it } from 'vitest';
import { HOST_HELPER_NICE } from '../../src/machine/host-threads.js';
import { setupLine } from '../../src/report/run/setup-line.js';
import { syntheticResults } from '../fixtures/synthetic.js';

const withHelpers = (meta: {
  hostHelpersNiced?: number;
  hostHelpersNice?: number;
  hostHelpersPolicy?: string;
  hostHelpersRaisedMs?: number;
}) => {
  const r = syntheticResults({ seed: 3, samples: 50, trials: 2 });
  return { ...r, meta: { ...r.meta, ...meta } };
};

describe('the setup line and --host-helpers', () => {
  it('says how many helpers went to which nice, as the results record it', () => {
    expect(setupLine(withHelpers({ hostHelpersNiced: 7, hostHelpersNice: HOST_HELPER_NICE }))).toMatch(
      new RegExp(`7 helper threads at\\s+nice ${HOST_HELPER_NICE} \\(--host-helpers\\)`),
    );
  });
  it('says the policy when the results record one (--host-helpers idle)', () => {
    expect(
      setupLine(
        withHelpers({ hostHelpersNiced: 7, hostHelpersNice: HOST_HELPER_NICE, hostHelpersPolicy: 'SCHED_IDLE' }),
      ),
    ).toMatch(/7 helper threads at\s+SCHED_IDLE \(--host-helpers\)/);
  });
  it('says when the machine raised idled helpers that starved back to the nice', () => {
    const line = setupLine(
      withHelpers({
        hostHelpersNiced: 7,
        hostHelpersNice: HOST_HELPER_NICE,
        hostHelpersPolicy: 'SCHED_IDLE',
        hostHelpersRaisedMs: 1340,
      }),
    );
    expect(line).toMatch(
      new RegExp(`7 helper threads at\\s+SCHED_IDLE,\\s+nice ${HOST_HELPER_NICE} after 1\\.3 s \\(one starved\\)`),
    );
    expect(setupLine(withHelpers({ hostHelpersNiced: 7, hostHelpersPolicy: 'SCHED_IDLE' }))).not.toContain('starved');
  });
  it('says 19 for results from before the nice was recorded', () => {
    expect(setupLine(withHelpers({ hostHelpersNiced: 7 }))).toMatch(/7 helper threads at\s+nice 19 \(--host-helpers\)/);
  });
  it('says nothing when no helper was reniced', () => {
    expect(setupLine(withHelpers({}))).not.toContain('helper threads');
  });
});
