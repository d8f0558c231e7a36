/**
 * The CLI as a script: `node dist/src/cli.js ARGS` (what bin/deferlab.js runs) or, from source,
 * `node --import tsx src/cli.ts ARGS`.
 */
import { start } from './app.js';

const code = await start(process.argv.slice(2));
process.stdout.write('', () => process.exit(code));
