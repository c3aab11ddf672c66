import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openSqlite, type Db } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { insertMessage } from '../../src/store/repos/log.js';
import { indexPendingMessages } from '../../src/store/repos/search-index.js';
import { searchHistory, textQuery } from '../../src/tools/memory-store.js';

const words = (text: string) => textQuery(text) ?? { terms: [], mode: 'all' as const };

let db: Db | null = null;
afterEach(async () => {
  await db?.destroy();
  db = null;
});

async function setup(): Promise<{ db: Db; conv: string }> {
  db = openSqlite(':memory:');
  await migrateToLatest(db);
  const conv = await ensureConversation(db, { channel: 'console', chatKey: 'c', threadKey: '' }, null);
  return { db, conv: conv.id };
}
const say = (d: Db, conv: string, content: string, role: 'user' | 'assistant' | 'tool' = 'user') =>
  insertMessage(d, {
    conversation_id: conv,
    turn_id: null,
    role,
    content,
    tool_calls: null,
    tool_call_id: role === 'tool' ? 'x' : null,
    author_id: null,
  });
const indexed = async (d: Db) =>
  Number((await sql<{ n: number }>`SELECT count(*) AS n FROM messages_fts_docsize`.execute(d)).rows[0]?.n);
const integrity = (d: Db) => sql`INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')`.execute(d);

describe('message search index, filled off the hot path', () => {
  it('inserting a message does not index it; the indexer does, in batches, and recall finds it at once', async () => {
    const { db: d, conv } = await setup();
    for (let i = 0; i < 5; i++) await say(d, conv, `zebra number ${i}`);
    await say(d, conv, 'tool output about zebras', 'tool');
    expect(await indexed(d)).toBe(0);
    await indexPendingMessages(d, 2);
    expect(await indexed(d)).toBe(5); // user and assistant text only
    const mark = await d
      .selectFrom('fts_progress')
      .select('upto')
      .where('name', '=', 'messages')
      .executeTakeFirstOrThrow();
    expect(Number(mark.upto)).toBe(6);
    await indexPendingMessages(d); // nothing new: nothing added twice
    expect(await indexed(d)).toBe(5);
    await integrity(d);

    await say(d, conv, 'a giraffe appears');
    const hits = await searchHistory(d, conv, words('giraffe'), 5); // recall catches the index up first
    expect(hits.map((h) => h.snippet)).toEqual(['a [giraffe] appears']);
  });

  it('deleting or editing a row keeps the index consistent, whether or not it was indexed yet', async () => {
    const { db: d, conv } = await setup();
    const a = await say(d, conv, 'alpha indexed');
    await indexPendingMessages(d);
    const b = await say(d, conv, 'beta not yet indexed');
    const c = await say(d, conv, 'gamma not yet indexed');
    await d.deleteFrom('messages').where('id', '=', b).execute();
    await d.updateTable('messages').set({ content: 'gamma edited' }).where('id', '=', c).execute();
    await d.updateTable('messages').set({ content: 'alpha edited' }).where('id', '=', a).execute();
    await indexPendingMessages(d);
    await integrity(d); // a 'delete' for a row the index never had would fail this
    expect((await searchHistory(d, conv, words('edited'), 5)).length).toBe(2);
    expect(await searchHistory(d, conv, words('beta'), 5)).toEqual([]);
    expect(await searchHistory(d, conv, words('alpha indexed'), 5)).toEqual([]);
  });
});
