/**
 * MCP lazy-tool grants per conversation (`activate_tools`), so a granted group stays offered after
 * a restart; and sub-agents: a child agent is a conversation of its own whose row points at the
 * parent conversation and the parent's `task`/`plan` call, so the tree is rebuilt from the
 * database after a crash.
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

  const columns: Array<[string, 'text' | 'integer']> = [
    ['parent_id', 'text'],
    ['parent_call_id', 'text'],
    ['agent_kind', 'text'],
    ['agent_label', 'text'],
    ['agent_prompt', 'text'],
    ['agent_tools', 'text'],
    ['agent_state', 'text'],
    ['agent_result', 'text'],
  ];
  for (const [name, type] of columns) await db.schema.alterTable('conversations').addColumn(name, type).execute();
  await db.schema
    .alterTable('conversations')
    .addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('conversations_parent').on('conversations').column('parent_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('conversations_parent').execute();
  for (const name of [
    'parent_id',
    'parent_call_id',
    'agent_kind',
    'agent_label',
    'agent_prompt',
    'agent_tools',
    'agent_state',
    'agent_result',
    'depth',
  ]) {
    await db.schema.alterTable('conversations').dropColumn(name).execute();
  }
  await db.schema.dropTable('tool_grants').execute();
}
