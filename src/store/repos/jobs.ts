/**
 * Jobs and job runs. The claim of an occurrence is one transaction: advance the job's next run
 * (conditionally on the value the scheduler saw), insert the run row keyed by (job id, scheduled
 * instant) and queue the prompt in the job's conversation. Whoever loses the race changes nothing.
 */
import { sql } from 'kysely';
import type { Db } from '../db.js';
import type { Conversation, Job, JobRun, JobRunStatus, JobRunsTable, JobState, JobsTable } from '../schema.js';

/** The conversation of a job's runs: its id, channel and chat key. */
export const JOB_CHANNEL = 'job';

/** Conversation id of a job's runs. */
export function jobConversationId(jobId: string): string {
  return `${JOB_CHANNEL}:${jobId}`;
}

/** A new job row: the columns a caller chooses (the first run is always known). */
export type NewJob = Pick<
  JobsTable,
  'id' | 'name' | 'owner_id' | 'report_conversation_id' | 'prompt' | 'cron' | 'run_at' | 'timezone'
> & {
  next_run_at: number;
};

export async function insertJob(db: Db, job: NewJob, now = Date.now()): Promise<Job> {
  await db
    .insertInto('jobs')
    .values({
      ...job,
      state: 'active',
      run_requested_at: null,
      last_run_at: null,
      last_outcome: null,
      last_detail: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return (await getJob(db, job.id)) as Job;
}

export async function getJob(db: Db, id: string): Promise<Job | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Jobs that are not deleted, oldest first; only `owner`'s when given. */
export async function listJobs(db: Db, owner?: string): Promise<Job[]> {
  let q = db.selectFrom('jobs').selectAll().where('state', '!=', 'deleted');
  if (owner) q = q.where('owner_id', '=', owner);
  return q.orderBy('created_at').orderBy('id').execute();
}

/** Pause, resume (with its next run), finish or delete a job. */
export async function setJobState(
  db: Db,
  id: string,
  state: JobState,
  nextRunAt: number | null,
  now = Date.now(),
): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set({ state, next_run_at: nextRunAt, ...(state === 'deleted' ? { run_requested_at: null } : {}), updated_at: now })
    .where('id', '=', id)
    .where('state', '!=', 'deleted')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Ask for a run now (a manual occurrence); the scheduler claims it like a scheduled one. */
export async function requestRun(db: Db, id: string, now = Date.now()): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set({ run_requested_at: now, updated_at: now })
    .where('id', '=', id)
    .where('state', 'in', ['active', 'paused', 'finished'])
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * What a process serves: every conversation of `channels`, plus single `conversations` of
 * channels that serve only some (a terminal session serves the conversation it was opened on).
 */
export interface ServedFilter {
  channels: string[];
  conversations: string[];
}

/** Jobs that report to conversations this process serves (those it can run). */
function servedJobs(db: Db, served: ServedFilter) {
  return db
    .selectFrom('jobs')
    .innerJoin('conversations', 'conversations.id', 'jobs.report_conversation_id')
    .where((eb) => {
      // `IN ()` is not SQL, and no sentinel value is safe on both stores (PostgreSQL text refuses
      // NUL bytes), so an empty list leaves its branch out; nothing served matches nothing.
      const branches = [];
      if (served.channels.length) branches.push(eb('conversations.channel', 'in', served.channels));
      if (served.conversations.length) branches.push(eb('jobs.report_conversation_id', 'in', served.conversations));
      return branches.length ? eb.or(branches) : sql<boolean>`1 = 0`;
    });
}

/** Conversations of `channel` that jobs report to (a handful; checked one by one by the caller). */
export async function jobReportConversations(db: Db, channel: string): Promise<Conversation[]> {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('channel', '=', channel)
    .where('id', 'in', (eb) => eb.selectFrom('jobs').select('report_conversation_id').where('state', '!=', 'deleted'))
    .execute();
}

/** The earliest instant a served job is due (scheduled or requested), or null. Two index look-ups. */
export async function earliestDue(db: Db, served: ServedFilter): Promise<number | null> {
  const scheduled = await servedJobs(db, served)
    .select((eb) => eb.fn.min('jobs.next_run_at').as('t'))
    .where('jobs.state', '=', 'active')
    .where('jobs.next_run_at', 'is not', null)
    .executeTakeFirst();
  const requested = await servedJobs(db, served)
    .select((eb) => eb.fn.min('jobs.run_requested_at').as('t'))
    .where('jobs.run_requested_at', 'is not', null)
    .executeTakeFirst();
  const times = [scheduled?.t, requested?.t].filter((t): t is number => t !== null && t !== undefined).map(Number);
  return times.length ? Math.min(...times) : null;
}

/** A due occurrence as the scheduler saw it. */
export interface DueOccurrence {
  job: Job;
  /** `schedule`: `next_run_at` is due; `request`: a run-now request is. */
  kind: 'schedule' | 'request';
  /** The value seen (the claim is conditional on it). */
  at: number;
}

/** Due occurrences of served jobs, earliest first. */
export async function dueOccurrences(
  db: Db,
  served: ServedFilter,
  now: number,
  limit: number,
): Promise<DueOccurrence[]> {
  const scheduled = await servedJobs(db, served)
    .selectAll('jobs')
    .where('jobs.state', '=', 'active')
    .where('jobs.next_run_at', '<=', now)
    .orderBy('jobs.next_run_at')
    .limit(limit)
    .execute();
  const requested = await servedJobs(db, served)
    .selectAll('jobs')
    .where('jobs.run_requested_at', '<=', now)
    .where('jobs.state', '!=', 'deleted')
    .orderBy('jobs.run_requested_at')
    .limit(limit)
    .execute();
  const all: DueOccurrence[] = [
    ...requested.map((job) => ({ job, kind: 'request' as const, at: Number(job.run_requested_at) })),
    ...scheduled.map((job) => ({ job, kind: 'schedule' as const, at: Number(job.next_run_at) })),
  ];
  return all.sort((a, b) => a.at - b.at).slice(0, limit);
}

/** What a claim does, decided by the scheduler. */
export interface ClaimRequest {
  due: DueOccurrence;
  /** The run row's key instant (the occurrence, or the request time for a manual run). */
  scheduledAt: number;
  trigger: JobRunsTable['trigger'];
  /** The job's next run after this claim (scheduled claims only); null = no more. */
  nextRunAt: number | null;
  lateMs: number;
  missed: number;
  claimedBy: string;
  now: number;
  /** Prompt text queued in the job conversation (omitted for a skip). */
  message?: string;
  /** Record the occurrence as skipped with this reason instead of running it. */
  skip?: string;
}

/** Outcome of a claim. `taken`: another claim won, nothing changed. */
export type ClaimOutcome = 'claimed' | 'skipped' | 'taken';

/**
 * Claim one occurrence in one transaction. When a run of the job is still going, the occurrence
 * is recorded as skipped instead (runs of one job never overlap).
 */
export async function claimOccurrence(db: Db, req: ClaimRequest): Promise<ClaimOutcome> {
  const { due } = req;
  const job = due.job;
  return db.transaction().execute(async (trx) => {
    // Write first: the conditional update takes the write lock, so two processes queue here
    // instead of both reading the same next run.
    const advanced =
      due.kind === 'schedule'
        ? await trx
            .updateTable('jobs')
            .set({ next_run_at: req.nextRunAt, updated_at: req.now })
            .where('id', '=', job.id)
            .where('state', '=', 'active')
            .where('next_run_at', '=', due.at)
            .executeTakeFirst()
        : await trx
            .updateTable('jobs')
            .set({ run_requested_at: null, updated_at: req.now })
            .where('id', '=', job.id)
            .where('run_requested_at', '=', due.at)
            .executeTakeFirst();
    if (Number(advanced.numUpdatedRows) === 0) return 'taken';

    const busy = await trx
      .selectFrom('job_runs')
      .select('scheduled_at')
      .where('job_id', '=', job.id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    const skip = req.skip ?? (busy ? 'the previous run was still going' : undefined);
    const inserted = await trx
      .insertInto('job_runs')
      .values({
        job_id: job.id,
        scheduled_at: req.scheduledAt,
        trigger: req.trigger,
        status: skip ? 'skipped' : 'running',
        late_ms: req.lateMs,
        missed: req.missed,
        detail: skip ?? null,
        claimed_by: req.claimedBy,
        started_at: skip ? null : req.now,
        finished_at: skip ? req.now : null,
      })
      .onConflict((oc) => oc.columns(['job_id', 'scheduled_at']).doNothing())
      .executeTakeFirst();
    // The occurrence was claimed before (a request at the same millisecond as a scheduled run):
    // it ran once already, so keep the advance and start nothing.
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return 'taken';
    if (skip) {
      await trx
        .updateTable('jobs')
        .set({
          skipped_runs: sql`skipped_runs + 1`,
          last_outcome: 'skipped',
          last_detail: skip,
          last_run_at: req.scheduledAt,
        })
        .where('id', '=', job.id)
        .execute();
      return 'skipped';
    }
    const conversationId = jobConversationId(job.id);
    await trx
      .insertInto('conversations')
      .values({
        id: conversationId,
        channel: JOB_CHANNEL,
        chat_key: job.id,
        thread_key: '',
        owner_id: job.owner_id,
        model: null,
        scratchpad: null,
        archived: 0,
        created_at: req.now,
        updated_at: req.now,
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await trx
      .insertInto('inbox')
      .values({
        conversation_id: conversationId,
        author_id: job.owner_id,
        text: req.message ?? job.prompt,
        attachments: null,
        created_at: req.now,
        consumed_at: null,
      })
      .execute();
    await trx
      .updateTable('jobs')
      .set({ last_run_at: req.scheduledAt, last_outcome: 'running', last_detail: null })
      .where('id', '=', job.id)
      .execute();
    return 'claimed';
  });
}

/** The run of a job that is still going, if any. */
export async function runningRunOf(db: Db, jobId: string): Promise<JobRun | undefined> {
  return db
    .selectFrom('job_runs')
    .selectAll()
    .where('job_id', '=', jobId)
    .where('status', '=', 'running')
    .executeTakeFirst();
}

/** Every run still going (recovery). */
export async function runningRuns(db: Db): Promise<JobRun[]> {
  return db.selectFrom('job_runs').selectAll().where('status', '=', 'running').execute();
}

/** Mark a run's detail while it is still going (e.g. why it is being stopped). */
export async function setRunDetail(db: Db, jobId: string, scheduledAt: number, detail: string): Promise<void> {
  await db
    .updateTable('job_runs')
    .set({ detail })
    .where('job_id', '=', jobId)
    .where('scheduled_at', '=', scheduledAt)
    .where('status', '=', 'running')
    .execute();
}

/**
 * Finish a running run (conditional: only once) and record its outcome on the job; a one-off
 * with nothing left to run becomes `finished`. False when the run was already finished. Pass a
 * transaction to write the run's report with it.
 */
export async function finishRun(
  db: Db,
  run: Pick<JobRun, 'job_id' | 'scheduled_at'>,
  status: Exclude<JobRunStatus, 'running' | 'skipped'>,
  detail: string | null,
  now = Date.now(),
): Promise<boolean> {
  const r = await db
    .updateTable('job_runs')
    .set({ status, detail, finished_at: now })
    .where('job_id', '=', run.job_id)
    .where('scheduled_at', '=', run.scheduled_at)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) return false;
  await db
    .updateTable('jobs')
    .set({ last_outcome: status, last_detail: detail, updated_at: now })
    .where('id', '=', run.job_id)
    .execute();
  await db
    .updateTable('jobs')
    .set({ state: 'finished' })
    .where('id', '=', run.job_id)
    .where('state', '=', 'active')
    .where('next_run_at', 'is', null)
    .where('run_requested_at', 'is', null)
    .execute();
  return true;
}

/** The latest runs of a job, newest first. */
export async function recentRuns(db: Db, jobId: string, limit = 5): Promise<JobRun[]> {
  return db
    .selectFrom('job_runs')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('scheduled_at', 'desc')
    .limit(limit)
    .execute();
}

/** The final assistant text of the newest turn of a conversation, and that turn's status and error. */
export async function lastTurnOutcome(
  db: Db,
  conversationId: string,
): Promise<{ status: string; error: string | null; reply: string | null } | null> {
  const turn = await db
    .selectFrom('turns')
    .select(['id', 'status', 'error'])
    .where('conversation_id', '=', conversationId)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!turn) return null;
  const reply = await db
    .selectFrom('messages')
    .select('content')
    .where('turn_id', '=', turn.id)
    .where('role', '=', 'assistant')
    .where('content', 'is not', null)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { status: turn.status, error: turn.error, reply: reply?.content ?? null };
}

/** Pending questions of job conversations (their timeouts are armed at start-up). */
export async function pendingJobQuestions(
  db: Db,
): Promise<Array<{ id: string; conversation_id: string; created_at: number }>> {
  return db
    .selectFrom('questions')
    .select(['id', 'conversation_id', 'created_at'])
    .where('status', '=', 'pending')
    .where('conversation_id', 'like', `${JOB_CHANNEL}:%`)
    .execute();
}

/** Whether any chat of this channel and key has ever been a conversation (a known target). */
export async function isKnownChat(db: Db, channel: string, chatKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('conversations')
    .select('id')
    .where('channel', '=', channel)
    .where('chat_key', '=', chatKey)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
