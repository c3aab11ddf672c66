/**
 * Scheduled jobs and their runs. A job is a row (owner, the conversation it reports to, prompt,
 * cron or one-off time, time zone, next run, state, last outcome); a run is a row keyed by
 * (job id, scheduled instant), so an occurrence can be claimed once, whatever crashes or how many
 * processes share the database.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('report_conversation_id', 'text', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('cron', 'text')
    .addColumn('run_at', 'bigint')
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('next_run_at', 'bigint')
    .addColumn('run_requested_at', 'bigint')
    .addColumn('last_run_at', 'bigint')
    .addColumn('last_outcome', 'text')
    .addColumn('last_detail', 'text')
    .addColumn('skipped_runs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_due').on('jobs').columns(['state', 'next_run_at']).execute();
  await db.schema.createIndex('jobs_requested').on('jobs').column('run_requested_at').execute();
  await db.schema.createIndex('jobs_owner').on('jobs').columns(['owner_id', 'state']).execute();

  await db.schema
    .createTable('job_runs')
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'bigint', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('late_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('missed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('detail', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addPrimaryKeyConstraint('job_runs_pk', ['job_id', 'scheduled_at'])
    .execute();
  await db.schema.createIndex('job_runs_status').on('job_runs').columns(['status', 'job_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_runs').execute();
  await db.schema.dropTable('jobs').execute();
}
