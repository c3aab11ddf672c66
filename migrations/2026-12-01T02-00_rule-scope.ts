/**
 * Scoped "always" grants: an approval remembers the workspace path its call targets, and a stored
 * rule may be limited to the user it was granted for. Existing rules keep applying to everyone.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('target_path', 'text').execute();
  await db.schema.alterTable('approval_rules').addColumn('user_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approval_rules').dropColumn('user_id').execute();
  await db.schema.alterTable('approvals').dropColumn('target_path').execute();
}
