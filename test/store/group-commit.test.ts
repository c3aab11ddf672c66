import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, openSqlite } from '../../src/store/db.js';
import { preparedWrite } from '../../src/store/prepared.js';

const require = createRequire(import.meta.url);
const dirs: string[] = [];
const handles: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** The store under test and a second connection to the same file (another process's view). */
async function world(): Promise<{ db: Db; file: string; other: SQLite.Database }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-group-commit-'));
  dirs.push(dir);
  const file = path.join(dir, 'store.db');
  const db = openSqlite(file, { groupCommit: true });
  handles.push({ close: () => db.destroy() });
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db);
  const other = new SQLite(file);
  other.pragma('busy_timeout = 5000');
  handles.push(other);
  return { db, file, other };
}

// A prepared write runs at once on the connection when it is free (the engine's hot path).
const insert = preparedWrite((db: Db, id: number, body: string) =>
  (db as unknown as Db).insertInto('t' as never).values({ id, body } as never),
);
const seen = (other: SQLite.Database) =>
  (other.prepare('SELECT id FROM t ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id);

describe('group commit (SQLite)', () => {
  it('writes made in one turn of the event loop are committed together, and none resolves before', async () => {
    const { db, other } = await world();
    const order: string[] = [];
    const first = insert(db, 1, 'a').then(() => order.push(`1 resolved, other sees ${seen(other)}`));
    const viaKysely = db
      .insertInto('t' as never)
      .values({ id: 2, body: 'b' } as never)
      .execute()
      .then(() => order.push(`2 resolved, other sees ${seen(other)}`));
    const inTransaction = db
      .transaction()
      .execute(async (trx) => {
        await insert(trx, 3, 'c');
        await insert(trx, 4, 'd');
      })
      .then(() => order.push(`3-4 resolved, other sees ${seen(other)}`));
    // Written, not committed: another connection sees none of it yet.
    expect(seen(other)).toEqual([]);
    await Promise.all([first, viaKysely, inTransaction]);
    // Every writer learned of its write only once all of them were visible: one commit.
    expect(order.sort()).toEqual([
      '1 resolved, other sees 1,2,3,4',
      '2 resolved, other sees 1,2,3,4',
      '3-4 resolved, other sees 1,2,3,4',
    ]);
  });

  it('a transaction that fails is rolled back alone; the writes around it commit', async () => {
    const { db, other } = await world();
    const before = insert(db, 1, 'kept');
    const failing = db.transaction().execute(async (trx) => {
      await insert(trx, 2, 'undone');
      throw new Error('the transaction gives up');
    });
    const after = insert(db, 3, 'kept');
    await expect(failing).rejects.toThrow('the transaction gives up');
    await Promise.all([before, after]);
    expect(seen(other)).toEqual([1, 3]);
  });

  it('a write that breaks a constraint fails alone, with its error', async () => {
    const { db, other } = await world();
    await insert(db, 1, 'first');
    const results = await Promise.allSettled([insert(db, 2, 'ok'), insert(db, 1, 'duplicate'), insert(db, 3, 'ok')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
    expect(seen(other)).toEqual([1, 2, 3]);
    expect(other.prepare('SELECT body FROM t WHERE id = 1').get()).toEqual({ body: 'first' });
  });

  it('a transaction still open at the check phase is never committed half-way', async () => {
    const { db, other } = await world();
    let midway: number[] = [];
    const slow = db.transaction().execute(async (trx) => {
      await insert(trx, 1, 'first half');
      // The event loop turns (and the group's commit comes due) while the transaction is open.
      await new Promise((r) => setTimeout(r, 30));
      midway = seen(other);
      await insert(trx, 2, 'second half');
    });
    const queued = insert(db, 3, 'waits its turn');
    await Promise.all([slow, queued]);
    expect(midway).toEqual([]);
    expect(seen(other)).toEqual([1, 2, 3]);
  });

  it('closing the store commits the group it has open', async () => {
    const { db, file } = await world();
    const pending = insert(db, 7, 'written just before the close');
    await db.destroy();
    await pending;
    const reopened = new SQLite(file);
    handles.push(reopened);
    expect(reopened.prepare('SELECT body FROM t').all()).toEqual([{ body: 'written just before the close' }]);
  });

  it('a process writing beside a busy store waits for each group and loses nothing', async () => {
    const { db, file, other } = await world();
    // Another process (a CLI command beside `start`) inserts 200 rows one commit each, while this
    // one keeps a group open nearly all the time.
    const script = `
      const SQLite = require(${JSON.stringify(require.resolve('better-sqlite3'))});
      const db = new SQLite(${JSON.stringify(file)});
      db.pragma('busy_timeout = 5000');
      for (let i = 0; i < 200; i++) db.prepare('INSERT INTO t (id, body) VALUES (?, ?)').run(-1 - i, 'theirs');
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let running = true;
    void exited.then(() => {
      running = false;
    });
    let id = 1;
    while (running) await Promise.all([insert(db, id++, 'mine'), insert(db, id++, 'mine')]);
    expect({ code: await exited, stderr }).toEqual({ code: 0, stderr: '' });
    const counts = other.prepare('SELECT body, count(*) AS n FROM t GROUP BY body ORDER BY body').all();
    expect(counts).toEqual([
      { body: 'mine', n: id - 1 },
      { body: 'theirs', n: 200 },
    ]);
  });
});
