/**
 * Loading a user's strategy for the conformance suite: files outside the repository, in
 * TypeScript and in JavaScript, load and pass; a bad file, a bad option or a bad claim is one
 * line naming the file (or the built-in) and the problem, raised before any machine boots.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConformanceReport,
  checkStrategies,
  checkStrategy,
  formatConformance,
} from '../../src/conformance/index.js';
import { StrategyLoadError, StrategyOptionError } from '../../src/errors.js';
import { instantiate, loadStrategyClass } from '../../src/strategies/load.js';
import { problems, ref } from './fixtures/refs.js';

/** A strategy with no import at all (the types are written out), as a user might keep outside a project. */
const TS_STRATEGY = `
interface Deferred { readonly cpu: number; run(k: Kernel): void }
interface Tasklet { readonly id: number }
interface Kernel { readonly cpu: number; taskletSchedule(t: Tasklet): boolean }
interface Setup { readonly nrCpus: number; deferred(cpu: number): Deferred; createTasklet(name: string, fn: (k: Kernel) => void): Tasklet }

export default class OutsideTasklet {
  static readonly description = 'tasklet_schedule, from a file outside the repository';
  static readonly claims = { cpu: 'same', context: 'softirq' } as const;
  private readonly tasklets: Tasklet[] = [];
  setup(s: Setup): void {
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.tasklets.push(s.createTasklet('outside/' + c, (k) => d.run(k)));
    }
  }
  handoff(k: Kernel, d: Deferred): boolean {
    return k.taskletSchedule(this.tasklets[d.cpu]);
  }
}
`;

/** The same idea in plain JavaScript, a named export (the only class in the module). */
const MJS_STRATEGY = `
export class OutsideTimer {
  static description = 'add_timer_on(this CPU, jiffies + ahead), from a .mjs file';
  static claims = { context: 'softirq' };
  #ahead;
  timers = [];
  constructor(options) {
    this.#ahead = options.ahead ?? 0;
    if (typeof this.#ahead !== 'number') throw new Error('option ahead must be a number of jiffies');
  }
  setup(s) {
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.timers.push(s.createTimer('outside_timer/' + c, (k) => d.run(k)));
    }
  }
  handoff(k, d) {
    const t = this.timers[d.cpu];
    if (k.timerPending(t)) return false;
    k.addTimerOn(t, k.cpu, k.jiffies + this.#ahead);
    return true;
  }
}
`;

const BAD: Record<string, string> = {
  'syntax.ts': 'export default class X {\n  handoff(k: any, d: any) { return d.run(k) +; }\n}\n',
  'syntax.mjs': 'export default class X {\n  handoff(k, d) { return d.run(k) +; }\n}\n',
  'no-export.mjs': 'export const answer = 42;\n',
  'helpers-only.mjs': 'export function mix() {}\nexport class Pool {}\n',
  'no-handoff.ts': 'export default class NoHandoff {\n  setup(): void {}\n}\n',
  'plain-object.mjs': 'export default { name: "plain", setup() {}, handoff(k, d) { return true; } };\n',
  'ctor-throws.ts':
    'export default class Throws {\n  constructor(o: Record<string, unknown>) {\n    throw new Error("option batch is required (got " + JSON.stringify(o.batch) + ")");\n  }\n  handoff(): boolean { return true; }\n}\n',
  'bad-claims.mjs': "export default class C {\n  static claims = { cpu: 'local' };\n  handoff() { return true; }\n}\n",
  'setup-varies.mjs':
    "import { threadId } from 'node:worker_threads';\nexport default class V {\n  setup(s) { if (threadId % 2) s.createTasklet('only_in_some_threads', () => {}); }\n  handoff() { return true; }\n}\n",
  'setup-throws.mjs':
    "export default class S {\n  setup(s) { s.createWork('w', 'not a function'); }\n  handoff() { return true; }\n}\n",
};

let dir: string;
/** A directory outside the repository with no package.json at all. */
let bare: string;
const file = (name: string) => join(dir, name);
const fileRef = (path: string, options: Record<string, string | number | boolean> = {}) => ({
  label: path,
  name: path,
  kind: 'file' as const,
  url: pathToFileURL(path).href,
  options,
});

