/**
 * An approval is bound to the exact arguments its card showed, and a grant keeps the reach it was
 * recorded with: `approvals.args_sha256` is the sha256 of the call's canonical arguments (null on
 * older rows: their decision is asked again), and `grant_version` on approvals and rules says
 * which arguments `grant_args` / `args_exact` hold (1: rows from before, when a bash grant was the
 * command alone; 2: the command, its workdir and foreground or background).
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('args_sha256', 'text').execute();
  await db.schema
    .alterTable('approvals')
    .addColumn('grant_version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('approval_rules')
    .addColumn('grant_version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approval_rules').dropColumn('grant_version').execute();
  await db.schema.alterTable('approvals').dropColumn('grant_version').execute();
  await db.schema.alterTable('approvals').dropColumn('args_sha256').execute();
}
