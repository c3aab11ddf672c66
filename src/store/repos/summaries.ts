/** Conversation summaries (`summaries`): the newest stands for every message up to its `upto_message_id`. */
import type { Db } from '../db.js';
import type { Message } from '../schema.js';
import { withBump } from './versions.js';

/** The newest summary of a conversation, if any. */
export async function latestSummary(
  db: Db,
  conversationId: string,
): Promise<{ id: number; upto: number; content: string } | undefined> {
  const row = await db
    .selectFrom('summaries')
    .select(['id', 'upto_message_id', 'content'])
    .where('conversation_id', '=', conversationId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && { id: Number(row.id), upto: Number(row.upto_message_id), content: row.content };
}

/**
 * Store a summary of the messages up to `upto` (one insert: until it commits, the old turns stay in
 * use). It bumps the `summaries` counter, so every process's cached newest summary is re-read.
 */
export async function insertSummary(db: Db, conversationId: string, upto: number, content: string): Promise<void> {
  await withBump(db, 'summaries', async (trx) => {
    await trx
      .insertInto('summaries')
      .values({ conversation_id: conversationId, upto_message_id: upto, content, created_at: Date.now() })
      .execute();
  });
}

/** Messages with `after < id < before`, oldest first: what a summary folds in (older than the in-memory window, too). */
export async function messagesBetween(
  db: Db,
  conversationId: string,
  after: number,
  before: number,
): Promise<Message[]> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('id', '>', after)
    .where('id', '<', before)
    .orderBy('id')
    .execute();
}
