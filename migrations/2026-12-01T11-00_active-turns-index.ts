/**
 * `turns_active`: the unfinished turns of a conversation, newest first, from an index holding only
 * running and waiting turns. Every message looks its conversation's up; through `turns_status`
 * that meant sorting the matches in a temporary b-tree at every look-up.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX turns_active ON turns (conversation_id, started_at) WHERE status IN ('running', 'waiting')`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX turns_active`.execute(db);
}
