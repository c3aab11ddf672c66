/**
 * `people`: the display name each principal (`channel:userId`) last came with — an inbound
 * message's `userName`, a tapping person's name — so every instance over this database, and this
 * one after a restart, names people in cards and refusals as the platform named them.
 * `seen_at` orders them: an instance starts knowing the most recently seen ones.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('people')
    .addColumn('principal', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('people_seen_at').on('people').column('seen_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('people').execute();
}
