/**
 * Scoped "always" grants: an approval remembers the workspace path its call targets, and a stored
 * rule may be limited to the user it was granted for. Existing rules keep applying to everyone.
 * Pairing welcomes: an approved code is welcomed once (`welcomed_at`); codes approved before this
 * migration count as welcomed, so an upgrade greets nobody twice.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('target_path', 'text').execute();
  await db.schema.alterTable('approval_rules').addColumn('user_id', 'text').execute();
  await db.schema.alterTable('pairing_codes').addColumn('welcomed_at', 'bigint').execute();
  await sql`UPDATE pairing_codes SET welcomed_at = created_at WHERE status = 'approved'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('pairing_codes').dropColumn('welcomed_at').execute();
  await db.schema.alterTable('approval_rules').dropColumn('user_id').execute();
  await db.schema.alterTable('approvals').dropColumn('target_path').execute();
}
