/**
 * The output directory, made and proven writable before a run (src/report/run/outdir.ts): each
 * reason it can fail is one problem with its own words, and nothing uses a recursive mkdir
 * (which loops forever on Node 20 under /proc).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OutDirError } from '../../src/errors.js';
import { makeDirs, prepareOutputDir, removeIfEmpty } from '../../src/report/run/outdir.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-outdir-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const aFile = join(tmp, 'a-file');
writeFileSync(aFile, 'not a directory\n');

async function problemOf(dir: string) {
  const e = await prepareOutputDir(dir).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OutDirError);
  return (e as OutDirError).problem;
}

describe('prepareOutputDir', () => {
  it('makes every missing component, outermost first, and leaves no probe file', async () => {
    const dir = join(tmp, 'a', 'b', 'c');
    expect(await prepareOutputDir(dir)).toEqual([join(tmp, 'a'), join(tmp, 'a', 'b'), dir]);
    expect(readdirSync(dir)).toEqual([]);
    expect(await prepareOutputDir(dir), 'an existing directory: nothing to make').toEqual([]);
  });

  it('removeIfEmpty takes back what it made, and stops at a directory with something in it', async () => {
    const made = await prepareOutputDir(join(tmp, 'x', 'y'));
    writeFileSync(join(tmp, 'x', 'keep'), '');
    await removeIfEmpty(made);
    expect(existsSync(join(tmp, 'x', 'y'))).toBe(false);
    expect(existsSync(join(tmp, 'x', 'keep'))).toBe(true);
  });

  it('an existing file', async () => {
    expect(await problemOf(aFile)).toEqual({ errno: 'EEXIST', detail: 'which is a file', fix: 'choose another path' });
  });

  it('a path under a file (ENOTDIR) names the file in the way', async () => {
    expect(await problemOf(join(aFile, 'sub', 'dir'))).toEqual({
      errno: 'ENOTDIR',
      detail: `and ${aFile} is a file, not a directory`,
      fix: 'choose another path',
    });
  });

  it('a name longer than NAME_MAX', async () => {
    const p = await problemOf(join(tmp, 'n'.repeat(300)));
    expect(p.errno).toBe('ENAMETOOLONG');
    expect(p.detail).toBe('one of its names is 300 bytes long, more than the 255 a file name may have');
    expect(p.fix).toBe('choose a shorter path');
  });

  it.skipIf(!existsSync('/proc/self'))(
    'a virtual file system that refuses new directories (/proc): fails, does not hang',
    async () => {
      expect(await problemOf('/proc/deferlab-test/x')).toEqual({
        errno: 'ENOENT',
        detail: 'and the kernel refuses new directories in /proc (a virtual file system)',
        fix: 'choose another path',
      });
      await expect(makeDirs('/proc/deferlab-test')).rejects.toMatchObject({ code: 'ENOENT' });
    },
    10_000,
  );

  it.skipIf(process.getuid?.() === 0)('a directory this user may not write (not testable as root)', async () => {
    const ro = join(tmp, 'read-only');
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    try {
      const p = await problemOf(join(ro, 'out'));
      expect(p.errno).toBe('EACCES');
      expect(p.detail).toBe(`and this user may not create or write files in ${ro} (EACCES)`);
    } finally {
      chmodSync(ro, 0o755);
    }
  });
});
