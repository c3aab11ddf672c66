/**
 * Builds dist/ once before any test starts, when the sources are newer than it: the CLI tests
 * spawn `bin/switchboard.js`, which runs the compiled JavaScript, and parallel test files must
 * not each find it stale and compile at the same time.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export default function setup(): void {
  const script = path.resolve(import.meta.dirname, '../scripts/build.mjs');
  const res = spawnSync(process.execPath, [script, '--if-stale'], { stdio: 'inherit' });
  if (res.status !== 0) throw new Error('building dist/ failed; see the compiler output above');
}
