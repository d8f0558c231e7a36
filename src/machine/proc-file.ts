/**
 * A /proc file looked at again and again from the main thread without opening it each time: one
 * descriptor kept open and read from offset 0 (pread) into one buffer.
 *
 * Why: the machine's watch of its idled helpers (host-threads.ts watchIdleHelpers) looks at ten
 * threads every 50 ms. With readFileSync (open, fstat, read, close and a new Buffer each time) one
 * look at ten threads' stat took 450–710 µs of the main thread here (p50 warm and cold, p90 cold;
 * 2026-12-07, this 2-core VM), a read of one thread's stat 51 µs and of its schedstat 70 µs; a
 * pread on a kept descriptor 5.5 µs and 2.1 µs. The main thread shares the host's cores with the
 * machine's threads: traced with ftrace during bench:twin's (c), it ran ~17 times a second for
 * ~0.4 ms each, up to 1 ms, on the core where CPU 1's thread is woken, which then waits for it
 * (docs/twin.md, "The main thread's watch").
 *
 * A read from offset 0 makes the text afresh: /proc/<pid>/task/<tid>/stat and schedstat are
 * seq_files (fs/proc/base.c, ONE(...) entries through single_open), and seq_read_iter resets its
 * iterator for a read at offset 0 ("if request is to read from zero offset, reset iterator to first
 * record as it might have been already advanced by previous requests", fs/seq_file.c). A thread
 * that has exited makes the read fail (ESRCH: proc_single_show finds no task): read() then
 * returns undefined, as readFileSync's failure did.
 *
 * Context: main thread; not shared between threads. The buffer is shared by every ProcFile made
 * with it: read() returns a string copied out of it before the next read.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** Enough for a task's stat line (52 fields, proc(5)) and its schedstat (three numbers). */
export const PROC_LINE_BYTES = 1024;

export class ProcFile {
  private fd = -1;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly buf: Buffer = Buffer.allocUnsafe(PROC_LINE_BYTES),
  ) {}

  /** The file's text now (latin1), or undefined where it cannot be opened or read (the thread exited). */
  read(): string | undefined {
    if (this.closed) return undefined;
    try {
      if (this.fd < 0) this.fd = openSync(this.path, 'r');
      const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
      return this.buf.toString('latin1', 0, n);
    } catch {
      this.close();
      return undefined;
    }
  }

  /** Close the descriptor; read() returns undefined from now on. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.fd < 0) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed by the host (e.g. at exit)
    }
    this.fd = -1;
  }
}
