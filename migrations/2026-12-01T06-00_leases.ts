/**
 * Leases: work claimed by one instance at a time (a conversation's turns, the Telegram poller).
 * A row names the work; `holder` is the instance, `expires_at` when others may take it over, and
 * `token` a fencing number bumped on every claim so a holder that lost its lease can tell.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('token', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // 1 when the last claim took the lease from another holder whose lease had run out (a crash).
    .addColumn('taken_over', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('leases_holder').on('leases').columns(['holder', 'expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('leases').ifExists().execute();
}
