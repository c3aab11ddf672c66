/**
 * `model_usage`: the token usage the endpoint reported for each model request (a turn's rounds
 * and conversation summaries), with who asked and which model answered — `/usage`, the daily
 * token limit and the `switchboard_tokens_total` figures read it.
 * `summaries`: a model-written summary of a conversation's oldest turns, up to a message id; the
 * newest one stands for those turns in what the model sees (the log keeps every message).
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('model_usage')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('turn_id', 'text')
    .addColumn('requester_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
    .addColumn('completion_tokens', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('model_usage_requester')
    .on('model_usage')
    .columns(['requester_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('summaries')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('upto_message_id', 'bigint', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('summaries_conversation').on('summaries').columns(['conversation_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('summaries').execute();
  await db.schema.dropTable('model_usage').execute();
}