/** The error checkStrategy throws, with its type and its one line. */
async function loadError(p: Promise<unknown>): Promise<{ type: string; message: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as Error;
    expect(err.message.split('\n'), 'one line').toHaveLength(1);
    return { type: err.constructor.name, message: err.message };
  }
  throw new Error('expected the strategy to be refused');
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'deferlab-strategy-'));
  // An ES module project, as `npm init` + "type": "module" leaves it.
  writeFileSync(file('package.json'), '{ "type": "module" }\n');
  writeFileSync(file('outside.ts'), TS_STRATEGY);
  writeFileSync(file('outside.mjs'), MJS_STRATEGY);
  for (const [name, text] of Object.entries(BAD)) writeFileSync(file(name), text);
  bare = mkdtempSync(join(tmpdir(), 'deferlab-bare-'));
  writeFileSync(join(bare, 'outside.ts'), TS_STRATEGY);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(bare, { recursive: true, force: true });
});

describe('strategies from files outside the repository', () => {
  let reports: ConformanceReport[];
  beforeAll(async () => {
    reports = await checkStrategies([ref(file('outside.ts')), ref(`${file('outside.mjs')}:ahead=1`)], {
      durationMs: 400,
    });
  }, 120_000);

  it('a TypeScript file loads and passes', () => {
    expect(reports[0].strategy).toBe('outside.ts');
    expect(problems(reports[0]), formatConformance(reports[0])).toEqual([]);
  });

  it('a JavaScript (.mjs) file with options loads and passes', () => {
    expect(reports[1].strategy).toBe('outside.mjs(ahead=1)');
    expect(problems(reports[1]), formatConformance(reports[1])).toEqual([]);
  });

  // tsx loads a .ts file that no "type": "module" package.json covers as CommonJS; its
  // namespace is then { default: module.exports }, and load.ts looks inside for the class.
  it('a TypeScript file in a directory without package.json loads as its class, and passes', async () => {
    const r = fileRef(join(bare, 'outside.ts'));
    const cls = await loadStrategyClass(r);
    expect(cls?.name).toBe('OutsideTasklet');
    expect(cls?.description).toBe('tasklet_schedule, from a file outside the repository');
    expect(cls?.claims).toEqual({ cpu: 'same', context: 'softirq' });
    expect(instantiate(r, cls)).toBeInstanceOf(cls as NonNullable<typeof cls>);
    const report = await checkStrategy(r, { durationMs: 400 });
    expect(report.strategy).toBe(r.label);
    expect(problems(report), formatConformance(report)).toEqual([]);
  }, 60_000);
});

