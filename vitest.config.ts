import { defineConfig } from 'vitest/config';

// Tests spawn real worker threads; each test file runs in its own forked process so that
// threads from one file never share a core budget with another file's in the same process.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ once per run: the CLI tests run the built command (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Three files at once on two cores: the threaded tests spend much of their time waiting (halted
    // CPUs, trials, watchdogs), which a third file's work fills; every test waits on counts and
    // handshakes, not on wall-clock windows, so the extra load only slows them.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
