/** Shared pieces of the job tests: routing the scripted model by conversation, finding rows. */
import type { ScriptedLlm, ScriptedStep } from '../emulators/llm.js';
import { randomBytes } from 'node:crypto';
import { insertJob } from '../../src/store/repos/jobs.js';
import { type Harness, waitFor } from '../helpers/harness.js';
import { JobService } from '../../src/jobs/service.js';
import type { Core } from '../../src/core/core.js';

/** The text of the newest user message of a chat completion request. */
export function lastUser(body: any): string {
  const users = (body?.messages ?? []).filter((m: any) => m.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

/** True when the request comes from a job run (its prompt starts with the job header). */
export function isJobRun(body: any): boolean {
  return (body?.messages ?? []).some(
    (m: any) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('[Scheduled job'),
  );
}

/** True when the newest message is a tool result (the model is asked to go on after tools). */
export function afterTool(body: any): boolean {
  return body?.messages?.at(-1)?.role === 'tool';
}

/** Answer job runs with `job(body)` and everything else with `chat(body)`. */
export function route(llm: ScriptedLlm, chat: (body: any) => ScriptedStep, job: (body: any) => ScriptedStep): void {
  llm.setHandler((body) => (isJobRun(body) ? job(body) : chat(body)));
}

/**
 * Script the model to schedule a one-off job named `later`, an hour from now, when asked in the
 * chat (it then says `Scheduled.`), and to answer `ran` when the job runs.
 */
export function schedulesLaterInAnHour(llm: ScriptedLlm): void {
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const schedule = { name: 'schedule_job', arguments: JSON.stringify({ prompt: 'later', at, name: 'later' }) };
  route(
    llm,
    (body) => (afterTool(body) ? { text: 'Scheduled.' } : { toolCalls: [schedule] }),
    () => ({ text: 'ran' }),
  );
}

/** The job service of a harness's current core. */
export function jobsOf(core: Core): JobService {
  const s = JobService.of(core);
  if (!s) throw new Error('no job service');
  return s;
}

/** Rows of a harness's database. */
export async function jobRows(h: Harness) {
  return h.core.db.selectFrom('jobs').selectAll().execute();
}

export async function runRows(h: Harness, jobId?: string) {
  let q = h.core.db.selectFrom('job_runs').selectAll();
  if (jobId) q = q.where('job_id', '=', jobId);
  return q.orderBy('scheduled_at').execute();
}

/**
 * Resolves once the scheduler has claimed a one-off marker job due at `at`, reporting where job
 * `jobId` reports. Due jobs are claimed earliest first, so by then it has claimed every active job
 * due before `at`: a test that a paused or cancelled job runs no more waits on this, not on a
 * fixed time that a slow machine may not give the scheduler.
 */
export async function schedulerPassed(h: Harness, jobId: string, at: number): Promise<void> {
  const job = (await jobRows(h)).find((j) => j.id === jobId);
  if (!job) throw new Error(`no job ${jobId}`);
  const id = `mark${randomBytes(2).toString('hex')}`;
  await insertJob(h.core.db, {
    id,
    name: 'marker',
    owner_id: job.owner_id,
    report_conversation_id: job.report_conversation_id,
    prompt: 'marker',
    cron: null,
    run_at: at,
    timezone: 'UTC',
    next_run_at: at,
  });
  jobsOf(h.core).wake();
  await waitFor(async () => (await runRows(h, id)).length > 0, 'the marker job claimed', 15_000);
}
