/**
 * `/switchboard jobs` in Slack: one section per job with its buttons (pause or resume, run now,
 * delete; action ids `sb_job_<op>`, value = job id). Decisions belong to the core's job controls.
 */
import type { JobControls, JobOp } from '../../contract/core.js';
import { OP_LABEL, jobLine, opsFor } from '../../jobs/present.js';
import type { Block, CardMessage } from './blocks.js';
import { markdownToMrkdwn } from './mrkdwn.js';

/** Action id prefix of job buttons. */
export const JOB_ACTION_PREFIX = 'sb_job_';

/** Jobs shown in one message (Slack allows 50 blocks). */
const MAX_LISTED = 20;

/** The op of a job button's action id, or null. */
export function jobOpOf(actionId: string): JobOp | null {
  const op = actionId.slice(JOB_ACTION_PREFIX.length);
  return actionId.startsWith(JOB_ACTION_PREFIX) && ['pause', 'resume', 'run', 'delete'].includes(op) ? (op as JobOp) : null;
}

/** The list as blocks with buttons. */
export async function jobsMessage(jobs: JobControls | undefined, by: string): Promise<CardMessage> {
  if (!jobs) return { text: 'Scheduled jobs are not available here.', blocks: [] };
  const list = await jobs.list(by);
  if (list.length === 0) return { text: 'No scheduled jobs. Ask me to schedule one, e.g. “every weekday at 9 check the build”.', blocks: [] };
  const blocks: Block[] = [{ type: 'section', text: { type: 'mrkdwn', text: '*Scheduled jobs*' } }];
  for (const job of list.slice(0, MAX_LISTED)) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: markdownToMrkdwn(jobLine(job)).slice(0, 2900) } });
    blocks.push({
      type: 'actions',
      block_id: `job_${job.id}`,
      elements: opsFor(job).map((op) => ({
        type: 'button',
        action_id: `${JOB_ACTION_PREFIX}${op}`,
        text: { type: 'plain_text', text: OP_LABEL[op], emoji: true },
        value: job.id,
        ...(op === 'delete' ? { style: 'danger' } : {}),
      })),
    });
  }
  if (list.length > MAX_LISTED) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `…and ${list.length - MAX_LISTED} more (\`switchboard jobs list\`).` }] });
  return { text: `Scheduled jobs: ${list.length}`, blocks };
}
