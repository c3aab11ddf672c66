#!/usr/bin/env node
// Runs the compiled JavaScript in dist/ (`npm ci` builds it through the `prepare` script).
// When dist/ is missing or older than the sources beside it, compiles it first, so a fresh
// clone, an `--ignore-scripts` install and an edited checkout all run the code that is there.
import module from 'node:module';
import { pathToFileURL } from 'node:url';
import { build, ENTRY } from '../scripts/build.mjs';

try {
  build({ ifStale: true });
} catch (err) {
  process.stderr.write(`switchboard: ${err.message}\n`);
  process.exit(1);
}
// Node ≥ 22.1 keeps compiled code between starts (in the OS temp folder); older Node has no cache.
module.enableCompileCache?.();
await import(pathToFileURL(ENTRY).href);
