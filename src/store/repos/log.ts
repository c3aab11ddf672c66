/** The conversation log (messages) and the inbox of queued user messages. */
import type { Db } from '../db.js';
import type { InboxItem, Message, NewMessage } from '../schema.js';
import { prepared, preparedWrite } from '../prepared.js';

const insertMessageQuery = preparedWrite(
  (
    db: Db,
    conversationId: string,
    turnId: string | null,
    role: Message['role'],
    content: string | null,
    toolCalls: string | null,
    toolCallId: string | null,
    authorId: string | null,
    createdAt: number,
  ) =>
    db
      .insertInto('messages')
      .values({
        conversation_id: conversationId,
        turn_id: turnId,
        role,
        content,
        tool_calls: toolCalls,
        tool_call_id: toolCallId,
        author_id: authorId,
        created_at: createdAt,
      })
      .returning('id'),
);

/** Append a message to the log; returns its id. */
export async function insertMessage(db: Db, message: Omit<NewMessage, 'created_at'>): Promise<number> {
  const r = await insertMessageQuery(
    db,
    message.conversation_id,
    message.turn_id ?? null,
    message.role,
    message.content ?? null,
    message.tool_calls ?? null,
    message.tool_call_id ?? null,
    message.author_id ?? null,
    Date.now(),
  );
  const row = r.rows[0];
  if (!row) throw new Error('message insert returned no id');
  return row.id;
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

const enqueueQuery = preparedWrite(
  (db: Db, conversationId: string, authorId: string, text: string, attachments: string | null, createdAt: number) =>
    db
      .insertInto('inbox')
      .values({
        conversation_id: conversationId,
        author_id: authorId,
        text,
        attachments,
        created_at: createdAt,
        consumed_at: null,
      })
      .returning('id'),
);

export async function enqueueInbox(
  db: Db,
  item: { conversationId: string; authorId: string; text: string; attachments?: string[] },
): Promise<number> {
  const r = (
    await enqueueQuery(
      db,
      item.conversationId,
      item.authorId,
      item.text,
      item.attachments?.length ? JSON.stringify(item.attachments) : null,
      Date.now(),
    )
  ).rows[0];
  if (!r) throw new Error('inbox insert returned no id');
  return r.id;
}

const pendingInboxQuery = prepared((db: Db, conversationId: string) =>
  db
    .selectFrom('inbox')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('consumed_at', 'is', null)
    .orderBy('id'),
);

/** Unconsumed inbox items of a conversation, oldest first. */
export async function pendingInbox(db: Db, conversationId: string): Promise<InboxItem[]> {
  return pendingInboxQuery(db, conversationId);
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

/** Drop one author's queued (unconsumed) messages of a conversation; returns how many. */
export async function clearInboxOf(db: Db, conversationId: string, authorId: string): Promise<number> {
  const r = await db
    .deleteFrom('inbox')
    .where('conversation_id', '=', conversationId)
    .where('author_id', '=', authorId)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Who has messages queued in a conversation (distinct authors of unconsumed inbox rows). */
export async function queuedAuthors(db: Db, conversationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('inbox')
    .select('author_id')
    .where('conversation_id', '=', conversationId)
    .where('consumed_at', 'is', null)
    .distinct()
    .execute();
  return rows.map((r) => r.author_id);
}

/** Conversations with queued messages (recovery). */
export async function conversationsWithInbox(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('inbox')
    .select('conversation_id')
    .where('consumed_at', 'is', null)
    .distinct()
    .execute();
  return rows.map((r) => r.conversation_id);
}

const messagesPage = prepared((db: Db, conversationId: string, before: number, limit: number) =>
  db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('id', '<', before)
    .orderBy('id', 'desc')
    .limit(limit),
);

const messagesAfterQuery = prepared((db: Db, conversationId: string, after: number) =>
  db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('id', '>', after)
    .orderBy('id'),
);

/** Messages of a conversation written after message `after`, oldest first. */
export async function messagesAfter(db: Db, conversationId: string, after: number): Promise<Message[]> {
  return messagesAfterQuery(db, conversationId, after);
}

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
