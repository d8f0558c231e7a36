/**
 * Boot with a strategy whose setup() never returns: the machine names the strategy and the
 * threads stuck in it (and leaves no thread running), and a signal stops the boot at once.
 */
import { describe, expect, it } from 'vitest';
import { BootInterrupted, MachineFaultError } from '../../src/errors.js';
import { SETUP_TIMEOUT_MS } from '../../src/machine/machine.js';
import { fixture, Machine, options } from './helpers.js';

describe('boot', () => {
  it(
    "names a strategy whose setup() does not return, and stops the machine's threads",
    async () => {
      const err = await Machine.boot(options({ strategies: [fixture('setup-hangs.ts')] })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(MachineFaultError);
      const f = (err as MachineFaultError).fault;
      expect(f.kind).toBe('bad-input');
      expect(f.message).toMatch(
        new RegExp(
          `setup-hangs\\.ts: setup\\(\\) did not return within ${SETUP_TIMEOUT_MS / 1000} s on .*(cpu|kworker|ksoftirqd)`,
        ),
      );
    },
    SETUP_TIMEOUT_MS + 60_000,
  );

  it('stops at once when its signal fires', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const err = await Machine.boot(options({ strategies: [fixture('setup-hangs.ts')] }), ac.signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BootInterrupted); // not the setup watchdog's MachineFaultError
  }, 60_000);
});
