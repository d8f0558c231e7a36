/**
 * The context-switch model (`--switch-cost host|off|NS`, config key `switchCost`): the lab's
 * same-thread switch (a function call through the scheduler, ~1 µs) is cheaper than a kernel's
 * (docs/scale.md: 0.4–0.5x in every bench:scale run), and dilation cannot raise it (it divides
 * every cost alike). So a switch is made to last at least what this host's kernel takes for one:
 * the incoming task's thread, once it owns the CPU, spins until FLOOR ns have passed since the
 * outgoing side's schedule() began (src/machine/runtime.ts enterCpu, src/machine/switch-floor.ts). A
 * switch the lab already paid more for (a cross-thread hand-off, a cold path) is not charged.
 * What is charged is a model, named as one in the setup line and results.json; the figure is
 * measured, never a constant:
 *
 *   host  (default) measured at start-up on this host's kernel by src/harness/switch-cost.c
 *         (lmbench's lat_ctx method: a futex ping-pong between two threads pinned to CPU 0,
 *         minus the same system calls without a switch), compiled with `cc` once and kept in the
 *         cache directory. No compiler, or the probe fails: no charge, and the setup line says so.
 *   off   no charge: the lab's own switch.
 *   NS    a given floor in ns (a sweep, or another machine's figure).
 *
 * The floor is in emulated ns: at TDF N the spin lasts N times as long in host time, so that the
 * emulated machine switches at its kernel's speed.
 *
 * Context: main thread, before the first machine boots (resolveSwitchCost: ~0.1 s of both host
 * cores for the probe, plus ~0.3 s for the first compile on a machine).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaleCacheFile } from './tdf.js';

export type SwitchCostSetting = 'host' | 'off' | number;

export interface SwitchCostChoice {
  /** The floor in emulated ns; 0: no charge. */
  ns: number;
  mode: 'host' | 'given' | 'off';
  /** How it was chosen, for the setup line and results.json. */
  how: string;
  /** With `host` and a probe that ran: its two measurements (ns). */
  pingpongNs?: number;
  syscallsNs?: number;
}

/** What the probe printed, or what is wrong with it. */
export function parseProbe(
  out: string,
): { pingpongNs: number; syscallsNs: number; switchNs: number } | { problem: string } {
  const m = /pingpong_ns=(-?\d+) syscalls_ns=(-?\d+) switch_ns=(-?\d+)/.exec(out);
  if (!m) return { problem: `unexpected output ${JSON.stringify(out.trim().slice(0, 80))}` };
  const [pingpongNs, syscallsNs, switchNs] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (!(pingpongNs > 0 && syscallsNs >= 0 && switchNs > 0))
    return { problem: `implausible figures (ping-pong ${pingpongNs} ns, system calls ${syscallsNs} ns)` };
  return { pingpongNs, syscallsNs, switchNs };
}

/** The probe's source: beside this module in src/, or src/harness/ from dist/src/harness/. */
function probeSource(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const p of [join(here, 'switch-cost.c'), join(here, '../../../src/harness/switch-cost.c')])
    if (existsSync(p)) return p;
  return undefined;
}

/**
 * Make `dir` one component at a time (never mkdirSync's `recursive`, which hangs on Node 20 under
 * /proc: src/report/run/outdir.ts). Throws what the first component that cannot be made throws.
 */
function makeDirsSync(dir: string): void {
  const missing: string[] = [];
  for (let p = resolve(dir); !existsSync(p); p = dirname(p)) {
    missing.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const m of missing) {
    try {
      mkdirSync(m);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/**
 * Compile the probe once per source into the cache directory (or, where that cannot be written,
 * the temp directory); returns the binary or why not.
 */
function probeBinary(): { bin: string } | { why: string } {
  const src = probeSource();
  if (!src) return { why: 'the probe src/harness/switch-cost.c is missing' };
  const name = `switch-cost-${createHash('sha256').update(readFileSync(src)).digest('hex').slice(0, 12)}`;
  let why = '';
  for (const dir of [dirname(scaleCacheFile()), join(tmpdir(), 'deferlab')]) {
    const bin = join(dir, name);
    if (existsSync(bin)) return { bin };
    try {
      makeDirsSync(dir);
    } catch (e) {
      why = `cannot create ${dir}: ${(e as Error).message}`;
      continue;
    }
    const tmp = `${bin}.${process.pid}.tmp`; // another process may compile at the same time: rename is atomic
    const cc = spawnSync('cc', ['-O2', '-pthread', '-o', tmp, src], { encoding: 'utf8', timeout: 60_000 });
    if (cc.error) return { why: `no C compiler (cc: ${cc.error.message})` };
    if (cc.status !== 0) {
      rmSync(tmp, { force: true });
      why = `cc failed in ${dir}: ${(cc.stderr || '').split('\n')[0]}`;
      continue;
    }
    try {
      renameSync(tmp, bin);
      return { bin };
    } catch (e) {
      rmSync(tmp, { force: true });
      why = `cannot write ${bin}: ${(e as Error).message}`;
    }
  }
  return { why };
}

/** Run the probe: the host kernel's switch, or why it could not be measured. */
export function measureHostSwitch(): { pingpongNs: number; syscallsNs: number; switchNs: number } | { why: string } {
  if (process.platform !== 'linux') return { why: 'the probe needs Linux (futex, sched_setaffinity)' };
  const b = probeBinary();
  if ('why' in b) return b;
  const r = spawnSync(b.bin, [], { encoding: 'utf8', timeout: 10_000 });
  if (r.error) return { why: `the probe did not finish: ${r.error.message}` };
  if (r.status !== 0) return { why: `the probe failed: ${(r.stderr || '').split('\n')[0]}` };
  const p = parseProbe(r.stdout);
  return 'problem' in p ? { why: `the probe's ${p.problem}` } : p;
}

let remembered: SwitchCostChoice | undefined;

/**
 * The run's switch floor from the config's `switchCost`. `host` measures once per process (every
 * point and scenario of a run shares it). Context: main thread, before the first machine boots.
 */
export function resolveSwitchCost(setting: SwitchCostSetting): SwitchCostChoice {
  if (setting === 'off' || setting === 0) return { ns: 0, mode: 'off', how: 'off: the lab switches at its own cost' };
  if (typeof setting === 'number') return { ns: setting, mode: 'given', how: `given (--switch-cost ${setting})` };
  if (remembered) return remembered;
  const m = measureHostSwitch();
  remembered =
    'why' in m
      ? { ns: 0, mode: 'host', how: `not charged: ${m.why}; give --switch-cost NS to set one` }
      : {
          ns: m.switchNs,
          mode: 'host',
          how: `this host's kernel, measured at start-up: futex ping-pong on one CPU ${m.pingpongNs} ns − its system calls ${m.syscallsNs} ns (lmbench lat_ctx; src/harness/switch-cost.c)`,
          pingpongNs: m.pingpongNs,
          syscallsNs: m.syscallsNs,
        };
  return remembered;
}
