#!/usr/bin/env node
// deferlab's command: runs the compiled CLI (npm run build puts it in dist/).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("deferlab: not built yet: run 'npm run build' (or 'npm start', which builds first)\n");
  process.exit(2);
}
await import(entry.href);
