/**
 * How jobs read in lists (`/jobs`, `/switchboard jobs`, `list_jobs`, `switchboard jobs list`):
 * channel-neutral Markdown lines; channels add their buttons. Here in `src/delivery/`, not in
 * `src/jobs/`, because the job list card is built here and the jobs folder sits above delivery
 * (docs/architecture.md, "Layers").
 */
import type { JobOp } from '../contract/actions.js';
import type { Job } from '../store/schema.js';

/** `2026-12-01 09:00 (Europe/Berlin)`: an instant as people in that zone read it. */
export function formatInstant(ms: number, timezone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const seconds = get('second') === '00' ? '' : `:${get('second')}`;
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}${seconds} (${timezone})`;
}

/** How a job's schedule reads in lists: `cron 0 9 * * 1-5 (Europe/Berlin)` or `once at …`. */
export function describeSchedule(job: Pick<Job, 'cron' | 'run_at' | 'timezone'>): string {
  return job.cron ? `cron ${job.cron} (${job.timezone})` : `once at ${formatInstant(job.run_at ?? 0, job.timezone)}`;
}

/** One line about a job: name, id, schedule, state, next run, last outcome, skips. */
export function jobLine(job: Job): string {
  const parts = [`**${job.name}** (\`${job.id}\`)`, describeSchedule(job)];
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
  return [job.id, job.state, next, last, JSON.stringify(job.name), describeSchedule(job)].join('  ');
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
