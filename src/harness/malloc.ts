/**
 * glibc's malloc, held to a fixed mmap threshold for the whole process: the CLI (and the long
 * benchmarks) start themselves again, once, with `MALLOC_MMAP_THRESHOLD_` set in the environment.
 *
 * Why: glibc serves an allocation above its mmap threshold (128 KiB at start) with mmap, and when
 * such a block is freed it raises the threshold to that block's size (mallopt(3),
 * M_MMAP_THRESHOLD: "dynamic" threshold, up to 32 MiB). From then on every allocation below the
 * new threshold, in every thread, comes from the malloc arenas, and an arena keeps its high-water
 * mark. In a run, blocks of 150–450 KiB are freed early (Node's os.cpus() buffer, ICU's tables,
 * TurboFan's compile zones on V8's compile threads: `strace -f -k -e trace=munmap`), and a sweep
 * that boots one machine per point then grows by ~25–30% (issue #13's bound, docs/scenarios.md).
 * Setting the threshold explicitly turns the dynamic adjustment off (mallopt(3): "setting this
 * parameter disables dynamic adjustment"); its value is glibc's own default, 128 KiB
 * (DEFAULT_MMAP_THRESHOLD_MIN). The variable is read once, at process start, so it cannot be set
 * from inside Node: hence the second process. Measured in docs/scenarios.md (RSS line of
 * `npm run bench:scenarios -- --only random-regression`).
 *
 * The parent does nothing but wait: its stdio is the child's (inherited), its exit status is the
 * child's. Signals: the child stays in the parent's process group, so a signal to the group (a
 * terminal's Ctrl-C, `kill -TERM -- -PGID`, GNU timeout) reaches both; the parent passes each
 * SIGINT or SIGTERM delivery it counts on to the child as SIGUSR2, and the child counts a
 * delivery that reached both once (src/harness/signals.ts: the CLI's "first signal stops
 * cleanly, second leaves at once"). The child also watches its parent (getppid every second) and
 * stops as on a signal if the parent is gone (e.g. killed with SIGKILL), so that it never runs
 * on alone.
 *
 * Not done: on other platforms (the variable is glibc's), when the user set the threshold
 * (MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES' glibc.malloc.mmap_threshold), or with
 * DEFERLAB_NO_REEXEC=1 (e.g. to profile one process).
 * Context: main thread, before anything else runs.
 */
import { spawn } from 'node:child_process';
import { EXIT_INTERRUPTED } from '../errors.js';
import { FORWARD_SIGNAL, SignalDeliveries, STOP_SIGNALS } from './signals.js';

/** glibc's environment variable for M_MMAP_THRESHOLD (mallopt(3)). */
export const MMAP_THRESHOLD_ENV = 'MALLOC_MMAP_THRESHOLD_';
/** 128 KiB: glibc's default threshold (DEFAULT_MMAP_THRESHOLD_MIN, malloc/malloc.c). */
export const MMAP_THRESHOLD_BYTES = 128 * 1024;
/** Set in the child: the parent's pid. Its presence says "this is the started-again process". */
export const REEXEC_ENV = 'DEFERLAB_REEXEC_PARENT';
/** Set to 1 to run in one process (no fixed threshold). */
export const NO_REEXEC_ENV = 'DEFERLAB_NO_REEXEC';

/** Whether this process should start itself again with the threshold fixed. */
export function reexecWanted(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'linux') return false;
  if (env[REEXEC_ENV] !== undefined) return false;
  if (env[NO_REEXEC_ENV] === '1') return false;
  if (env[MMAP_THRESHOLD_ENV] !== undefined) return false;
  if ((env.GLIBC_TUNABLES ?? '').includes('glibc.malloc.mmap_threshold')) return false;
  return true;
}

/** The threshold this process runs with: MALLOC_MMAP_THRESHOLD_'s value, or null (dynamic). */
export function mmapThresholdInEffect(env: NodeJS.ProcessEnv = process.env): number | null {
  const v = env[MMAP_THRESHOLD_ENV];
  if (v === undefined || !/^\d+$/.test(v)) return null;
  return Number(v);
}

/** True in the process started by {@link reexecWithFixedThreshold}. */
export function isReexecChild(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[REEXEC_ENV] !== undefined;
}

/**
 * In the parent: start this script again (same Node, flags and arguments) with the threshold set,
 * wait for it and exit as it did; never returns. In a process that should not (see
 * {@link reexecWanted}), returns at once; in the child, also starts watching the parent.
 */
export async function reexecWithFixedThreshold(): Promise<void> {
  if (isReexecChild()) {
    watchParent(Number(process.env[REEXEC_ENV]));
    return;
  }
  if (!reexecWanted(process.env)) return;
  const script = process.argv[1];
  if (!script) return;
  const child = spawn(process.execPath, [...process.execArgv, script, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, [MMAP_THRESHOLD_ENV]: String(MMAP_THRESHOLD_BYTES), [REEXEC_ENV]: String(process.pid) },
  });
  const deliveries = new SignalDeliveries();
  let passedOn = 0;
  /** The first stop signal this process got: what it dies of if the child died of a forward. */
  let stoppedBy: NodeJS.Signals | undefined;
  const forward = (signal: NodeJS.Signals) => {
    stoppedBy ??= signal;
    const count = deliveries.own(signal);
    if (count <= passedOn) return; // a copy of a delivery passed on already (GNU timeout's pair)
    passedOn = count;
    child.kill(FORWARD_SIGNAL);
  };
  const hangup = () => {
    child.kill('SIGHUP');
  };
  const detach = () => {
    for (const s of STOP_SIGNALS) process.off(s, forward);
    process.off('SIGHUP', hangup);
  };
  for (const s of STOP_SIGNALS) process.on(s, forward);
  process.on('SIGHUP', hangup);
  await new Promise<never>((_, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      detach();
      // A child stopped before its handlers were in place (still loading its modules) dies of the
      // stop signal or of the forward: that is an interrupted command, said and exited as the
      // child would have (130, docs/cli.md), not a death by signal (143 for SIGTERM).
      if (signal !== null && (signal === FORWARD_SIGNAL || STOP_SIGNALS.includes(signal) || stoppedBy)) {
        process.stderr.write('deferlab: interrupted\n');
        process.exit(EXIT_INTERRUPTED);
      }
      if (signal) process.kill(process.pid, signal);
      process.exit(code ?? 1);
    });
  }).catch((e: unknown) => {
    // Could not start the second process: say so and run here, threshold not fixed.
    detach();
    process.stderr.write(
      `deferlab: could not restart with ${MMAP_THRESHOLD_ENV} set (${e instanceof Error ? e.message : String(e)}); running in this process\n`,
    );
  });
}

/** The child: if the parent is gone (getppid changed), stop as on SIGTERM. Checked every second. */
function watchParent(parentPid: number): void {
  if (!Number.isInteger(parentPid) || parentPid <= 0) return;
  const timer = setInterval(() => {
    if (process.ppid !== parentPid) {
      clearInterval(timer);
      process.kill(process.pid, 'SIGTERM');
    }
  }, 1000);
  timer.unref();
}
