/**
 * `store_versions`: one counter per kind of rarely written state that processes keep in memory
 * (approval rules, memories, conversation rows, tool grants). Every write of that state bumps its
 * counter in the same transaction; a process reads the counters once per turn step and drops what
 * it holds of a kind whose counter moved, so a write through another process (or another
 * instance over PostgreSQL) is seen at the next step.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('store_versions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('store_versions').execute();
}
