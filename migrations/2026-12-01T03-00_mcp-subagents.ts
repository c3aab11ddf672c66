/**
 * MCP lazy-tool grants per conversation (`activate_tools`), so a granted group stays offered after
 * a restart.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tool_grants')
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('tool_group', 'text', (c) => c.notNull())
    .addColumn('granted_by', 'text')
    .addColumn('granted_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tool_grants_pk', ['conversation_id', 'tool_group'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tool_grants').execute();
}
