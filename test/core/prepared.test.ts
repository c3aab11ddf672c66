import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { prepared } from '../../src/store/prepared.js';
import { ensureConversation, markInboundSeen } from '../../src/store/repos/conversations.js';
import { enqueueInbox, pendingInbox } from '../../src/store/repos/log.js';
import { createTurn, finishTurn, getTurn } from '../../src/store/repos/turns.js';
import { openTestDatabase } from '../helpers/test-db.js';

let db: Db | null = null;
afterEach(async () => {
  await db?.destroy();
  db = null;
});

describe('queries compiled once', () => {
  it('run with each call’s arguments in place of the placeholders, constants kept', async () => {
    db = openTestDatabase(mkdtempSync(path.join(os.tmpdir(), 'sb-prepared-')));
    await migrateToLatest(db);
    for (const [key, value] of [
      ['a', 'one'],
      ['b', 'two'],
      ['c', 'three'],
    ]) {
      await db
        .insertInto('settings')
        .values({ key: key as string, value: value as string, updated_at: 1 })
        .execute();
    }
    const byKeys = prepared((d: Db, first: string, second: string) =>
      d
        .selectFrom('settings')
        .select(['key', 'value'])
        .where('key', 'in', [first, second, 'c'])
        .where('updated_at', '=', 1)
        .orderBy('key'),
    );
    expect(await byKeys(db, 'a', 'b')).toEqual([
      { key: 'a', value: 'one' },
      { key: 'b', value: 'two' },
      { key: 'c', value: 'three' },
    ]);
    // A second call compiles nothing new and sees only its own arguments.
    expect((await byKeys(db, 'b', 'zz')).map((r) => r.key)).toEqual(['b', 'c']);
    // Inside a transaction too.
    const inTrx = await db.transaction().execute((trx) => byKeys(trx, 'a', 'a'));
    expect(inTrx.map((r) => r.key)).toEqual(['a', 'c']);
  });

  it('a query on the handle while a transaction has the connection waits for it: it never sees, nor joins, uncommitted writes', async () => {
    db = openTestDatabase(mkdtempSync(path.join(os.tmpdir(), 'sb-prepared-')));
    await migrateToLatest(db);
    const handle = db;
    const settingValue = prepared((d: Db, key: string) =>
      d.selectFrom('settings').select('value').where('key', '=', key),
    );
    const setValue = prepared((d: Db, key: string, value: string) =>
      d.insertInto('settings').values({ key, value, updated_at: 1 }),
    );
    let read: Promise<Array<{ value: string }>> | undefined;
    let written: Promise<unknown> | undefined;
    await expect(
      handle.transaction().execute(async (trx) => {
        await trx.insertInto('settings').values({ key: 'x', value: 'uncommitted', updated_at: 1 }).execute();
        read = settingValue(handle, 'x');
        written = setValue(handle, 'y', 'outside');
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await read).toEqual([]);
    await written;
    // The write issued during the transaction ran after it, on its own: the rollback did not take it.
    expect(await settingValue(handle, 'y')).toEqual([{ value: 'outside' }]);
    expect(await settingValue(handle, 'x')).toEqual([]);
  });

  it('inside a transaction a compiled query is part of it: rolled back with it, and it sees the transaction’s own writes', async () => {
    db = openTestDatabase(mkdtempSync(path.join(os.tmpdir(), 'sb-prepared-')));
    await migrateToLatest(db);
    const handle = db;
    const settingValue = prepared((d: Db, key: string) =>
      d.selectFrom('settings').select('value').where('key', '=', key),
    );
    const setValue = prepared((d: Db, key: string, value: string) =>
      d.insertInto('settings').values({ key, value, updated_at: 1 }),
    );
    await expect(
      handle.transaction().execute(async (trx) => {
        await setValue(trx, 'a', 'inside');
        await trx.insertInto('settings').values({ key: 'b', value: 'built', updated_at: 1 }).execute();
        expect(await settingValue(trx, 'a')).toEqual([{ value: 'inside' }]);
        expect(await settingValue(trx, 'b')).toEqual([{ value: 'built' }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await settingValue(handle, 'a')).toEqual([]);
    expect(await settingValue(handle, 'b')).toEqual([]);
    await handle.transaction().execute((trx) => setValue(trx, 'c', 'kept'));
    expect(await settingValue(handle, 'c')).toEqual([{ value: 'kept' }]);
  });

  it('writes report the rows they changed (a duplicate key changes none)', async () => {
    db = openTestDatabase(mkdtempSync(path.join(os.tmpdir(), 'sb-prepared-')));
    await migrateToLatest(db);
    expect(await markInboundSeen(db, 'update:1')).toBe(true);
    expect(await markInboundSeen(db, 'update:1')).toBe(false);
    expect(await markInboundSeen(db, 'update:2')).toBe(true);
    const conv = await ensureConversation(db, { channel: 'test', chatKey: 'k', threadKey: '' }, 'u');
    const id = await enqueueInbox(db, { conversationId: conv.id, authorId: 'u', text: 'hi', attachments: ['a.txt'] });
    expect(await pendingInbox(db, conv.id)).toMatchObject([
      { id, conversation_id: conv.id, author_id: 'u', text: 'hi', attachments: '["a.txt"]', consumed_at: null },
    ]);
    const turn = await createTurn(db, conv.id, 'u');
    expect(await finishTurn(db, turn.id, 'done')).toBe(true);
    expect(await finishTurn(db, turn.id, 'failed', 'late')).toBe(false);
    expect(await getTurn(db, turn.id)).toMatchObject({ status: 'done', error: null });
  });
});
