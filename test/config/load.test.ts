import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { duplicateKey, loadConfigFile } from '../../src/config/load.js';

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
        'comma.json is not valid JSON at line 4, column 1: Expected double-quoted property name; config files are JSON, which allows no comments and no trailing commas',
      code: 'E_CONFIG_SYNTAX',
      exitStatus: 2,
    });
  });

  it("a file that is not JSON at all: V8's reason without its echo of the file's first bytes", () => {
    const msg = messageOf(() => loadConfigFile(write('shadow', 'root:*:20250101:0:99999:7:::\n'), cwd)).message;
    expect(msg).toBe(
      "shadow is not valid JSON: Unexpected token 'r'; config files are JSON, which allows no comments and no trailing commas",
    );
    expect(msg).not.toContain('root:');
  });

  it('a comment: line and column', () => {
    expect(
      messageOf(() => loadConfigFile(write('comment.json', '{\n  // four CPUs\n  "cpus": 4\n}'), cwd)).message,
    ).toBe(
      "comment.json is not valid JSON at line 2, column 3: Expected property name or '}'; config files are JSON, which allows no comments and no trailing commas",
    );
  });

  it('an empty file', () => {
    expect(messageOf(() => loadConfigFile(write('empty.json', ''), cwd)).message).toBe(
      'empty.json is empty: a config file is one JSON object, like {"cpus": 4, "irq": {"rate": "20k"}} ({} for the defaults)',
    );
    expect(messageOf(() => loadConfigFile(write('blank.json', ' \n\t\n'), cwd)).message).toMatch(
      /^blank\.json is empty: /,
    );
  });

  it.each([
    ['lab.yaml', 'YAML'],
    ['lab.yml', 'YAML'],
    ['lab.TOML', 'TOML'],
  ])('%s that is not JSON: says config files are JSON, in one line', (name, format) => {
    expect(messageOf(() => loadConfigFile(write(name, 'cpus: 4\n# a comment\n'), cwd))).toEqual({
      message: `${name} is not valid JSON: config files are JSON, not ${format}; convert ${name} to JSON, like {"cpus": 4, "irq": {"rate": "20k"}}`,
      code: 'E_CONFIG_SYNTAX',
      exitStatus: 2,
    });
  });

  it('a .yaml file that holds JSON is read', () => {
    expect(loadConfigFile(write('json.yaml', '{"cpus": 4}'), cwd).data).toEqual({ cpus: 4 });
  });

  it('a key given twice: JSON.parse would keep the last; the file is rejected, naming both lines', () => {
    expect(
      messageOf(() => loadConfigFile(write('twice.json', '{\n  "cpus": 4,\n  "hz": 100,\n  "cpus": 2\n}'), cwd)),
    ).toEqual({
      message:
        'cpus in twice.json is given twice (lines 2 and 4); give each setting once: JSON would keep only the last',
      code: 'E_CONFIG_SYNTAX',
      exitStatus: 2,
    });
  });

  it('a missing file names the resolved path', () => {
    expect(messageOf(() => loadConfigFile('nope.json', cwd))).toEqual({
      message: `--config must name an existing file (got "nope.json", resolved to ${join(cwd, 'nope.json')})`,
      code: 'E_CONFIG_NOT_FOUND',
      exitStatus: 2,
    });
  });

  it.each(['', ' '])('an empty path %j is refused as empty, not read as the working directory', (given) => {
    expect(messageOf(() => loadConfigFile(given, cwd))).toEqual({
      message: `--config must not be empty (got ${JSON.stringify(given)}); give the path of a JSON config file, like --config lab.json`,
      code: 'E_BAD_OPTION',
      exitStatus: 2,
    });
  });
});

describe('duplicateKey', () => {
  it.each([
    ['{"cpus": 4, "hz": 100}', undefined],
    ['{"cpus": 4, "cpus": 2}', { path: ['cpus'], lines: [1, 1] }],
    ['{"irq": {"rate": 1}, "workload": {"rate": 2}}', undefined],
    ['{"irq": {"rate": 1,\n "rate": 2}}', { path: ['irq', 'rate'], lines: [1, 2] }],
    [
      '{"sweep": {"param": "a", "values": [{"k": 1}, {"k": 2, "k": 3}]}}',
      { path: ['sweep', 'values', 1, 'k'], lines: [1, 1] },
    ],
    // Braces, colons, quotes and escapes inside strings are not structure.
    ['{"a": "x\\"y\\": {", "b": 1, "c": "\\"b\\": 2"}', undefined],
    // Keys compare as JSON reads them: "\u0041" is "A".
    ['{"\\u0041": 1, "A": 2}', { path: ['A'], lines: [1, 1] }],
    ['[{"a": 1}, {"a": 2}]', undefined],
  ])('%s', (text, expected) => {
    JSON.parse(text); // each case is valid JSON
    expect(duplicateKey(text)).toEqual(expected);
  });
});
