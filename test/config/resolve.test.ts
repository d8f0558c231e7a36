/**
 * resolveConfig: defaults, layers, units, and the shape of what it returns.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { machineDefaults, tcpLatOptions } from '../../src/config/defaults.js';
import { DEFAULTS, type PartialConfig, resolveConfig } from '../../src/config/schema.js';
import { DeferlabError } from '../../src/errors.js';
import { machineOptions, strategyRefs } from '../../src/harness/options.js';
import { resolveSwitchCost } from '../../src/harness/switch-cost.js';

const cwd = mkdtempSync(join(tmpdir(), 'deferlab-resolve-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
writeFileSync(join(cwd, 'mine.mjs'), 'export default class {}\n');
mkdirSync(join(cwd, 'sub'));
symlinkSync(join(cwd, 'mine.mjs'), join(cwd, 'link.mjs'));

const now = new Date(2025, 0, 2, 3, 4, 5); // local time: the stamp is local too
const resolve = (flags: PartialConfig = {}, file?: unknown) =>
  resolveConfig({ flags, file, fileName: 'cfg.json', cwd, now, random: () => 0.5 });

function errorOf(fn: () => unknown): DeferlabError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DeferlabError) return err;
    throw err;
  }
  throw new Error('expected a DeferlabError');
}

describe('defaults', () => {
  it('resolve to the documented values', () => {
    const c = resolve();
    expect({ ...c, strategies: c.strategies.map((s) => s.label) }).toEqual({
      cpus: 2,
      hz: 250,
      trialMs: 1000,
      warmupMs: 300,
      sliceMs: 100,
      trials: 5,
      strategies: [
        'inline',
        'workqueue',
        'workqueue(wq=system)',
        'tasklet',
        'timer',
        'timer(deferrable=true)',
        'unbound',
        'irq_work',
        'bh_workqueue',
      ],
      baseline: 'inline',
      workload: tcpLatOptions({ msgSize: 64, clientCpu: 0, serverCpu: 1, ringBytes: 4 * 1024 * 1024 }),
      irq: { rate: 20000, pattern: 'constant', burstSize: 32, cpus: 'all' },
      seed: 2 ** 31,
      notify: 'if-idle',
      topology: { smt: [[0], [1]], cache: [[0, 1]], numa: [[0, 1]] },
      fastPool: { trigger: 1024, variant: '64' },
      switchCost: 'host',
      unboundWorkers: 2,
      lockSpins: 200,
      idle: 'auto',
      kthreads: 'cpu',
      hogs: 'cpu',
      kernel: '6.9',
      softirqDefer: null,
      watchdogMs: 2000,
      tracing: true,
      hostStalls: 'keep',
      hostSteal: false,
      kthreadCharge: 'work',
      hostHelpers: 'nice',
      outDir: join(cwd, 'deferlab-results', '20250102-030405'),
      sweep: null,
      control: null,
      until: null,
      wide: false,
      threshold: 2,
      timeline: null,
      tdf: 1,
    });
  });

  it('boot the default machine (machineDefaults), with the run seed and strategies', () => {
    const c = resolve();
    // A run renices the process's other threads (--host-helpers nice) and charges switches at the
    // host kernel's measured cost where it can measure one (--switch-cost host); the API's
    // machineDefaults do neither.
    const floor = resolveSwitchCost('host').ns;
    expect(machineOptions(c)).toEqual({
      ...machineDefaults(),
      hostHelpers: 'nice',
      seed: c.seed,
      strategies: strategyRefs(c),
      ...(floor > 0 ? { switchFloorNs: floor } : {}),
    });
    const four = resolve({ cpus: 4, workload: { kind: 'irq_only' } });
    expect(machineOptions({ ...four, switchCost: 'off' })).toEqual({
      ...machineDefaults(4),
      hostHelpers: 'nice',
      workload: { kind: 'irq_only' },
      seed: four.seed,
      strategies: strategyRefs(four),
    });
  });

  it('--control appends a second instance of the baseline spec, labelled as the control', () => {
    const c = resolve({
      strategies: ['tasklet', 'timer:deferrable=true'],
      baseline: 'timer(deferrable=true)',
      control: true,
    });
    expect(c.control).toBe('timer(deferrable=true) (control)');
    expect(c.strategies.map((s) => s.label)).toEqual([
      'tasklet',
      'timer(deferrable=true)',
      'timer(deferrable=true) (control)',
    ]);
    const [, base, control] = c.strategies;
    expect({ ...control, label: base.label }).toEqual(base); // same kind, name, file, options
  });

  it('--until takes a percentage, with --max-time or its default of 10 min', () => {
    expect(resolve({ until: '3%' }).until).toEqual({ pct: 3, maxTimeMs: 600_000 });
    expect(resolve({ until: '0.5', maxTimeMs: '90s' }).until).toEqual({ pct: 0.5, maxTimeMs: 90_000 });
    expect(resolve({ until: 'off' }).until).toBeNull();
  });

  it("a scenario preset's control, --until and cap: taken, or dropped by --no-control and --until off", () => {
    const preset = { name: 'cpu-hog', config: { control: true, until: 20, maxTimeMs: '60s' } as PartialConfig };
    const on = resolveConfig({ cwd, now, preset });
    expect(on.control).toBe('inline (control)');
    expect(on.until).toEqual({ pct: 20, maxTimeMs: 60_000 });
    // The preset's cap without --until is no contradiction: the user turned --until off.
    const off = resolveConfig({ cwd, now, preset, flags: { control: false, until: 'off' } as PartialConfig });
    expect(off.control).toBeNull();
    expect(off.until).toBeNull();
    expect(resolveConfig({ cwd, now, preset, flags: { until: '5' } as PartialConfig }).until).toEqual({
      pct: 5,
      maxTimeMs: 60_000,
    });
  });

  it('--timeline keeps the last 50 ms of each trial, or --timeline-window; the machine gets rings sized for it', () => {
    expect(resolve({ timeline: true }).timeline).toEqual({ windowMs: 50 });
    const c = resolve({ timeline: true, timelineWindowMs: '10ms' });
    expect(c.timeline).toEqual({ windowMs: 10 });
    expect(machineOptions(c).timelineRecords).toBe(16384);
    expect(machineOptions(resolve()).timelineRecords).toBeUndefined();
  });

  it('are frozen', () => {
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.irq)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.strategies)).toBe(true);
  });

  it('choose a random uint32 seed when none is given', () => {
    expect(resolveConfig({ cwd, random: () => 0 }).seed).toBe(0);
    expect(resolveConfig({ cwd, random: () => 0.999999999999 }).seed).toBe(4294967295);
    const seed = resolveConfig({ cwd }).seed;
    expect(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32).toBe(true);
  });

  it('unboundWorkers and the topology follow the CPU count', () => {
    const c = resolve({ cpus: 3 });
    expect(c.unboundWorkers).toBe(3);
    expect(c.topology).toEqual({ smt: [[0], [1], [2]], cache: [[0, 1, 2]], numa: [[0, 1, 2]] });
  });

  it('the CPU count follows a described topology when not given', () => {
    const c = resolve({ topology: 'smt=0-1/2-3' });
    expect(c.cpus).toBe(4);
    expect(c.topology).toEqual({
      smt: [
        [0, 1],
        [2, 3],
      ],
      cache: [[0, 1, 2, 3]],
      numa: [[0, 1, 2, 3]],
    });
  });
});

describe('the resolved config', () => {
  it('is deeply frozen', () => {
    const c = resolve({ strategies: ['timer:deferrable=true', 'inline'], irq: { cpus: '0' }, sweep: 'irq_rate:0,10k' });
    for (const part of [
      c,
      c.workload,
      c.irq,
      c.irq.cpus,
      c.strategies,
      c.strategies[0],
      c.strategies[0].options,
      c.topology,
      c.topology.smt[0],
      c.sweep,
      c.sweep?.values,
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
  });

  it('is plain JSON (survives a round trip and structured cloning unchanged)', () => {
    const c = resolve({ strategies: ['./mine.mjs:k=1', 'inline'], sweep: 'trigger:64:1024:*4' });
    expect(JSON.parse(JSON.stringify(c))).toEqual(c);
    expect(structuredClone(c)).toEqual(c);
    expect(JSON.stringify(c)).not.toContain('undefined');
  });
});

describe('units', () => {
  it.each([
    [1500, 1500],
    ['1500', 1500],
    ['1500ms', 1500],
    ['1.5s', 1500],
    ['2min', 120000],
  ])('--duration %j is %d ms', (given, ms) => {
    expect(resolve({ trialMs: given }).trialMs).toBe(ms);
  });

  it.each([
    ['64', 64],
    ['4K', 4096],
    ['4KiB', 4096],
    ['1M', 1048576],
    ['1MiB', 1048576],
    [2048, 2048],
  ])('--msg-size %j is %d bytes', (given, bytes) => {
    const c = resolve({ workload: { msgSize: given } });
    expect(c.workload.kind === 'tcp_lat' && c.workload.msgSize).toBe(bytes);
  });

  it.each([
    ['20000', 20000],
    ['20k', 20000],
    ['1M', 1000000],
    ['1.5k', 1500],
    [0, 0],
  ])('--irq-rate %j is %d per second', (given, rate) => {
    expect(resolve({ irq: { rate: given } }).irq.rate).toBe(rate);
  });

  it('--irq-cpus takes lists, ranges and all', () => {
    expect(resolve({ cpus: 4, irq: { cpus: '0-2' } }).irq.cpus).toEqual([0, 1, 2]);
    expect(resolve({ cpus: 4, irq: { cpus: [3, 1] } }).irq.cpus).toEqual([3, 1]);
    expect(resolve({ irq: { cpus: 'all' } }).irq.cpus).toBe('all');
  });

  it('--seed takes decimal and hex', () => {
    expect(resolve({ seed: '42' }).seed).toBe(42);
    expect(resolve({ seed: '0xdeadbeef' }).seed).toBe(0xdeadbeef);
  });

  it('--fastmix takes 64 and 32 as strings or numbers', () => {
    expect(resolve({ fastPool: { variant: 32 } }).fastPool.variant).toBe('32');
  });
});

describe('layers', () => {
  it('defaults < config file < flags, field by field', () => {
    const c = resolve(
      { trials: '7', workload: { msgSize: '1K' } },
      { trials: 2, hz: 100, workload: { ringBytes: '64K' } },
    );
    expect(c.trials).toBe(7);
    expect(c.hz).toBe(100);
    expect(c.workload).toEqual(tcpLatOptions({ msgSize: 1024, ringBytes: 65536 }));
  });

  it('a preset sits between the defaults and the file', () => {
    const c = resolveConfig({
      preset: { name: 'p', config: { cpus: 4, trials: 1, hz: 1000 } },
      file: { trials: 2 },
      flags: { hz: 300 },
      cwd,
    });
    expect([c.cpus, c.trials, c.hz]).toEqual([4, 2, 300]);
  });

  it('the flags can switch the workload, dropping the file’s tcp_lat settings', () => {
    const c = resolve({ workload: { kind: 'irq_only' } }, { workload: { kind: 'tcp_lat', msgSize: 4096 } });
    expect(c.workload).toEqual({ kind: 'irq_only' });
  });

  it('a config file may use the flags’ units', () => {
    const c = resolve({}, { trialMs: '2s', workload: { msgSize: '4K' }, irq: { rate: '10k', cpus: '0,1' } });
    expect([c.trialMs, c.irq.rate, c.irq.cpus]).toEqual([2000, 10000, [0, 1]]);
  });

  it('outDir is resolved against cwd, or null', () => {
    expect(resolve({ outDir: 'out' }).outDir).toBe(join(cwd, 'out'));
    expect(resolve({ outDir: null }, { outDir: 'file-out' }).outDir).toBeNull();
  });

  it('the baseline may be written as the spec of a listed strategy', () => {
    const c = resolve({ strategies: ['timer:deferrable=true', 'inline'], baseline: 'timer:deferrable=true' });
    expect(c.baseline).toBe('timer(deferrable=true)');
  });

  it.each([
    ['the spec as listed', './mine.mjs:delay=2'],
    ['without ./', 'mine.mjs:delay=2'],
    ['an absolute path', `${join(cwd, 'mine.mjs')}:delay=2`],
    ['through another path to the same file', './sub/../mine.mjs:delay=2'],
    ['a symbolic link to the file', './link.mjs:delay=2'],
    ['the label', 'mine.mjs(delay=2)'],
  ])('the baseline names a listed strategy file by %s', (_what, baseline) => {
    const c = resolve({ strategies: ['./mine.mjs:delay=2', 'inline'], baseline });
    expect(c.baseline).toBe('mine.mjs(delay=2)');
  });

  it('a file spec with other options than the listed one is not that strategy', () => {
    const err = errorOf(() =>
      resolve({ strategies: ['./mine.mjs:delay=2', 'inline'], baseline: './mine.mjs:delay=3' }),
    );
    expect(err.message).toBe(
      '--baseline must be the label or spec of one of the strategies: mine.mjs(delay=2), inline ' +
        '(got "./mine.mjs:delay=3"); choose one of those, or add the strategy ./mine.mjs:delay=3',
    );
  });

  it('a file spec in the config file names the strategy the file lists', () => {
    const c = resolve(
      {},
      { strategies: ['inline', `${join(cwd, 'mine.mjs')}:b=1,a=x`], baseline: './mine.mjs:a=x,b=1' },
    );
    expect(c.baseline).toBe('mine.mjs(a=x,b=1)');
  });
});

describe('errors', () => {
  it('carry a stable code and exit status 2', () => {
    const err = errorOf(() => resolve({ cpus: 0 }));
    expect(err).toMatchObject({ code: 'E_BAD_OPTION', exitStatus: 2, usage: true });
    expect(err.message).toBe('--cpus must be an integer from 1 to 64 (got 0)');
  });

  it('name a file setting by its path and the file', () => {
    const err = errorOf(() => resolve({}, { workload: { clientCpu: 1 } }));
    expect(err.message).toBe(
      'workload.clientCpu in cfg.json and --server-cpu must be different CPUs (both are 1); put the server on another CPU, e.g. --server-cpu 0',
    );
    expect(err.code).toBe('E_CONFLICT');
  });

  it('a config layer that is not an object', () => {
    expect(errorOf(() => resolve({}, 'cpus=4')).message).toBe(
      'cfg.json must hold a JSON object of settings, like {"cpus": 4} (got "cpus=4")',
    );
  });
});

describe("a command's rules (scenarios, demo)", () => {
  const rules = {
    command: 'scenario test',
    rules: {
      fixed: {
        strategies: { kind: 'sets' as const, why: 'it compares a and b' },
        outDir: { kind: 'unused' as const, why: 'it writes nothing', allows: null },
      },
      minCpus: { count: 3, why: 'which needs three' },
    },
  };
  const withRules = (flags: PartialConfig, file?: unknown) =>
    resolveConfig({ flags, file, fileName: 'cfg.json', cwd, now, random: () => 0.5, rules });

  it('reject a fixed setting from the flags before one from the file, and accept an allowed value', () => {
    expect(errorOf(() => withRules({ strategies: ['tasklet'] }, { strategies: ['inline'] })).message).toBe(
      "scenario test sets --strategy itself (it compares a and b); drop --strategy, or use 'deferlab run' for your own comparison",
    );
    expect(errorOf(() => withRules({ cpus: 3 }, { outDir: 'x' })).message).toMatch(
      /^scenario test takes no outDir \(it writes nothing\); drop outDir in cfg.json, or /,
    );
    expect(withRules({ cpus: 3, outDir: null }).outDir).toBeNull();
  });

  it('the CPU count, also when a topology implies it', () => {
    expect(errorOf(() => withRules({ cpus: 2 })).message).toBe(
      '--cpus must be at least 3 for scenario test, which needs three (got 2); raise the CPU count to 3 or more',
    );
    expect(errorOf(() => withRules({}, {})).message).toBe(
      '--cpus must be at least 3 for scenario test, which needs three (got 2, the default); raise the CPU count to 3 or more',
    );
    expect(errorOf(() => withRules({ topology: 'smt=0-1' })).message).toBe(
      '--cpus must be at least 3 for scenario test, which needs three (got 2, as the topology describes); raise the CPU count to 3 or more',
    );
  });

  it('without rules, nothing is fixed', () => {
    expect(resolve({ strategies: ['tasklet'], cpus: 1, workload: { kind: 'irq_only' } }).baseline).toBe('tasklet');
  });
});

describe('a sweep beside the setting it sweeps', () => {
  it('the same layer: refused, the setting would be replaced at every point', () => {
    expect(errorOf(() => resolve({ fastPool: { trigger: 128 }, sweep: 'trigger:64,1024' })).message).toBe(
      '--trigger 128 has no effect beside --sweep trigger:64,1024, which sets trigger at every point; drop --trigger, or sweep that value alone: --sweep trigger:128',
    );
    expect(errorOf(() => resolve({}, { irq: { rate: '20k' }, sweep: 'irq_rate:1k,2k' })).message).toMatch(
      /^irq\.rate 20k in cfg\.json has no effect beside sweep irq_rate:1k,2k in cfg\.json/,
    );
  });

  it("the file's setting under the flags' sweep: overridden, as a lower layer is", () => {
    const c = resolve({ sweep: 'msg_size:64,128' }, { workload: { kind: 'tcp_lat', msgSize: '4K' } });
    expect(c.sweep).toEqual({ param: 'msg_size', values: [64, 128] });
  });
});

describe('docs/cli.md', () => {
  it('its complete config file example resolves', () => {
    const doc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const example = /## The config file[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    mkdirSync(join(cwd, 'strategies'), { recursive: true });
    writeFileSync(join(cwd, 'strategies', 'batched.ts'), '');
    const c = resolveConfig({ file: JSON.parse(example ?? ''), fileName: 'lab.json', cwd });
    expect(c.strategies.map((s) => s.label)).toEqual([
      'inline',
      'workqueue',
      'timer(deferrable=true)',
      'batched.ts(batch=8)',
      'inline (control)',
    ]);
    expect(c.control).toBe('inline (control)');
    expect(c.until).toEqual({ pct: 3, maxTimeMs: 300_000 });
    expect(c.sweep?.values).toHaveLength(9);
    expect(c.outDir).toBe(join(cwd, 'results', 'batched'));
  });
});

describe('the 5.15 profile as seed 000 ran it, and --softirq-defer (issue 26 items 4 and 6)', () => {
  it("--kernel 5.15 defaults HZ to its distribution's CONFIG_HZ (1000, Oracle's UEK config); --hz still wins", () => {
    expect(resolve({ kernel: '5.15' }).hz).toBe(1000);
    expect(resolve({ kernel: '5.15', hz: 250 }).hz).toBe(250);
    expect(resolve({ kernel: '6.9' }).hz).toBe(250);
  });

  it('softirqDefer is null (the kernel profile decides) unless given, and reaches the machine only when given', () => {
    expect(resolve({ kernel: '5.15' }).softirqDefer).toBeNull();
    expect(machineOptions(resolve({ kernel: '5.15' })).softirqDefer).toBeUndefined();
    expect(resolve({ kernel: '5.15', softirqDefer: 'off' }).softirqDefer).toBe(false);
    expect(machineOptions(resolve({ kernel: '5.15', softirqDefer: 'off' })).softirqDefer).toBe(false);
    expect(machineOptions(resolve({ kernel: '6.9', softirqDefer: 'on' })).softirqDefer).toBe(true);
  });

  it('a bad value is one line naming the setting and the values it takes', () => {
    const e = errorOf(() => resolve({ softirqDefer: 'maybe' as 'on' }));
    expect(e.message).toMatch(/softirq-defer.*must be one of on, off/);
    expect(e.message).not.toMatch(/\n/);
  });
});
