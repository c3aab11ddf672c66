/**
 * Conversations and small settings: plain functions over the typed database. A change to a
 * conversation row that processes may hold in memory (model, archived, scratchpad) bumps the
 * `conversations` change counter in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db.js';
import type { Conversation, FullChatRef } from '../schema.js';
import { withBump } from './versions.js';
import { prepared, preparedWrite } from '../prepared.js';

const activeConversationQuery = prepared((db: Db, channel: string, chatKey: string, threadKey: string) =>
  db
    .selectFrom('conversations')
    .selectAll()
    .where('channel', '=', channel)
    .where('chat_key', '=', chatKey)
    .where('thread_key', '=', threadKey)
    // A literal, not a parameter: only then can SQLite (and PostgreSQL's generic plans) use the
    // partial unique index `conversations_active_key` instead of scanning every conversation.
    .where('archived', '=', sql.lit(0)),
);

/** The active (not archived) conversation for a key. */
export async function findActiveConversation(db: Db, key: FullChatRef): Promise<Conversation | undefined> {
  return (await activeConversationQuery(db, key.channel, key.chatKey, key.threadKey))[0];
}

const conversationQuery = prepared((db: Db, id: string) =>
  db.selectFrom('conversations').selectAll().where('id', '=', id),
);

export async function getConversation(db: Db, id: string): Promise<Conversation | undefined> {
  return (await conversationQuery(db, id))[0];
}

/** The active conversation for a key, created when missing (race-safe via the unique index). */
export async function ensureConversation(db: Db, key: FullChatRef, ownerId: string | null): Promise<Conversation> {
  const existing = await findActiveConversation(db, key);
  if (existing) return existing;
  const now = Date.now();
  await db
    .insertInto('conversations')
    .values({
      id: randomUUID(),
      channel: key.channel,
      chat_key: key.chatKey,
      thread_key: key.threadKey,
      owner_id: ownerId,
      model: null,
      scratchpad: null,
      archived: 0,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const created = await findActiveConversation(db, key);
  if (!created) throw new Error(`conversation for ${key.channel}:${key.chatKey} could not be created`);
  return created;
}

/** Archive a conversation (after `/new`); its log stays for recall and audit. */
export async function archiveConversation(db: Db, id: string): Promise<void> {
  await withBump(db, 'conversations', (trx) =>
    trx.updateTable('conversations').set({ archived: 1, updated_at: Date.now() }).where('id', '=', id).execute(),
  );
}

export async function setConversationModel(db: Db, id: string, model: string | null): Promise<void> {
  await withBump(db, 'conversations', (trx) =>
    trx.updateTable('conversations').set({ model, updated_at: Date.now() }).where('id', '=', id).execute(),
  );
}

/** Replace a conversation's scratchpad (null clears it); false when there is no such conversation. */
export async function setScratchpad(db: Db, id: string, text: string | null): Promise<boolean> {
  return withBump(
    db,
    'conversations',
    async (trx) =>
      Number(
        (
          await trx
            .updateTable('conversations')
            .set({ scratchpad: text, updated_at: Date.now() })
            .where('id', '=', id)
            .executeTakeFirst()
        ).numUpdatedRows,
      ) > 0,
    (updated) => updated,
  );
}

/** A conversation's scratchpad, null when empty or when there is no such conversation. */
export async function getScratchpad(db: Db, id: string): Promise<string | null> {
  const row = await db.selectFrom('conversations').select('scratchpad').where('id', '=', id).executeTakeFirst();
  return row?.scratchpad ?? null;
}

export async function getSetting(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function setSetting(db: Db, key: string, value: string): Promise<void> {
  const now = Date.now();
  await db
    .insertInto('settings')
    .values({ key, value, updated_at: now })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
    .execute();
}

/** Record an inbound key; false when it was already recorded (a duplicate delivery). */
export async function markInboundSeen(db: Db, key: string): Promise<boolean> {
  const r = await markSeenQuery(db, key, Date.now());
  return Number(r.numAffectedRows ?? 0n) > 0;
}

const markSeenQuery = preparedWrite((db: Db, key: string, createdAt: number) =>
  db
    .insertInto('inbound_keys')
    .values({ key, created_at: createdAt })
    .onConflict((oc) => oc.column('key').doNothing()),
);

/** Forget inbound keys older than `before` (epoch ms). */
export async function pruneInboundKeys(db: Db, before: number): Promise<void> {
  await db.deleteFrom('inbound_keys').where('created_at', '<', before).execute();
}

/** Whether an inbound key was recorded already. */
export async function isInboundSeen(db: Db, key: string): Promise<boolean> {
  const row = await db.selectFrom('inbound_keys').select('key').where('key', '=', key).executeTakeFirst();
  return row !== undefined;
}

/** The most recently active, not archived conversation of a chat (any thread; never a sub-agent's). */
export async function latestConversation(db: Db, channel: string, chatKey: string): Promise<Conversation | undefined> {
  return (
    db
      .selectFrom('conversations')
      .selectAll()
      .where('channel', '=', channel)
      .where('chat_key', '=', chatKey)
      .where('archived', '=', sql.lit(0))
      // Sub-agents' conversations are not chats of their own.
      .where('parent_id', 'is', null)
      .orderBy('updated_at', 'desc')
      .executeTakeFirst()
  );
}
