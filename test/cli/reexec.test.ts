/**
 * The CLI's second process (src/harness/malloc.ts): a machine-booting command starts itself
 * again with glibc's mmap threshold fixed. Checked here: when it does and does not, that the run
 * records the threshold it had, that a terminal's Ctrl-C (SIGINT to the whole process group)
 * counts once, and that the child does not run on alone when its parent is killed outright.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  MMAP_THRESHOLD_BYTES,
  MMAP_THRESHOLD_ENV,
  mmapThresholdInEffect,
  NO_REEXEC_ENV,
  REEXEC_ENV,
  reexecWanted,
} from '../../src/harness/malloc.js';
import { readResults } from '../../src/report/run/write.js';
import { childrenOf, markedRun, runCli, stackLines, whenMarked } from '../fixtures/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-reexec-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TEST_TIMEOUT_MS = 90_000;

describe('reexecWanted', () => {
  it('restarts on Linux unless the threshold is set, it is the child, or the user opted out', () => {
    expect(reexecWanted({}, 'linux')).toBe(true);
    expect(reexecWanted({}, 'darwin')).toBe(false);
    expect(reexecWanted({ [REEXEC_ENV]: '123' }, 'linux')).toBe(false);
    expect(reexecWanted({ [NO_REEXEC_ENV]: '1' }, 'linux')).toBe(false);
    expect(reexecWanted({ [NO_REEXEC_ENV]: '0' }, 'linux')).toBe(true);
    expect(reexecWanted({ [MMAP_THRESHOLD_ENV]: '65536' }, 'linux')).toBe(false);
    expect(reexecWanted({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=262144' }, 'linux')).toBe(false);
    expect(reexecWanted({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, 'linux')).toBe(true);
  });

  it('reads the threshold in effect from the environment', () => {
    expect(mmapThresholdInEffect({})).toBeNull();
    expect(mmapThresholdInEffect({ [MMAP_THRESHOLD_ENV]: '131072' })).toBe(131072);
    expect(mmapThresholdInEffect({ [MMAP_THRESHOLD_ENV]: 'lots' })).toBeNull();
  });
});

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^\S+ \(.*\) Z/.test(readStat(pid));
function readStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
}

describe.runIf(process.platform === 'linux')('the second process', () => {
  it(
    "a terminal's Ctrl-C (SIGINT to the process group) stops the run once: exit 130, results kept, threshold recorded",
    async () => {
      const out = join(tmp, 'group-sigint');
      const mark = join(tmp, 'group-sigint.mark');
      let signalled = false;
      const r = await runCli(markedRun(out), {
        env: { DEFERLAB_TEST_MARK: mark },
        detached: true,
        onSpawn: (child) =>
          whenMarked(mark, child, () => {
            signalled = true;
            process.kill(-(child.pid as number), 'SIGINT');
          }),
      });
      expect(signalled, `the run got under way (stderr: ${r.stderr})`).toBe(true);
      expect(r.code, `stderr:\n${r.stderr}`).toBe(130);
      expect(stackLines(r.stderr), 'no stack trace').toEqual([]);
      expect(r.stderr).not.toMatch(/interrupted twice/);
      expect(r.stderr).toMatch(/^deferlab: interrupted; the \d+ trials finished so far are in the results$/m);
      const results = await readResults(out);
      expect(results.status).toBe('interrupted');
      expect(results.meta.mmapThreshold).toBe(MMAP_THRESHOLD_BYTES);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the child stops, writing what it measured, when its parent is killed outright',
    async () => {
      const out = join(tmp, 'orphan');
      const mark = join(tmp, 'orphan.mark');
      let childPid = 0;
      const r = await runCli(markedRun(out), {
        env: { DEFERLAB_TEST_MARK: mark },
        onSpawn: (parent) =>
          whenMarked(mark, parent, () => {
            [childPid] = childrenOf(parent.pid as number);
            parent.kill('SIGKILL');
          }),
      });
      expect(r.signal).toBe('SIGKILL');
      expect(childPid, 'the parent had a child').toBeGreaterThan(0);
      const deadline = Date.now() + 20_000;
      while (alive(childPid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
      expect(alive(childPid), 'the child ended on its own').toBe(false);
      const results = await readResults(out);
      expect(results.status).toBe('interrupted');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    `runs in one process with ${NO_REEXEC_ENV}=1 and records the dynamic threshold`,
    async () => {
      const out = join(tmp, 'one-process');
      const r = await runCli(
        ['run', '--trials', '1', '--duration', '200ms', '--warmup', '50ms', '--strategy', 'inline', '--out', out],
        { env: { [NO_REEXEC_ENV]: '1' } },
      );
      expect(r.code, `stderr:\n${r.stderr}`).toBe(0);
      const results = await readResults(out);
      expect(results.meta.mmapThreshold).toBeNull();
    },
    TEST_TIMEOUT_MS,
  );
});
