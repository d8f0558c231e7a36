/**
 * A scenario's verdicts outlive the terminal: what it printed (tables and VERDICT lines) is kept
 * as scenario.txt in its output directory, and `deferlab report DIR` on that directory prints it
 * (src/app.ts keepScenarioText). A new user's cpu-hog run once left its verdicts nowhere on disk,
 * and `report` refused the scenario's directory.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SCENARIO_TXT } from '../../src/report/run/formats.js';
import { runMain } from '../fixtures/cli-main.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-scenario-text-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("a scenario's printed report", () => {
  it('is written to scenario.txt, and report prints it again', async () => {
    const dir = join(tmp, 'storm');
    const argv = ['scenario', 'ipi-storm', '--trials', '1', '--duration', '200ms', '--warmup', '0', '--out', dir];
    const r = await runMain(argv, tmp);
    expect(r.status, r.stderr).toBe(0);
    const verdicts = r.stdout.split('\n').filter((l) => l.startsWith('VERDICT '));
    expect(verdicts.length).toBeGreaterThan(0);
    const file = join(dir, SCENARIO_TXT);
    expect(existsSync(file)).toBe(true);
    const kept = readFileSync(file, 'utf8');
    expect(kept.split('\n')[0]).toBe(`# deferlab ${argv.join(' ')}`);
    expect(kept).toContain(r.stdout);
    const again = await runMain(['report', dir], tmp);
    expect(again.status, again.stderr).toBe(0);
    for (const v of verdicts) expect(again.stdout).toContain(v);
    expect(again.stdout).toContain("the scenario's report as it printed it");
  }, 120_000);

  it('is not written without an output directory', async () => {
    const r = await runMain(
      ['scenario', 'ipi-storm', '--trials', '1', '--duration', '200ms', '--warmup', '0', '--no-output'],
      tmp,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(tmp, SCENARIO_TXT))).toBe(false);
  }, 120_000);
});
