/**
 * Delivery claims: a row being sent belongs to one instance until its claim expires. `claimed_by`
 * names the instance, `claim_expires_at` when another may take the row over (the sender died), and
 * `claim_token` is a fencing number bumped on every claim, so a sender that lost its claim cannot
 * record an outcome over the new sender's.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('claimed_by', 'text').execute();
  await db.schema
    .alterTable('deliveries')
    .addColumn('claim_token', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('deliveries')
    .addColumn('claim_expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deliveries').dropColumn('claim_expires_at').execute();
  await db.schema.alterTable('deliveries').dropColumn('claim_token').execute();
  await db.schema.alterTable('deliveries').dropColumn('claimed_by').execute();
}
