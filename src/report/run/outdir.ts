/**
 * The output directory: made (like `mkdir -p`, but one component at a time and never with
 * `recursive: true`) and proven writable BEFORE a run starts, so a bad `--out` costs the user
 * one line and no measurement; and a last-resort copy of results.json when writing fails after
 * the run anyway (the disk filled up, the directory was removed).
 *
 * Why not `mkdir(path, { recursive: true })`: on Node 20 it loops forever on paths the kernel
 * refuses with ENOENT although the parent exists (`/proc/foo`), and its EEXIST for an existing
 * file reads like a bug. A plain `mkdir` of one component fails at once with an errno that says
 * what is wrong, and the component it names is the one to blame.
 */

import { mkdir, mkdtemp, open, rmdir, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { OutDirError, type OutDirProblem } from '../../errors.js';

/** Longest file name most Linux file systems accept (NAME_MAX). */
const NAME_MAX = 255;

const CHOOSE = 'choose another path';

const errnoOf = (e: unknown): string => String((e as NodeJS.ErrnoException | undefined)?.code ?? '');

/** An errno as words, for messages: `the disk is full (ENOSPC)`. */
export function errnoText(e: unknown): string {
  const code = errnoOf(e);
  const words: Record<string, string> = {
    ENOSPC: 'the disk is full',
    EDQUOT: 'the disk quota is used up',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOENT: 'the directory does not exist (was it removed?)',
    ENOTDIR: 'a part of the path is not a directory',
    EIO: 'an I/O error',
    EMFILE: 'too many open files',
    ENAMETOOLONG: 'a name is too long',
  };
  if (words[code]) return `${words[code]} (${code})`;
  const msg = e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e);
  return msg || code || 'unknown error';
}

/** Stat, or the errno it failed with. */
async function statOrErrno(path: string): Promise<{ isDir: boolean; isFile: boolean } | string> {
  try {
    const s = await stat(path);
    return { isDir: s.isDirectory(), isFile: s.isFile() };
  } catch (e) {
    return errnoOf(e) || 'EUNKNOWN';
  }
}

function tooLong(path: string): OutDirProblem {
  const longest = path.split(sep).reduce((a, c) => (Buffer.byteLength(c) > Buffer.byteLength(a) ? c : a), '');
  const n = Buffer.byteLength(longest);
  const detail =
    n > NAME_MAX
      ? `one of its names is ${n} bytes long, more than the ${NAME_MAX} a file name may have`
      : `the path is ${Buffer.byteLength(path)} bytes long, more than the system allows`;
  return { errno: 'ENAMETOOLONG', detail, fix: 'choose a shorter path' };
}

/**
 * The first existing ancestor of `path` that is not a directory (the reason for an ENOTDIR), or
 * undefined.
 */
async function fileInTheWay(path: string): Promise<string | undefined> {
  const parts: string[] = [];
  for (let p = resolve(path); ; p = dirname(p)) {
    parts.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const p of parts) {
    const s = await statOrErrno(p);
    if (typeof s === 'string') return undefined;
    if (!s.isDir) return p;
  }
  return undefined;
}

/**
 * Turn an errno into a problem. `where`: the directory being made (a component of `path`, or
 * `path` itself), or the probe file being created in `path`.
 */
async function problemFor(e: unknown, path: string, where: string, making: 'dir' | 'file'): Promise<OutDirProblem> {
  const errno = errnoOf(e);
  const inside = dirname(where);
  switch (errno) {
    case 'ENOTDIR': {
      const file = await fileInTheWay(path);
      return {
        errno,
        detail: file ? `and ${file} is a file, not a directory` : 'and a part of it is not a directory',
        fix: CHOOSE,
      };
    }
    case 'ENAMETOOLONG':
      return tooLong(path);
    case 'EACCES':
    case 'EPERM':
      return {
        errno,
        detail: `and this user may not create or write files in ${inside} (${errno})`,
        fix: 'choose a directory you can write, or change its permissions',
      };
    case 'EROFS':
      return { errno, detail: `and ${inside} is on a read-only file system`, fix: CHOOSE };
    case 'ENOSPC':
    case 'EDQUOT':
      return {
        errno,
        detail: `and the disk holding ${inside} is full (${errno})`,
        fix: 'free some space or choose another path',
      };
    case 'ENOENT':
      // The parent exists (we just made or found it) and still the kernel says "no such file":
      // a virtual file system such as /proc, which allows no new directories or files.
      if (making === 'file')
        return { errno, detail: `and files cannot be created in it (was it removed?)`, fix: CHOOSE };
      return {
        errno,
        detail: `and the kernel refuses new directories in ${inside} (a virtual file system)`,
        fix: CHOOSE,
      };
    case 'ELOOP':
      return { errno, detail: 'and it goes through a loop of symbolic links', fix: CHOOSE };
    default:
      return { errno: errno || 'EUNKNOWN', detail: `and it cannot be used: ${errnoText(e)}`, fix: CHOOSE };
  }
}

