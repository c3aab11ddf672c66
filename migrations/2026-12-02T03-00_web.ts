/**
 * The web chat: one-time login links, sessions (server-side, so they survive restarts and are
 * shared by every instance over one database) and the messages the web "platform" shows — one
 * row per message as it stands now (an edit replaces the row under a newer id, so a stream
 * resumed after id N gets exactly what changed since).
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('web_logins')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('admin', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema
    .createTable('web_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('admin', 'integer', (c) => c.notNull())
    .addColumn('csrf', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('web_messages')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('chat_key', 'text', (c) => c.notNull())
    .addColumn('thread_key', 'text', (c) => c.notNull())
    .addColumn('pos', 'bigint', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_messages_chat').on('web_messages').columns(['chat_key', 'id']).execute();
  await db.schema.createIndex('web_messages_ref').on('web_messages').columns(['ref']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('web_messages').execute();
  await db.schema.dropTable('web_sessions').execute();
  await db.schema.dropTable('web_logins').execute();
}
