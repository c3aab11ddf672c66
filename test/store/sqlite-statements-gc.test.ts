/**
 * kysely prepares a better-sqlite3 statement per query and leaves it to the garbage collector.
 * A build of the native module whose statements abort the process when a collection finalises
 * them outside JavaScript (better-sqlite3 12 compiled against Node ≥ 24.19's headers,
 * nodejs/node#65446) killed test workers and would kill the server; this runs the same pattern in
 * a real process, on the installed Node and module, and expects it to live to a normal exit.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const modulePath = createRequire(import.meta.url).resolve('better-sqlite3');

// Many throw-away statements, then idle moments (when V8 collects outside JavaScript), then more.
const PROBE = `
const Database = require(${JSON.stringify(modulePath)});
const db = new Database(':memory:');
db.exec('create table t (a)');
for (let i = 0; i < 50000; i++) db.prepare('select ' + i + ' as n from t').all();
setTimeout(() => { for (let i = 0; i < 50000; i++) db.prepare('select ' + i + ' + 1').get(); }, 200);
setTimeout(() => console.log('done'), 1500);
`;

describe('better-sqlite3 statements left to the garbage collector', () => {
  it(`do not abort the process (Node ${process.version})`, () => {
    const r = spawnSync(process.execPath, ['-e', PROBE], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).not.toContain('Assertion failed');
    expect({ status: r.status, signal: r.signal, stdout: r.stdout.trim() }).toEqual({
      status: 0,
      signal: null,
      stdout: 'done',
    });
  }, 40_000);
});
