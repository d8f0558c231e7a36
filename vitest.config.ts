import { defineConfig } from 'vitest/config';

/**
 * Test files that neither start threads or processes nor set the clock's state: pure functions
 * and data (the report, the statistics, parsers, the random.c port). They share their worker
 * processes (isolate: false), which saves a process start-up and a module graph per file: ~20 s of
 * CPU over the suite on 2 cores. Listed by hand, so that a new file is isolated until someone
 * decides otherwise: one here must not boot a machine, spawn, mock a global without restoring it,
 * or change module state another file reads (src/clock.ts's TDF, the idle policy's cached choice).
 */
const SHARED_PROCESS = [
  'test/cli/args.test.ts',
  'test/config/{errors,load,nic,strategy-spec,sweep}.test.ts',
  'test/bench/{scale-spread,twin-bar,twin-median,twin-table}.test.ts',
  'test/harness/{boots,control,heap-growth,schedule,signals,until}.test.ts',
  'test/irq/{replay,trace-file}.test.ts',
  'test/kernel/select.test.ts',
  'test/machine/{kick-parts,layout,timeline,trace}.test.ts',
  'test/net/{csum,tso,vectors}.test.ts',
  'test/random/{blake2s,driver-work-seq,fastmix,fastpool,inputpool,siphash,trylock}.test.ts',
  'test/report/{calibration-realistic,calibration,compare-comparable,compare,csv,explain-order,explain,family,hgrm}.test.ts',
  'test/report/{host-calibration,host-stall-notes,html,irq-trace-notes,meta,outdir,stall-profile,stats}.test.ts',
  'test/report/{setup-trials,slices,table-marks,table,write}.test.ts',
  'test/strategies/format.test.ts',
  'test/{scenario-cpu-hog-verdicts,scenario-effects,scenario-entropy-verdicts,scenario-help,scenario-seed-machine}.test.ts',
];

export default defineConfig({
  test: {
    // Builds dist/ once per run: the CLI tests run the built command (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Three files at once on two cores: the threaded tests spend much of their time waiting (halted
    // CPUs, trials, watchdogs), which a third file's work fills; every test waits on counts and
    // handshakes, not on wall-clock windows, so the extra load only slows them.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      // Tests spawn real worker threads; each such file runs in its own forked process so that
      // threads from one file never share a core budget with another file's in the same process.
      { extends: true, test: { name: 'threads', include: ['test/**/*.test.ts'], exclude: SHARED_PROCESS } },
      { extends: true, test: { name: 'pure', include: SHARED_PROCESS, isolate: false } },
    ],
  },
});
