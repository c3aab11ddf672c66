import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { prepared } from '../../src/store/prepared.js';
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
      await db.insertInto('settings').values({ key: key as string, value: value as string, updated_at: 1 }).execute();
    }
    const byKeys = prepared(2, (d: Db, first: string, second: string) =>
      d.selectFrom('settings').select(['key', 'value']).where('key', 'in', [first, second, 'c']).where('updated_at', '=', 1).orderBy('key'),
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
});
