/**
 * The CLI as a script: `node dist/src/main.js ARGS` (what bin/deferlab.js runs) or, from source,
 * `node --import tsx src/main.ts ARGS`. The commands that boot machines run in a second process
 * with glibc's mmap threshold fixed (src/harness/malloc.ts: RSS over long sweeps), started once
 * their input is checked.
 */
import { EXIT_INTERRUPTED } from './errors.js';

// A stop signal while the CLI's modules load (a few hundred ms) would kill the process by its
// default action (exit 143 for SIGTERM): hold it until the CLI's own handlers are in place, then
// leave as an interrupted command does (130). start() installs its handlers synchronously, so
// nothing arrives between the two.
const early: NodeJS.Signals[] = [];
const hold = (signal: NodeJS.Signals) => {
  early.push(signal);
};
for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, hold);
const [{ start }, { reexecWithFixedThreshold }] = await Promise.all([
  import('./app.js'),
  import('./harness/malloc.js'),
]);
for (const s of ['SIGINT', 'SIGTERM'] as const) process.off(s, hold);
if (early.length > 0) {
  process.stderr.write('deferlab: interrupted\n');
  process.exit(EXIT_INTERRUPTED);
}

/** Commands that boot no machine (they neither measure nor hold memory for long): one process. */
const LIGHT_COMMANDS = new Set(['help', 'version', 'list', 'report', 'compare']);

const code = await start(process.argv.slice(2), {
  // After the input is checked: bad input is refused by this process alone.
  beforeCommand: async (command) => {
    if (!LIGHT_COMMANDS.has(command)) await reexecWithFixedThreshold();
  },
});
process.stdout.write('', () => process.exit(code));