describe('a bad strategy is one line naming the file and the problem', () => {
  it('a syntax error in TypeScript', async () => {
    const e = await loadError(checkStrategy(fileRef(file('syntax.ts'))));
    expect(e.type).toBe('StrategyLoadError');
    expect(e.message.startsWith(`${file('syntax.ts')}: failed to load: `)).toBe(true);
    // As a JavaScript file's: `line L:C: reason`, the file named once, no esbuild `ERROR:`.
    expect(e.message).toMatch(/: failed to load: line \d+:\d+: \S/);
    expect(e.message).not.toContain('ERROR:');
    expect(e.message.split(file('syntax.ts')).length).toBe(2);
  });

  it('a syntax error in JavaScript', async () => {
    const e = await loadError(checkStrategy(fileRef(file('syntax.mjs'))));
    expect(e.type).toBe('StrategyLoadError');
    // Node says "Unexpected token ';'" with no place; the loader asks esbuild for one.
    expect(e.message.startsWith(`${file('syntax.mjs')}: failed to load: `)).toBe(true);
    expect(e.message).toMatch(/\b2:\d+\b/);
  });

  it('a missing file', async () => {
    const e = await loadError(checkStrategy(fileRef(file('missing.ts'))));
    expect(e).toEqual({ type: 'StrategyLoadError', message: `${file('missing.ts')}: file not found` });
  });

  it('a module that exports no class', async () => {
    const e = await loadError(checkStrategy(fileRef(file('no-export.mjs'))));
    expect(e.message).toBe(
      `${file('no-export.mjs')}: exports no strategy class; export a class with a handoff(k, d) method (see docs/strategies.md)`,
    );
  });

  it('a module whose classes have no handoff', async () => {
    const e = await loadError(checkStrategy(fileRef(file('helpers-only.mjs'))));
    expect(e.message).toBe(
      `${file('helpers-only.mjs')}: no exported class has a handoff(k, d) method (its exports: mix, Pool); see docs/strategies.md`,
    );
  });

  it('a default-exported class without handoff', async () => {
    const e = await loadError(checkStrategy(fileRef(file('no-handoff.ts'))));
    expect(e.message).toBe(
      `${file('no-handoff.ts')}: the default export has no handoff(k, d) method; a strategy class needs one`,
    );
  });

  it('a plain object as the default export', async () => {
    const e = await loadError(checkStrategy(fileRef(file('plain-object.mjs'))));
    expect(e.message).toBe(
      `${file('plain-object.mjs')}: exports a handoff function (found setup, handoff) but no class; a strategy is a class with a handoff(k, d) method, not a plain object: export default class Mine { handoff(k, d) { ... } } (see docs/strategies.md)`,
    );
  });

  it('a constructor that throws', async () => {
    const e = await loadError(checkStrategy(fileRef(file('ctor-throws.ts'))));
    expect(e).toEqual({
      type: 'StrategyLoadError',
      message: `${file('ctor-throws.ts')}: the constructor threw: option batch is required (got undefined)`,
    });
  });

  it('an unknown option key for a built-in', async () => {
    const e = await loadError(checkStrategy(ref('tasklet:hy=true')));
    expect(e).toEqual({ type: 'StrategyOptionError', message: 'strategy tasklet: unknown option hy (known: hi)' });
  });

  it('a bad option value for a built-in', async () => {
    const e = await loadError(checkStrategy(ref('unbound:scope=core')));
    expect(e.message).toBe('strategy unbound: option scope must be one of cpu, smt, cache, numa, system (got "core")');
  });

  it('a malformed static claims', async () => {
    const e = await loadError(checkStrategy(fileRef(file('bad-claims.mjs'))));
    expect(e).toEqual({
      type: 'StrategyLoadError',
      message: `${file('bad-claims.mjs')}: static claims.cpu must be 'same' or 'any' (got "local")`,
    });
  });

  it('a setup() that throws in the threads', async () => {
    const e = await loadError(checkStrategy(fileRef(file('setup-throws.mjs'))));
    expect(e).toEqual({
      type: 'StrategyLoadError',
      message: `${file('setup-throws.mjs')}: setup() failed: work "w" needs a callback function`,
    });
  }, 60_000);

  it('a setup() that differs between threads', async () => {
    const e = await loadError(checkStrategy(fileRef(file('setup-varies.mjs'))));
    expect(e).toEqual({
      type: 'StrategyLoadError',
      message: `${file('setup-varies.mjs')}: setup() failed: it created different kernel objects in different threads: setup must be deterministic (no randomness, clock or thread-dependent branches)`,
    });
  }, 60_000);

  it('bad conformance options', async () => {
    const e = await loadError(checkStrategy(ref('inline'), { cpus: 0 }));
    expect(e.message).toBe('conformance cpus must be an integer from 1 to 64 (got 0)');
  });

  it("the errors are the loader's own types", () => {
    expect(new StrategyLoadError('x')).toBeInstanceOf(Error);
    expect(new StrategyOptionError('x')).toBeInstanceOf(Error);
  });
});

/** A strategy that imports values of the plugin API from 'deferlab' (in a directory outside it). */
const USES_API = (ext: string) => `import { pickBool, Softirq, SOFTIRQ_NAMES, WORK_CPU_UNBOUND } from 'deferlab';
export default class UsesApi {
  static seen = { tasklet: Softirq.Tasklet, name: SOFTIRQ_NAMES[Softirq.NetRx], unbound: WORK_CPU_UNBOUND };
  ${ext === 'ts' ? 'readonly hi: boolean;' : ''}
  constructor(o${ext === 'ts' ? ': Record<string, unknown>' : ''}) {
    this.hi = pickBool(o, 'hi', true, 'uses_api');
  }
  handoff(k${ext === 'ts' ? ': any' : ''}, d${ext === 'ts' ? ': any' : ''}) { d.run(k); return true; }
}
`;

describe("values imported from 'deferlab' by a file outside it", () => {
  it.each(['ts', 'mjs'])('load in a .%s file, and its option helpers refuse a bad option', async (ext) => {
    const f = file(`uses-api.${ext}`);
    writeFileSync(f, USES_API(ext));
    const cls = (await loadStrategyClass(fileRef(f))) as unknown as {
      seen: unknown;
      new (o: Record<string, unknown>): { hi: boolean };
    };
    expect(cls.seen).toEqual({ tasklet: 6, name: 'NET_RX', unbound: -1 });
    expect(new cls({ hi: false }).hi).toBe(false);
    expect(() => new cls({ hi: 3 })).toThrow(StrategyOptionError);
    expect(() => new cls({ hi: 3 })).toThrow('strategy uses_api: option hi must be true or false (got 3)');
  });
});
