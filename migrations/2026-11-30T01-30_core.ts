/**
 * Core tables: conversations, the message log, inbox, turns, tool calls, approvals, questions,
 * rules, inbound de-duplication, audit, known tools, pairing and settings.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type ColumnDefinitionBuilder, type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Row ids: SQLite's INTEGER PRIMARY KEY AUTOINCREMENT; PostgreSQL's bigserial. Everything else
  // below is the same SQL on both.
  const pg = isPostgres(db);
  const idType = pg ? 'bigserial' : 'integer';
  const idColumn = (c: ColumnDefinitionBuilder) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement());
  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('chat_key', 'text', (c) => c.notNull())
    .addColumn('thread_key', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('owner_id', 'text')
    .addColumn('model', 'text')
    .addColumn('scratchpad', 'text')
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('conversations_active_key')
    .on('conversations')
    .columns(['channel', 'chat_key', 'thread_key'])
    .unique()
    .where(sql.ref('archived'), '=', 0)
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', idType, idColumn)
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('turn_id', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('content', 'text')
    .addColumn('tool_calls', 'text')
    .addColumn('tool_call_id', 'text')
    .addColumn('author_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('messages_conversation').on('messages').columns(['conversation_id', 'id']).execute();

  await db.schema
    .createTable('inbox')
    .addColumn('id', idType, idColumn)
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('author_id', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('attachments', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('inbox_pending').on('inbox').columns(['conversation_id', 'consumed_at']).execute();

  await db.schema
    .createTable('turns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('requester_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rounds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('turns_status').on('turns').columns(['status', 'conversation_id']).execute();

  await db.schema
    .createTable('tool_calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('turn_id', 'text', (c) => c.notNull())
    .addColumn('message_id', pg ? 'bigint' : 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('args', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('result', 'text')
    .addColumn('summary', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('tool_calls_message').on('tool_calls').columns(['message_id', 'position']).execute();
  await db.schema.createIndex('tool_calls_status').on('tool_calls').columns(['status']).execute();

  await db.schema
    .createTable('approvals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('tool_call_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tool_name', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('preview', 'text', (c) => c.notNull())
    .addColumn('requester', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scope', 'text')
    .addColumn('decided_by', 'text')
    .addColumn('note', 'text')
    .addColumn('card_ref', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .execute();
  await db.schema.createIndex('approvals_status').on('approvals').columns(['status', 'conversation_id']).execute();

  await db.schema
    .createTable('questions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('tool_call_id', 'text', (c) => c.notNull())
    .addColumn('question', 'text', (c) => c.notNull())
    .addColumn('suggested_answers', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('answer', 'text')
    .addColumn('answered_by', 'text')
    .addColumn('card_ref', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('answered_at', 'bigint')
    .execute();
  await db.schema.createIndex('questions_status').on('questions').columns(['conversation_id', 'status']).execute();

  await db.schema
    .createTable('approval_rules')
    .addColumn('id', idType, idColumn)
    .addColumn('tool_glob', 'text', (c) => c.notNull())
    .addColumn('path_glob', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('conversation_id', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('inbound_keys')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('audit')
    .addColumn('id', idType, idColumn)
    .addColumn('conversation_id', 'text')
    .addColumn('tool_call_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_kind').on('audit').columns(['kind', 'created_at']).execute();

  await db.schema
    .createTable('known_tools')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('first_seen', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('pairing_codes')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('chat_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('paired_users')
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('approved_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('paired_users_pk', ['channel', 'user_id'])
    .execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'settings',
    'paired_users',
    'pairing_codes',
    'known_tools',
    'audit',
    'inbound_keys',
    'approval_rules',
    'questions',
    'approvals',
    'tool_calls',
    'turns',
    'inbox',
    'messages',
    'conversations',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
