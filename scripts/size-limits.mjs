#!/usr/bin/env node
/**
 * Size limits for the parts of `src/` that grow most easily: each channel folder and the core
 * facade. Counted in code lines (a line with something besides blanks and comments), on the
 * formatted source (Biome, 120 columns), so long lines cannot hide size. Run by `npm run lint`;
 * exits 1 naming every part over its limit.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Part of `src/` (a folder or a file) and the most code lines it may have. */
export const LIMITS = [
  ['src/channels/telegram', 1500],
  ['src/channels/slack', 1500],
  ['src/channels/discord', 900],
  ['src/core/core.ts', 300],
];

/** Code lines of one TypeScript source: not blank, not only a comment. */
export function codeLines(source) {
  let count = 0;
  let inBlock = false;
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    if (inBlock) {
      // Code after a block comment closes on the same line still counts.
      const end = line.indexOf('*/');
      if (end < 0) continue;
      inBlock = false;
      if (line.slice(end + 2).trim()) count++;
      continue;
    }
    if (!line || line.startsWith('//')) continue;
    if (line.startsWith('/*')) {
      const end = line.indexOf('*/', 2);
      if (end < 0) inBlock = true;
      else if (line.slice(end + 2).trim()) count++;
      continue;
    }
    count++;
  }
  return count;
}

function sources(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => {
    const full = join(path, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Each limited part with its code lines and limit. */
export function measure(base = root) {
  return LIMITS.map(([part, limit]) => {
    const lines = sources(join(base, part)).reduce((sum, file) => sum + codeLines(readFileSync(file, 'utf8')), 0);
    return { part, lines, limit };
  });
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  const over = measure().filter((m) => m.lines > m.limit);
  for (const m of over) console.error(`size limit: ${m.part} has ${m.lines} code lines, the limit is ${m.limit}`);
  if (process.argv.includes('--list')) for (const m of measure()) console.log(`${m.part}: ${m.lines} / ${m.limit}`);
  process.exit(over.length ? 1 : 0);
}
