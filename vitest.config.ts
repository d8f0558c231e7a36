import { defineConfig } from 'vitest/config';

// Tests spawn real worker threads; each test file runs in its own forked process so that
// threads from one file never share a core budget with another file's in the same process.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ once per run: the CLI tests run the built command (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Two cores: more than two files at once only makes every threaded test slower.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
