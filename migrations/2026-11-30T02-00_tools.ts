/**
 * Built-in tool tables: saved memories with an FTS5 index, an FTS5 index over the user and
 * assistant messages of the conversation log (kept in sync by triggers), and the record of which
 * files a conversation has read (`edit_file` requires a prior `read_file`).
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('memories')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  if (pg) await postgresFullText(db);
  else await sqliteFullText(db);

  await db.schema
    .createTable('file_reads')
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text')
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('mtime_ms', 'bigint', (c) => c.notNull())
    .addColumn('read_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_reads_pk', ['conversation_id', 'path'])
    .execute();
}

/**
 * PostgreSQL: GIN indexes over the same text the FTS5 tables index, as expressions so no column or
 * trigger is needed; `src/store/repos/search.ts` queries with the identical expressions.
 */
async function postgresFullText(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX memories_fts ON memories USING gin (to_tsvector('english', key || ' ' || value))`.execute(db);
  await sql`CREATE INDEX messages_fts ON messages USING gin (to_tsvector('english', content))
    WHERE role IN ('user', 'assistant') AND content IS NOT NULL`.execute(db);
}

async function sqliteFullText(db: Kysely<any>): Promise<void> {
  // External-content FTS5 tables: the text lives once, in the base table; triggers keep the index
  // in step, including updates made by `INSERT ... ON CONFLICT DO UPDATE`.
  await sql`CREATE VIRTUAL TABLE memories_fts USING fts5(key, value, content='memories', content_rowid='id', tokenize='porter unicode61')`.execute(
    db,
  );
  await sql`CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
  END`.execute(db);
  await sql`CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
  END`.execute(db);
  await sql`CREATE TRIGGER memories_fts_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
    INSERT INTO memories_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
  END`.execute(db);

  // Only user and assistant text is indexed: tool results are bulky and mostly file contents.
  // The WHEN clauses of insert and delete must match, or the external-content index drifts.
  await sql`CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id', tokenize='porter unicode61')`.execute(
    db,
  );
  await sql`CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages
    WHEN new.role IN ('user', 'assistant') AND new.content IS NOT NULL BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
  END`.execute(db);
  await sql`CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages
    WHEN old.role IN ('user', 'assistant') AND old.content IS NOT NULL BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  END`.execute(db);
  // One trigger for updates so the old entry is always removed before the new one is added.
  await sql`CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, role ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) SELECT 'delete', old.id, old.content
      WHERE old.role IN ('user', 'assistant') AND old.content IS NOT NULL;
    INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content
      WHERE new.role IN ('user', 'assistant') AND new.content IS NOT NULL;
  END`.execute(db);
  await sql`INSERT INTO messages_fts(rowid, content)
    SELECT id, content FROM messages WHERE role IN ('user', 'assistant') AND content IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('file_reads').ifExists().execute();
  if (isPostgres(db)) {
    await db.schema.dropTable('memories').ifExists().execute();
    await sql`DROP INDEX IF EXISTS messages_fts`.execute(db);
    return;
  }
  for (const trigger of ['messages_fts_ai', 'messages_fts_ad', 'messages_fts_au']) {
    await sql`DROP TRIGGER IF EXISTS ${sql.raw(trigger)}`.execute(db);
  }
  await sql`DROP TABLE IF EXISTS messages_fts`.execute(db);
  await sql`DROP TABLE IF EXISTS memories_fts`.execute(db);
  await db.schema.dropTable('memories').ifExists().execute();
}
