/** deferlab's version, read once from package.json (two levels up from src/ and from dist/src/). */
import { readFileSync } from 'node:fs';

function find(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const p = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (p.name === 'deferlab' && p.version) return p.version;
    } catch {
      // try the next candidate
    }
  }
  return '0.0.0';
}

export const VERSION = find();
