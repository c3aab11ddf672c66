/**
 * Memories belong to people: `memories.owner` is the principal (`telegram:42`) whose memory a row
 * is, or '' for the shared memory that only admins write and every prompt shows labelled as
 * shared. Keys are unique per owner. Every memory stored before this migration was global, so it
 * becomes shared (its `created_by` still says who saved it).
 *
 * SQLite cannot drop the old `UNIQUE(key)`, so the table is rebuilt with the same row ids: the
 * external-content FTS5 index (`memories_fts`, content='memories') stays valid, and its triggers
 * are made again on the new table. PostgreSQL changes the table in place; its full-text index is
 * an expression index that does not involve the owner.
 * Down keeps the shared memories only (personal ones cannot share one key space) and restores
 * `UNIQUE(key)`.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`ALTER TABLE memories ADD COLUMN owner text NOT NULL DEFAULT ''`.execute(db);
    await sql`ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_key_key`.execute(db);
    await sql`ALTER TABLE memories ADD CONSTRAINT memories_owner_key UNIQUE (owner, key)`.execute(db);
    return;
  }
  await rebuildSqlite(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`DELETE FROM memories WHERE owner <> ''`.execute(db);
    await sql`ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_owner_key`.execute(db);
    await sql`ALTER TABLE memories ADD CONSTRAINT memories_key_key UNIQUE (key)`.execute(db);
    await sql`ALTER TABLE memories DROP COLUMN owner`.execute(db);
    return;
  }
  await sql`DELETE FROM memories WHERE owner <> ''`.execute(db);
  await rebuildSqlite(db, false);
}

/** Rebuild `memories` with (`withOwner`) or without the owner column, keeping ids, then its FTS triggers. */
async function rebuildSqlite(db: Kysely<any>, withOwner: boolean): Promise<void> {
  for (const trigger of ['memories_fts_ai', 'memories_fts_ad', 'memories_fts_au']) {
    await sql`DROP TRIGGER IF EXISTS ${sql.raw(trigger)}`.execute(db);
  }
  await sql`CREATE TABLE memories_next (
    id integer PRIMARY KEY AUTOINCREMENT,
    ${sql.raw(withOwner ? "owner text NOT NULL DEFAULT ''," : '')}
    key text NOT NULL,
    value text NOT NULL,
    created_by text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    ${sql.raw(withOwner ? 'UNIQUE (owner, key)' : 'UNIQUE (key)')}
  )`.execute(db);
  await sql`INSERT INTO memories_next (id, key, value, created_by, created_at, updated_at)
    SELECT id, key, value, created_by, created_at, updated_at FROM memories`.execute(db);
  await sql`DROP TABLE memories`.execute(db);
  await sql`ALTER TABLE memories_next RENAME TO memories`.execute(db);
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
}