/**
 * `mkdir -p`, one component at a time, never `recursive: true`.
 * Context: main thread. Returns the directories it created, outermost first.
 * Throws: the errno error of the first component that could not be made, with `path` set to it;
 * `EEXIST` with `path` = `dir` when `dir` exists and is not a directory.
 */
export async function makeDirs(dir: string): Promise<string[]> {
  const target = resolve(dir);
  const missing: string[] = [];
  let p = target;
  for (;;) {
    const s = await statOrErrno(p);
    if (typeof s !== 'string') {
      if (!s.isDir) {
        const e = new Error(`${p} exists and is not a directory`) as NodeJS.ErrnoException;
        e.code = p === target ? 'EEXIST' : 'ENOTDIR';
        e.path = p;
        throw e;
      }
      break;
    }
    if (s !== 'ENOENT') {
      const e = new Error(`cannot reach ${p}: ${s}`) as NodeJS.ErrnoException;
      e.code = s;
      e.path = p;
      throw e;
    }
    missing.unshift(p);
    const parent = dirname(p);
    if (parent === p) break;
    p = parent;
  }
  const created: string[] = [];
  for (const m of missing) {
    try {
      await mkdir(m); // one component; never recursive (see the top of this file)
      created.push(m);
    } catch (e) {
      if (errnoOf(e) === 'EEXIST') {
        const s = await statOrErrno(m); // made meanwhile by someone else: fine if a directory
        if (typeof s !== 'string' && s.isDir) continue;
      }
      (e as NodeJS.ErrnoException).path = m;
      throw e;
    }
  }
  return created;
}

/**
 * Make `dir` (and missing parents) and prove that files can be created in it: a probe file is
 * created and removed. Context: main thread, before a run. Returns the directories it created,
 * outermost first (for {@link removeIfEmpty} when nothing gets written).
 * Throws: {@link OutDirError} saying why `dir` cannot be used.
 */
export async function prepareOutputDir(dir: string): Promise<string[]> {
  const path = resolve(dir);
  if (Buffer.byteLength(path) >= 4096 || path.split(sep).some((c) => Buffer.byteLength(c) > NAME_MAX))
    throw new OutDirError(path, tooLong(path));
  let created: string[];
  try {
    created = await makeDirs(path);
  } catch (e) {
    const where = (e as NodeJS.ErrnoException).path ?? path;
    if (errnoOf(e) === 'EEXIST') {
      const s = await statOrErrno(path);
      const what = typeof s !== 'string' && s.isFile ? 'which is a file' : 'which exists and is not a directory';
      throw new OutDirError(path, { errno: 'EEXIST', detail: what, fix: CHOOSE }, { cause: e });
    }
    throw new OutDirError(path, await problemFor(e, path, where, 'dir'), { cause: e });
  }
  const probe = join(path, `.deferlab-probe-${process.pid}`);
  try {
    const fh = await open(probe, 'wx');
    await fh.close();
    await unlink(probe);
  } catch (e) {
    await unlink(probe).catch(() => {});
    await removeIfEmpty(created);
    throw new OutDirError(path, await problemFor(e, path, probe, 'file'), { cause: e });
  }
  return created;
}

/** Remove directories {@link prepareOutputDir} created, innermost first, while they are empty. */
export async function removeIfEmpty(created: readonly string[]): Promise<void> {
  for (const d of [...created].reverse()) {
    try {
      await rmdir(d); // fails (and stops) on a directory that is not empty
    } catch {
      return;
    }
  }
}

/**
 * The last resort when the output directory cannot take results.json: a fresh directory under
 * the system's temp directory (os.tmpdir()) holding it. Returns that directory.
 */
export async function rescueDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'deferlab-rescued-'));
}
