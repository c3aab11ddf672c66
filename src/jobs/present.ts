/**
 * How jobs read in lists (`/jobs`, `/switchboard jobs`, `list_jobs`, `switchboard jobs list`):
 * channel-neutral Markdown lines; channels add their buttons.
 */
import type { Job } from '../store/schema.js';
import type { JobOp } from './actions.js';
import { describeSchedule, formatInstant, scheduleOf } from './schedule.js';

/** One line about a job: name, id, schedule, state, next run, last outcome, skips. */
export function jobLine(job: Job): string {
  const parts = [`**${job.name}** (\`${job.id}\`)`, describeSchedule(scheduleOf(job))];
  if (job.state !== 'active') parts.push(job.state);
  parts.push(job.next_run_at !== null ? `next ${formatInstant(job.next_run_at, job.timezone)}` : 'no next run');
  if (job.last_outcome)
    parts.push(`last: ${job.last_outcome}${job.last_detail ? ` (${clip(job.last_detail, 80)})` : ''}`);
  if (job.skipped_runs > 0) parts.push(`${job.skipped_runs} skipped`);
  return parts.join(' · ');
}

/** A plain line for the terminal: `ID  state  next  last  name  schedule`. */
export function jobRow(job: Job): string {
  const next = job.next_run_at !== null ? new Date(job.next_run_at).toISOString() : '-';
  const last = job.last_outcome
    ? `${job.last_outcome}${job.skipped_runs ? `(+${job.skipped_runs} skipped)` : ''}`
    : '-';
  return [job.id, job.state, next, last, JSON.stringify(job.name), describeSchedule(scheduleOf(job))].join('  ');
}

/** The buttons a job offers in its state. */
export function opsFor(job: Job): JobOp[] {
  return [job.state === 'active' ? 'pause' : job.state === 'paused' ? 'resume' : null, 'run', 'delete'].filter(
    (o): o is JobOp => o !== null,
  );
}

/** Button captions. */
export const OP_LABEL: Record<JobOp, string> = {
  pause: '⏸ Pause',
  resume: '▶️ Resume',
  run: '⚡ Run now',
  delete: '🗑 Delete',
};

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}
