import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKSTOP_AUTOCHECKPOINT_PAGES, onCheckpoint, TAKE_OVER_DELAY_MS } from '../../src/store/checkpointer.js';
import { type Db, openSqlite } from '../../src/store/db.js';
import { waitFor } from '../helpers/harness.js';

const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.destroy();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function tempFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-checkpoint-'));
  dirs.push(dir);
  return path.join(dir, 'store.db');
}

function open(file: string): Db {
  const db = openSqlite(file);
  dbs.push(db);
  return db;
}

const autocheckpoint = async (db: Db) =>
  (await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(db)).rows[0]?.wal_autocheckpoint;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The checkpointer is SQLite's alone: PostgreSQL checkpoints in its own server.
describe('WAL checkpoints on a worker thread', () => {
  it('after the take-over delay, committed pages reach the database file without the committing connection checkpointing', async () => {
    const file = tempFile();
    const db = open(file);
    await sql`CREATE TABLE t (body TEXT NOT NULL)`.execute(db);
    const checkpoints: number[] = [];
    const stop = onCheckpoint((e) => {
      if (e.type === 'checkpointed' && e.file === file) checkpoints.push(Date.now());
    });
    try {
      // Until the worker has the file, the connection checkpoints itself as SQLite does by default.
      expect(await autocheckpoint(db)).toBe(1000);
      await sleep(TAKE_OVER_DELAY_MS);
      await waitFor(async () => (await autocheckpoint(db)) === BACKSTOP_AUTOCHECKPOINT_PAGES, 'the take-over', 5000);
      // The worker's first look checkpoints the table's creation; only then is the file's size known.
      await waitFor(() => checkpoints.length > 0, 'the first checkpoint', 5000);
      const before = statSync(file).size;
      const insertsStarted = Date.now();
      // About 150 pages: far under either connection threshold, so only the worker moves them.
      // (When the worker does so is its own affair: a slow machine may see it mid-loop.)
      for (let i = 0; i < 150; i++) await sql`INSERT INTO t (body) VALUES (${'x'.repeat(3000)})`.execute(db);
      // The worker says so after it has written the file: wait for both.
      await waitFor(
        () => statSync(file).size > before + 100 * 3000 && checkpoints.some((at) => at >= insertsStarted),
        'the worker to checkpoint the log',
        5000,
      );
      expect((await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(db)).rows[0]?.n).toBe(150);
    } finally {
      stop();
    }
  });

  it('a file the worker cannot open leaves its connection checkpointing itself', async () => {
    const file = tempFile();
    const db = open(file);
    await sql`CREATE TABLE t (body TEXT NOT NULL)`.execute(db);
    const failed: string[] = [];
    const stop = onCheckpoint((e) => {
      if (e.type === 'failed') failed.push(e.file);
    });
    try {
      // The connection keeps its open file; the worker finds no file at that path to open.
      rmSync(file);
      await waitFor(() => failed.includes(file), 'the worker to report the failure', 5000);
      expect(await autocheckpoint(db)).toBe(1000);
      // The connection still works.
      await sql`INSERT INTO t (body) VALUES ('still here')`.execute(db);
      expect((await sql<{ body: string }>`SELECT body FROM t`.execute(db)).rows).toEqual([{ body: 'still here' }]);
    } finally {
      stop();
    }
  });

  it('SIGKILL while the worker checkpoints loses no committed row; the restarted store has them all', async () => {
    const file = tempFile();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.resolve(import.meta.dirname, '../helpers/checkpoint-writer.ts'), file],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let committed = 0;
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (l) => {
      committed = Number(l);
    });
    const exited = new Promise((r) => child.once('exit', r));
    // Past the take-over and a few of the worker's checkpoints, then killed mid-write.
    await waitFor(() => committed >= 4000 && statSync(file).size > 1_000_000, 'rows written and checkpointed', 30_000);
    child.kill('SIGKILL');
    await exited;
    const db = open(file);
    const rows = (await sql<{ n: number; max: number }>`SELECT count(*) AS n, max(n) AS max FROM rows`.execute(db))
      .rows[0];
    // Every row the writer reported is there (one more may have committed before it could say so).
    expect(rows?.n).toBe(rows?.max);
    expect(rows?.max).toBeGreaterThanOrEqual(committed);
    expect((await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(db)).rows).toEqual([
      { integrity_check: 'ok' },
    ]);
  }, 60_000);
});
