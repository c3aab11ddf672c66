/**
 * What a run says: the message it starts with (which job, which occurrence, how late) and the
 * report of its outcome (titled with the job's name).
 */
import type { Job, JobRun } from '../store/schema.js';
import type { Notification } from './notify-sink.js';
import { lateNote, type Plan } from './plan.js';
import { formatInstant } from '../delivery/job-lines.js';

/** The message a run starts with: what job this is, when it was due, how late, then the prompt. */
export function runMessage(job: Job, plan: Plan): string {
  const when = formatInstant(plan.scheduledAt, job.timezone);
  const head =
    plan.trigger === 'manual'
      ? `[Scheduled job “${job.name}” (${job.id}), run now on request]`
      : `[Scheduled job “${job.name}” (${job.id}), run for ${when}]`;
  const late = lateNote({ trigger: plan.trigger, late_ms: plan.lateMs, missed: plan.missed });
  return [head, late ? `[${late}]` : null, '', job.prompt].filter((l) => l !== null).join('\n');
}

/** The report of a finished run: titled with the job's name, saying how late it was. */
export function reportOf(
  job: Job,
  run: JobRun,
  status: string,
  detail: string | null,
  reply: string | null,
): Notification {
  const late = lateNote(run);
  const body =
    status === 'done'
      ? reply?.trim() || '(the run finished without a reply)'
      : status === 'timed_out'
        ? `⌛ ${detail}.`
        : status === 'cancelled'
          ? '⏹ The run was stopped.'
          : `❌ The run failed: ${detail}`;
  return {
    title: `⏰ ${job.name}`,
    text: late ? `_${late}_\n\n${body}` : body,
    source: `job:${job.id}`,
    key: `notify:${job.id}:${run.scheduled_at}`,
  };
}
