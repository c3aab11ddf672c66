/**
 * The job and notification tools: `schedule_job`, `list_jobs`, `cancel_job`, `notify`.
 *
 * None of them is offered to sub-agents (`meta.subAgent: false`): a delegated helper must never
 * schedule, cancel or send on the user's behalf.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { insertJob, listJobs } from '../store/repos/jobs.js';
import { defineTool } from '../tools/define.js';
import type { AnyTool } from '../tools/types.js';
import { formatInstant, jobLine } from '../delivery/job-lines.js';
import { machineTimeZone, parseSchedule } from './schedule.js';
import type { JobActionResult, JobOp } from './actions.js';
import type { NotifySink } from './notify-sink.js';
import type { Job } from '../store/schema.js';

/** What the job tools need of the job service (the service implements it; no import back). */
export interface JobToolHost {
  readonly sink: Pick<NotifySink, 'send'>;
  /** Re-read the schedule now (a job was added). */
  wake(): void;
  act(jobId: string, op: JobOp, by: string): Promise<JobActionResult>;
  /** Where a notification from this conversation goes (the caller's home chat, else its report chat). */
  notifyTarget(principal: string, conversationId: string): Promise<string>;
  /** The conversation a job run reports to (the conversation itself when it is not a job run). */
  reportConversationOf(conversationId: string): Promise<string>;
  /** The job whose run this conversation is, if any. */
  jobOf(conversationId: string): Promise<Job | undefined>;
}

/** Job ids: 8 characters of an unambiguous alphabet (fit in button data and conversation ids). */
const ID_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A fresh job id. */
export function newJobId(): string {
  const bytes = randomBytes(8);
  return Array.from(bytes, (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');
}

/** The four tools, bound to a job service. */
export function jobTools(service: JobToolHost): AnyTool[] {
  const scheduleJob = defineTool({
    name: 'schedule_job',
    description:
      'Schedule a prompt to run later as its own turn, with the same tools; its answer comes back to this chat. ' +
      'Give exactly one of cron (5 fields "min hour dom mon dow", or 6 with seconds first) and at (ISO 8601 time; without an offset it is read in timezone). ' +
      'Example: {"prompt":"Check the build and tell me","cron":"0 9 * * 1-5","timezone":"Europe/Berlin","name":"build check"}.',
    schema: z
      .object({
        prompt: z.string().min(1).max(8_000).describe('what to do when the job runs, written as a request to yourself'),
        cron: z.string().min(1).max(200).optional().describe('cron expression, e.g. "0 9 * * 1-5" or "*/30 * * * * *"'),
        at: z
          .string()
          .min(1)
          .max(64)
          .optional()
          .describe('one-off time, e.g. "2026-12-01T09:00" or "2026-12-01T09:00+01:00"'),
        timezone: z
          .string()
          .min(1)
          .max(64)
          .optional()
          .describe('IANA time zone, e.g. Europe/Berlin; default from config'),
        name: z.string().min(1).max(80).optional().describe('short name shown in lists and reports'),
      })
      .strict(),
    meta: { category: 'misc', defaultApproval: 'require', subAgent: false, source: 'builtin' },
    describe: (a) =>
      `schedule_job ${a.name ?? a.prompt.slice(0, 40)} ${a.cron ? `cron ${a.cron}` : `at ${a.at ?? '?'}`}`,
    preview: (a) =>
      [`prompt: ${a.prompt}`, a.cron ? `cron: ${a.cron}` : `at: ${a.at}`, a.timezone ? `timezone: ${a.timezone}` : null]
        .filter(Boolean)
        .join('\n'),
    async execute(args, ctx) {
      const now = Date.now();
      const defaultTz = ctx.config.jobs.timezone ?? machineTimeZone();
      const parsed = parseSchedule({ cron: args.cron, at: args.at, timezone: args.timezone }, defaultTz, now);
      if (!parsed.ok) return { output: `Error: ${parsed.error}. Nothing was scheduled.`, status: 'failed' };
      const report = await service.reportConversationOf(ctx.conversationId);
      const job = await insertJob(ctx.db, {
        id: newJobId(),
        name: (args.name ?? args.prompt).replace(/\s+/g, ' ').trim().slice(0, 80),
        owner_id: ctx.requester,
        report_conversation_id: report,
        prompt: args.prompt,
        cron: parsed.schedule.kind === 'cron' ? parsed.schedule.cron : null,
        run_at: parsed.schedule.kind === 'at' ? parsed.schedule.at : null,
        timezone: parsed.schedule.timezone,
        next_run_at: parsed.next,
      });
      service.wake();
      const next = formatInstant(parsed.next, job.timezone);
      return {
        output: `Scheduled job ${job.id} “${job.name}”; next run ${next}.`,
        summary: `job ${job.id}, next ${next}`,
      };
    },
  });

  const listJobsTool = defineTool({
    name: 'list_jobs',
    description: "List the user's scheduled jobs: id, name, schedule, next run, state and last outcome.",
    schema: z.object({}).strict(),
    meta: { category: 'read', defaultApproval: 'allow', subAgent: false, source: 'builtin' },
    describe: () => 'list_jobs',
    async execute(_args, ctx) {
      const jobs = await listJobs(ctx.db, ctx.requester);
      if (jobs.length === 0) return { output: 'No scheduled jobs.', summary: 'no jobs' };
      return {
        output: jobs.map((j) => `- ${jobLine(j)}`).join('\n'),
        summary: `${jobs.length} job${jobs.length === 1 ? '' : 's'}`,
      };
    },
  });

  const cancelJob = defineTool({
    name: 'cancel_job',
    description: "Delete one of the user's scheduled jobs by id (a run in progress is stopped).",
    schema: z.object({ id: z.string().min(1).max(32).describe('job id from list_jobs') }).strict(),
    meta: { category: 'misc', defaultApproval: 'require', primaryKey: 'id', subAgent: false, source: 'builtin' },
    describe: (a) => `cancel_job ${a.id}`,
    async execute(args, ctx) {
      const r = await service.act(args.id.trim(), 'delete', ctx.requester);
      return r.ok ? { output: r.message } : { output: `Error: ${r.message}`, status: 'failed' };
    },
  });

  const notify = defineTool({
    name: 'notify',
    description:
      'Send a notification to the user now: to their home chat (set with /sethome), else to this chat. Use ' +
      "it from scheduled jobs or long work to report something that can't wait for the final answer.",
    schema: z
      .object({
        text: z.string().min(1).max(8_000).describe('the message (Markdown)'),
        title: z.string().min(1).max(120).optional().describe('a short title line'),
      })
      .strict(),
    meta: { category: 'interaction', defaultApproval: 'allow', primaryKey: 'text', subAgent: false, source: 'builtin' },
    describe: (a) => `notify ${a.title ?? a.text}`,
    async execute(args, ctx) {
      const target = await service.notifyTarget(ctx.requester, ctx.conversationId);
      const job = await service.jobOf(ctx.conversationId);
      // From a job run the notification names the job, as its final report does.
      const title = job ? `⏰ ${job.name}${args.title ? ` — ${args.title}` : ''}` : args.title;
      await service.sink.send(target, {
        text: args.text,
        title,
        source: job ? `job:${job.id}` : 'tool:notify',
        key: `notify:call:${ctx.callId}`,
      });
      return { output: 'Notification sent.', summary: 'sent' };
    },
  });

  return [scheduleJob, listJobsTool, cancelJob, notify];
}
