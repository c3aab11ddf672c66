/**
 * `questions.waiter`: a question asked by a running tool (an MCP server's elicitation or sampling
 * approval) names the process whose call waits for the answer. Answering it resolves that wait
 * instead of finishing the tool call; once that process is gone the question is expired.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('questions').addColumn('waiter', 'text').execute();
  await sql`CREATE INDEX questions_waiting ON questions (waiter) WHERE status = 'pending' AND waiter IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX questions_waiting`.execute(db);
  await db.schema.alterTable('questions').dropColumn('waiter').execute();
}
