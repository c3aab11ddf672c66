/** The conversation log (messages) and the inbox of queued user messages. */
import type { Db } from '../db.js';
import type { InboxItem, Message, NewMessage } from '../schema.js';
import { prepared } from '../prepared.js';

export async function insertMessage(db: Db, message: Omit<NewMessage, 'created_at'>): Promise<number> {
  const r = await db
    .insertInto('messages')
    .values({ ...message, created_at: Date.now() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

/** Every message of a conversation, oldest first. */
export async function listMessages(db: Db, conversationId: string): Promise<Message[]> {
  return db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('id').execute();
}

export async function lastMessage(db: Db, conversationId: string): Promise<Message | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function enqueueInbox(
  db: Db,
  item: { conversationId: string; authorId: string; text: string; attachments?: string[] },
): Promise<number> {
  const r = await db
    .insertInto('inbox')
    .values({
      conversation_id: item.conversationId,
      author_id: item.authorId,
      text: item.text,
      attachments: item.attachments?.length ? JSON.stringify(item.attachments) : null,
      created_at: Date.now(),
      consumed_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

const pendingInboxQuery = prepared(1, (db: Db, conversationId: string) =>
  db.selectFrom('inbox').selectAll().where('conversation_id', '=', conversationId).where('consumed_at', 'is', null).orderBy('id'),
);

/** Unconsumed inbox items of a conversation, oldest first. */
export async function pendingInbox(db: Db, conversationId: string): Promise<InboxItem[]> {
  return pendingInboxQuery(db, conversationId);
}

const queuedQuery = prepared(1, (db: Db, conversationId: string) =>
  db.selectFrom('inbox').select('id').where('conversation_id', '=', conversationId).where('consumed_at', 'is', null).limit(1),
);

/** Whether a conversation has an unconsumed inbox item. */
export async function hasQueued(db: Db, conversationId: string): Promise<boolean> {
  return (await queuedQuery(db, conversationId)).length > 0;
}

/** Drop every queued message (`stop`). Returns how many were dropped. */
export async function clearInbox(db: Db, conversationId: string): Promise<number> {
  const r = await db
    .deleteFrom('inbox')
    .where('conversation_id', '=', conversationId)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Conversations with queued messages (recovery). */
export async function conversationsWithInbox(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('inbox').select('conversation_id').where('consumed_at', 'is', null).distinct().execute();
  return rows.map((r) => r.conversation_id);
}

const messagesPage = prepared(3, (db: Db, conversationId: string, before: number, limit: number) =>
  db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).where('id', '<', before).orderBy('id', 'desc').limit(limit),
);

/**
 * The most recent messages of a conversation whose `cost` adds up to at least `budget` (or all of
 * them), oldest first. Loading a bounded window keeps each round's cost flat however long the
 * conversation grows; the history builder trims it to the exact budget.
 */
export async function recentMessages(
  db: Db,
  conversationId: string,
  budget: number,
  cost: (m: Message) => number,
  pageSize = 200,
): Promise<Message[]> {
  const window: Message[] = [];
  let spent = 0;
  let before = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const page = await messagesPage(db, conversationId, before, pageSize);
    for (const m of page) {
      window.push(m);
      spent += cost(m);
    }
    const last = page.at(-1);
    if (page.length < pageSize || spent >= budget || !last) break;
    before = last.id;
  }
  return window.reverse();
}
