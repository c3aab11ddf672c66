/**
 * Cards as neutral data: the text and the buttons of what a person acts on, drawn by each
 * channel's formatter (Telegram inline keyboards, Slack Block Kit, the web chat's buttons).
 */
import type { Button } from '../contract/actions.js';
import { OP_LABEL, opsFor } from '../jobs/present.js';
import type { Job } from '../store/schema.js';
import { jobsMarkdown, listedJobs } from './notices.js';

/** The `/jobs` list: its Markdown, and one row of buttons per listed job (pause or resume, run now, delete). */
export function jobListCard(jobs: Job[]): { markdown: string; buttons: Button[][] } {
  const buttons = listedJobs(jobs).map((job) =>
    opsFor(job).map(
      (op): Button => ({ label: `${OP_LABEL[op]} ${job.name.slice(0, 16)}`, action: { kind: 'job', id: job.id, op }, ...(op === 'delete' ? { style: 'danger' as const } : {}) }),
    ),
  );
  return { markdown: jobsMarkdown(jobs), buttons };
}
