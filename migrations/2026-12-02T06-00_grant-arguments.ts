/**
 * Grants scoped to the arguments the approval card showed: `approvals.grant_args` is what an
 * "always" or "this session" grant of that call covers (the canonical JSON of the arguments the
 * tool scopes grants to, e.g. bash's command; null for file tools, scoped by their path), and
 * `approval_rules.args_exact` holds it in the stored rule (null: any arguments).
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('grant_args', 'text').execute();
  await db.schema.alterTable('approval_rules').addColumn('args_exact', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approval_rules').dropColumn('args_exact').execute();
  await db.schema.alterTable('approvals').dropColumn('grant_args').execute();
}
