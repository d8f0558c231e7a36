/**
 * The CLI as a script: `node dist/src/main.js ARGS` (what bin/deferlab.js runs) or, from source,
 * `node --import tsx src/main.ts ARGS`. The commands that boot machines run in a second process
 * with glibc's mmap threshold fixed (src/harness/malloc.ts: RSS over long sweeps), started once
 * their input is checked.
 */
import { start } from './app.js';
import { reexecWithFixedThreshold } from './harness/malloc.js';

/** Commands that boot no machine (they neither measure nor hold memory for long): one process. */
const LIGHT_COMMANDS = new Set(['help', 'version', 'list', 'report', 'compare']);

const code = await start(process.argv.slice(2), {
  // After the input is checked: bad input is refused by this process alone.
  beforeCommand: async (command) => {
    if (!LIGHT_COMMANDS.has(command)) await reexecWithFixedThreshold();
  },
});
process.stdout.write('', () => process.exit(code));
