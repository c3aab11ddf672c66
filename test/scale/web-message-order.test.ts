/**
 * A page's stream goes on from the last event id it got (`messagesAfter`), so the rows of one chat
 * must become visible in id order even when two writers (two instances, two pooled connections)
 * write at once. Here one write of a chat is held up between taking its id and committing (a
 * second connection holds a lock on the row it replaces, as a slow transaction would), while
 * another write of the same chat comes along: a reader going by id must still get both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { messagesAfter, writeMessage } from '../../src/store/repos/web.js';
import { skipped } from '../helpers/skips.js';
import { openTestDatabase, postgresOnly } from '../helpers/test-db.js';

const onlyPostgres = postgresOnly('concurrent transactions over one database need a server');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until `n` sessions of this test's database wait on a lock. */
async function waiters(n: number): Promise<void> {
  for (;;) {
    const r = await sql<{ n: string }>`
      SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(
      first,
    );
    if (Number(r.rows[0]?.n) >= n) return;
    await sleep(20);
  }
}

let dir: string;
/** Two handles on one database, as two instances have. */
let first: Db;
let second: Db;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-web-order-'));
  first = openTestDatabase(dir, 'db');
  second = openTestDatabase(dir, 'db');
  await migrateToLatest(first);
});

afterEach(async () => {
  await first.destroy();
  await second.destroy();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe.skipIf(onlyPostgres !== undefined)(`a chat's web rows in id order${skipped(onlyPostgres)}`, () => {
  it('a write held up before its commit does not let a later write of the chat be read past it', async () => {
    const chat = { chat_key: 'alice', thread_key: '', pos: 1 };
    await writeMessage(first, { ...chat, ref: 'answer', body: '{"v":1}' });
    const [start] = await messagesAfter(first, 'alice', 0);
    let after = start!.id;

    // A transaction of another connection locks the answer's row and keeps it until released.
    let release: () => void = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = second.transaction().execute(async (tx) => {
      await tx.selectFrom('web_messages').select('id').where('ref', '=', 'answer').forUpdate().execute();
      locked();
      await released;
    });
    await isLocked;

    // The edit of the answer waits on that lock, and a new message of the chat is written meanwhile.
    const edit = writeMessage(first, { ...chat, ref: 'answer', body: '{"v":2}' });
    await waiters(1);
    const post = writeMessage(second, { ...chat, ref: 'question', pos: 2, body: '{"q":1}' });
    // The new message is written, or waits its turn behind the edit.
    await Promise.race([post, waiters(2)]);

    // A stream reading now goes on from whatever it got.
    const seen: string[] = [];
    for (const row of await messagesAfter(first, 'alice', after)) {
      seen.push(`${row.ref} ${row.body}`);
      after = row.id;
    }
    release();
    await Promise.all([holder, edit, post]);
    for (const row of await messagesAfter(first, 'alice', after)) seen.push(`${row.ref} ${row.body}`);

    expect(seen).toEqual(['answer {"v":2}', 'question {"q":1}']);
  });
});
