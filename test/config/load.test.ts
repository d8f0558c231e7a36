import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';

const cwd = mkdtempSync(join(tmpdir(), 'deferlab-load-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  writeFileSync(join(cwd, name), text);
  return name;
};
const messageOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return {
      message: (err as Error).message,
      code: (err as { code?: string }).code,
      exitStatus: (err as { exitStatus?: number }).exitStatus,
    };
  }
  throw new Error('expected an error');
};

describe('loadConfigFile', () => {
  it('reads and parses, resolving the path against cwd', () => {
    const loaded = loadConfigFile(write('ok.json', '{"cpus": 4}'), cwd);
    expect(loaded).toEqual({ name: 'ok.json', path: join(cwd, 'ok.json'), data: { cpus: 4 } });
  });

  it('skips a byte-order mark', () => {
    expect(loadConfigFile(write('bom.json', '\uFEFF{"hz": 100}'), cwd).data).toEqual({ hz: 100 });
  });

  it('a trailing comma: line and column', () => {
    expect(messageOf(() => loadConfigFile(write('comma.json', '{\n  "cpus": 4,\n  "hz": 100,\n}'), cwd))).toEqual({
      message:
        'comma.json is not valid JSON at line 4, column 1: Expected double-quoted property name; JSON allows no comments and no trailing commas',
      code: 'E_CONFIG_SYNTAX',
      exitStatus: 2,
    });
  });

  it('a comment: line and column', () => {
    expect(
      messageOf(() => loadConfigFile(write('comment.json', '{\n  // four CPUs\n  "cpus": 4\n}'), cwd)).message,
    ).toBe(
      "comment.json is not valid JSON at line 2, column 3: Expected property name or '}'; JSON allows no comments and no trailing commas",
    );
  });

  it('an empty file', () => {
    expect(messageOf(() => loadConfigFile(write('empty.json', ''), cwd)).message).toBe(
      'empty.json is not valid JSON at line 1, column 1: Unexpected end of JSON input; JSON allows no comments and no trailing commas',
    );
  });

  it('a missing file names the resolved path', () => {
    expect(messageOf(() => loadConfigFile('nope.json', cwd))).toEqual({
      message: `--config must name an existing file (got "nope.json", resolved to ${join(cwd, 'nope.json')})`,
      code: 'E_CONFIG_NOT_FOUND',
      exitStatus: 2,
    });
  });
});
