/**
 * The delivery ledger: one row per thing a person must see (a reply, a card, a tool status line,
 * a notification, an attachment, an error), written in the same transaction as the state it
 * shows and marked delivered with the platform's message references once the platform took it.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Row ids: SQLite's INTEGER PRIMARY KEY AUTOINCREMENT; PostgreSQL's bigserial.
  const pg = isPostgres(db);
  await db.schema
    .createTable('deliveries')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('idem_key', 'text', (c) => c.notNull().unique())
    .addColumn('content', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('refs', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('turn_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('deliveries_conversation_status')
    .on('deliveries')
    .columns(['conversation_id', 'status', 'id'])
    .execute();
  await db.schema.createIndex('deliveries_status').on('deliveries').columns(['status', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deliveries').execute();
}
