/**
 * The message search index is filled off the hot path: inserting a message no longer feeds
 * `messages_fts` through a per-row trigger; an indexer adds new messages in batches (every
 * second, and before each search) and records how far it got in `fts_progress`. Deleting or
 * editing a message still updates the index at once, but only for rows the index already holds
 * (an external-content FTS5 index must never be told to delete a row it does not have).
 * Existing messages were indexed by the old trigger: the progress starts at the newest one.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

const INDEXED = `old.role IN ('user', 'assistant') AND old.content IS NOT NULL`;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('fts_progress')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('upto', 'bigint', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO fts_progress (name, upto) SELECT 'messages', COALESCE(MAX(id), 0) FROM messages`.execute(db);
  // PostgreSQL searches through expression GIN indexes that the server keeps: no FTS5 triggers.
  if (isPostgres(db)) return;
  await sql`DROP TRIGGER messages_fts_ai`.execute(db);
  await sql`DROP TRIGGER messages_fts_ad`.execute(db);
  await sql`DROP TRIGGER messages_fts_au`.execute(db);
  await sql
    .raw(`CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages
    WHEN ${INDEXED} AND old.id <= (SELECT upto FROM fts_progress WHERE name = 'messages') BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  END`)
    .execute(db);
  // Rows past the progress mark are not in the index yet; the indexer reads their current text.
  await sql
    .raw(`CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, role ON messages
    WHEN old.id <= (SELECT upto FROM fts_progress WHERE name = 'messages') BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) SELECT 'delete', old.id, old.content WHERE ${INDEXED};
    INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content
      WHERE new.role IN ('user', 'assistant') AND new.content IS NOT NULL;
  END`)
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await db.schema.dropTable('fts_progress').execute();
    return;
  }
  // Index what the indexer had not reached, then go back to the per-row triggers.
  await sql`INSERT INTO messages_fts(rowid, content)
    SELECT id, content FROM messages WHERE role IN ('user', 'assistant') AND content IS NOT NULL
      AND id > (SELECT upto FROM fts_progress WHERE name = 'messages')`.execute(db);
  await sql`DROP TRIGGER messages_fts_ad`.execute(db);
  await sql`DROP TRIGGER messages_fts_au`.execute(db);
  await sql`CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages
    WHEN new.role IN ('user', 'assistant') AND new.content IS NOT NULL BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
  END`.execute(db);
  await sql`CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages
    WHEN old.role IN ('user', 'assistant') AND old.content IS NOT NULL BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  END`.execute(db);
  await sql`CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, role ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) SELECT 'delete', old.id, old.content
      WHERE old.role IN ('user', 'assistant') AND old.content IS NOT NULL;
    INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content
      WHERE new.role IN ('user', 'assistant') AND new.content IS NOT NULL;
  END`.execute(db);
  await db.schema.dropTable('fts_progress').execute();
}
