/**
 * The web chat's rows: one-time login links, sessions, and the messages the page shows (the web
 * "platform"'s own store: what Telegram or Slack keep on their side, the web chat keeps here).
 * Plus the operator console's look across every conversation (pending cards, failed deliveries).
 */
import { sql } from 'kysely';
import type { Db } from '../db.js';
import { isPostgres } from '../dialect.js';
import type { Approval, Conversation, Delivery, Question, WebMessage, WebSession } from '../schema.js';

/** Store a login link (by its token's hash). */
export async function insertLogin(
  db: Db,
  row: { token_hash: string; user_name: string; admin: boolean; expires_at: number },
): Promise<void> {
  await db
    .insertInto('web_logins')
    .values({
      token_hash: row.token_hash,
      user_name: row.user_name,
      admin: row.admin ? 1 : 0,
      created_at: Date.now(),
      expires_at: row.expires_at,
      used_at: null,
    })
    .execute();
}

/**
 * Use a login link once: marks it used and returns it, or undefined when it is unknown, used or
 * expired. The conditional update makes two concurrent uses yield one session.
 */
export async function useLogin(
  db: Db,
  tokenHash: string,
  now: number,
): Promise<{ user_name: string; admin: number } | undefined> {
  const r = await db
    .updateTable('web_logins')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) return undefined;
  return db
    .selectFrom('web_logins')
    .select(['user_name', 'admin'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function insertSession(db: Db, row: WebSession): Promise<void> {
  await db.insertInto('web_sessions').values(row).execute();
}

/** The live session of a cookie token's hash. */
export async function sessionByToken(db: Db, tokenHash: string, now: number): Promise<WebSession | undefined> {
  return db
    .selectFrom('web_sessions')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function touchSession(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('web_sessions').set({ last_seen_at: now }).where('id', '=', id).execute();
}

/** Live sessions, newest first (`switchboard web sessions`). */
export async function liveSessions(db: Db, now: number): Promise<WebSession[]> {
  return db
    .selectFrom('web_sessions')
    .selectAll()
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .execute();
}

/**
 * Whether a user has a live session made from an `--admin` link: the web chat's admin power, read
 * at each decision (ending the sessions ends the power on every instance).
 */
export async function hasLiveAdminSession(db: Db, userName: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('web_sessions')
    .select('id')
    .where('user_name', '=', userName)
    .where('admin', '=', 1)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether a session is still live (not revoked, not expired): an open event stream checks it. */
export async function sessionAlive(db: Db, id: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('web_sessions')
    .select('id')
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** End sessions by id, or every session of a user. @returns how many ended. */
export async function deleteSessions(db: Db, idOrUser: string): Promise<number> {
  const r = await db
    .deleteFrom('web_sessions')
    .where((eb) => eb.or([eb('id', '=', idOrUser), eb('user_name', '=', idOrUser)]))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** A message's current row. */
export async function messageByRef(db: Db, ref: string): Promise<WebMessage | undefined> {
  return db.selectFrom('web_messages').selectAll().where('ref', '=', ref).orderBy('id', 'desc').executeTakeFirst();
}

/** The class of the advisory locks that order a chat's writes (the other half of the key is the chat's hash). */
const CHAT_WRITE_LOCK = 0x5b_0e_b1;

/**
 * Post a message, or replace one (same `ref`, keeping its place): the new row gets a newer id and
 * the rows it replaces go, so the table holds each message once, as it stands.
 *
 * A page's stream reads a chat's rows by id (`messagesAfter`) and goes on from the last it got, so
 * a chat's ids must become visible in their order. A serial id is taken at the insert but seen only
 * at the commit: over PostgreSQL, two writes of one chat (two instances, or two connections of
 * one) could commit out of order, and a stream that read the later id first would skip the other
 * row for good. The writes of one chat therefore take an advisory lock first, held to the commit,
 * so they take their ids and commit one after the other. SQLite commits one writer at a time.
 * @returns the new row's id (the stream's event id).
 */
export async function writeMessage(
  db: Db,
  row: { ref: string; chat_key: string; thread_key: string; pos: number; body: string; deleted?: boolean },
): Promise<number> {
  return db.transaction().execute(async (tx) => {
    if (isPostgres(tx))
      await sql`SELECT pg_advisory_xact_lock(${CHAT_WRITE_LOCK}, hashtext(${row.chat_key}))`.execute(tx);
    const inserted = await tx
      .insertInto('web_messages')
      .values({
        ref: row.ref,
        chat_key: row.chat_key,
        thread_key: row.thread_key,
        pos: row.pos,
        body: row.body,
        deleted: row.deleted ? 1 : 0,
        created_at: Date.now(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await tx.deleteFrom('web_messages').where('ref', '=', row.ref).where('id', '<', inserted.id).execute();
    return Number(inserted.id);
  });
}

/**
 * The newest shown message of a thread with exactly this stored body, placed after `afterPos`
 * (its reference): a post a crash left unrecorded is found instead of shown twice. Only the
 * thread's last 100 messages are looked at (a post looked up is a recent one).
 */
export async function findMessage(
  db: Db,
  where: { chat_key: string; thread_key: string; body: string; afterPos?: number },
): Promise<string | undefined> {
  let q = db
    .selectFrom('web_messages')
    .select(['ref', 'body'])
    .where('chat_key', '=', where.chat_key)
    .where('thread_key', '=', where.thread_key)
    .where('deleted', '=', 0);
  if (where.afterPos !== undefined) q = q.where('pos', '>', where.afterPos);
  const rows = await q.orderBy('id', 'desc').limit(100).execute();
  return rows.find((r) => r.body === where.body)?.ref;
}

/** A chat's rows changed after event id `after` (all of them for 0), oldest change first. */
export async function messagesAfter(db: Db, chatKey: string, after: number, limit = 2000): Promise<WebMessage[]> {
  let q = db.selectFrom('web_messages').selectAll().where('chat_key', '=', chatKey).where('id', '>', after);
  // A fresh page needs no tombstones: nothing to remove yet.
  if (after === 0) q = q.where('deleted', '=', 0);
  return q.orderBy('id').limit(limit).execute();
}

/** Pending approvals of every conversation, oldest first, with their conversation. */
export async function allPendingApprovals(db: Db): Promise<Array<{ approval: Approval; conversation: Conversation }>> {
  const rows = await db
    .selectFrom('approvals')
    .selectAll()
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .limit(200)
    .execute();
  return (await withConversations(db, rows)).map(({ row, conversation }) => ({ approval: row, conversation }));
}

/** Pending questions of every conversation, oldest first, with their conversation. */
export async function allPendingQuestions(db: Db): Promise<Array<{ question: Question; conversation: Conversation }>> {
  const rows = await db
    .selectFrom('questions')
    .selectAll()
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .limit(200)
    .execute();
  return (await withConversations(db, rows)).map(({ row, conversation }) => ({ question: row, conversation }));
}

async function withConversations<T extends { conversation_id: string }>(
  db: Db,
  rows: T[],
): Promise<Array<{ row: T; conversation: Conversation }>> {
  if (rows.length === 0) return [];
  const ids = [...new Set(rows.map((r) => r.conversation_id))];
  const convs = await db.selectFrom('conversations').selectAll().where('id', 'in', ids).execute();
  const byId = new Map(convs.map((c) => [c.id, c]));
  return rows.flatMap((r) => {
    const conversation = byId.get(r.conversation_id);
    return conversation ? [{ row: r, conversation }] : [];
  });
}

/** The most recent deliveries that failed for good or were given up, newest first. */
export async function failedDeliveries(db: Db, limit = 20): Promise<Delivery[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('status', 'in', ['failed', 'abandoned'])
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();
}

/** The shown messages of one conversation of a user (its thread), oldest first. */
export async function threadMessages(db: Db, chatKey: string, threadKey: string): Promise<WebMessage[]> {
  return db
    .selectFrom('web_messages')
    .selectAll()
    .where('chat_key', '=', chatKey)
    .where('thread_key', '=', threadKey)
    .where('deleted', '=', 0)
    .orderBy('pos')
    .execute();
}

/**
 * What a tool call returned (the `tool` row of the model's log), found from the web message that
 * shows its status line: the status delivery that posted that message names the call. Only the
 * conversations of `chatKey` on the web (the chat and its sub-agents) are looked in, so a user can
 * read the output of their own calls only. @returns undefined when nothing was kept.
 */
export async function toolOutputOfMessage(db: Db, chatKey: string, ref: string): Promise<string | undefined> {
  const convs = await db
    .selectFrom('conversations')
    .select('id')
    .where('channel', '=', 'web')
    .where('chat_key', '=', chatKey)
    .execute();
  const ids = convs.map((c) => c.id);
  if (ids.length === 0) return undefined;
  const deliveries = await db
    .selectFrom('deliveries')
    .select(['idem_key', 'refs', 'conversation_id'])
    .where('conversation_id', 'in', ids)
    .where('kind', '=', 'status')
    .where('idem_key', 'like', 'tool:%')
    // refs is a JSON array of {ref, shown}; a UUID has no LIKE wildcards, and the parse below checks it.
    .where('refs', 'like', `%${ref}%`)
    .execute();
  const hit = deliveries.find((d) => (JSON.parse(d.refs) as Array<{ ref?: string }>).some((r) => r.ref === ref));
  if (!hit) return undefined;
  const callId = hit.idem_key.slice('tool:'.length);
  const rows = await db
    .selectFrom('messages')
    .select(['content', 'conversation_id'])
    .where('role', '=', 'tool')
    .where('tool_call_id', '=', callId)
    .where('conversation_id', 'in', ids)
    .orderBy('id', 'desc')
    .execute();
  // A call id is the model's, unique within a conversation: prefer the line's own conversation.
  const own = rows.find((r) => r.conversation_id === hit.conversation_id) ?? rows[0];
  return own?.content ?? undefined;
}
