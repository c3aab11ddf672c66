/**
 * `deliveries_open`: a chat's rows still to be sent, in order, from an index holding only those.
 * The presenter reads them after every turn; through `deliveries_conversation_status` the two
 * open statuses were two ranges merged by a sort at every read.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX deliveries_open ON deliveries (conversation_id, id) WHERE status IN ('pending', 'sending')`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX deliveries_open`.execute(db);
}
