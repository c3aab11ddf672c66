/**
 * `sent_files` and `sent_file_chunks`: the copy of a file taken when a tool sends it into a chat.
 * Channels upload (and the web chat serves) this copy, never the workspace path, so a change to
 * the workspace after sending (a symlink planted in its place) changes nothing already sent. The
 * content is kept in the database in chunks of up to 1 MB, so every instance over the database
 * can deliver it and it survives a restart as the delivery rows do. A copy is kept while its
 * delivery is open (`delivery_key`) or while a web chat message offers it for download
 * (`web_ref`); the maintenance sweep removes the rest.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sent_files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('complete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivery_key', 'text')
    .addColumn('web_ref', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sent_files_created').on('sent_files').column('created_at').execute();
  await db.schema
    .createTable('sent_file_chunks')
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', isPostgres(db) ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('sent_file_chunks_pk', ['file_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sent_file_chunks').execute();
  await db.schema.dropTable('sent_files').execute();
}
