/**
 * A TypeScript helper process, bundled once into plain JavaScript: spawning `node --import tsx
 * file.ts` compiles the file and its imports again in every child (about a second each, more on a
 * loaded machine), and some test files spawn a dozen. The bundle is keyed by the entry's content
 * and the lockfile, so an edit or a dependency change builds anew; parallel test files building the
 * same bundle each write a temporary file and rename it into place, never a half-written one.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '../..');
const built = new Map<string, string>();

/** The path of `entry` (a .ts file) bundled with its dependencies into one .mjs file for `node`. */
export function bundled(entry: string): string {
  const known = built.get(entry);
  if (known) return known;
  const key = createHash('sha256')
    .update(readFileSync(entry))
    .update(readFileSync(path.join(ROOT, 'package-lock.json')))
    .update(process.version)
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(os.tmpdir(), 'switchboard-test-bundles');
  const out = path.join(dir, `${path.basename(entry, '.ts')}-${key}.mjs`);
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${out}.${process.pid}.tmp.mjs`;
    buildSync({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: `node${process.versions.node.split('.')[0]}`,
      outfile: tmp,
      // Bundled CommonJS dependencies call require(); ESM output has none of its own.
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      },
      logLevel: 'error',
    });
    renameSync(tmp, out);
  }
  built.set(entry, out);
  return out;
}
