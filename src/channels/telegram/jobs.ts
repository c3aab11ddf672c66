/**
 * `/jobs` in Telegram: the list as HTML with one row of buttons per job (pause or resume, run
 * now, delete). The list itself and the rules for acting come from the core's job controls.
 */
import { InlineKeyboard } from 'grammy';
import type { JobControls } from '../../contract/core.js';
import { OP_LABEL, jobLine, opsFor } from '../../jobs/present.js';
import type { Job } from '../../store/schema.js';
import { encodeCallback } from './callback-data.js';
import { markdownToHtml } from './markdown.js';

/** Jobs shown in one message (Telegram caps a keyboard at 100 buttons). */
const MAX_LISTED = 20;

/** The list message and its buttons. */
export function jobsMessage(jobs: Job[]): { html: string; keyboard: InlineKeyboard | undefined } {
  if (jobs.length === 0) return { html: 'No scheduled jobs. Ask me to schedule one, e.g. “every weekday at 9 check the build”.', keyboard: undefined };
  const shown = jobs.slice(0, MAX_LISTED);
  const more = jobs.length > shown.length ? `\n\n…and ${jobs.length - shown.length} more (see \`switchboard jobs list\`).` : '';
  const html = markdownToHtml(`**Scheduled jobs**\n\n${shown.map((j) => `- ${jobLine(j)}`).join('\n')}${more}`);
  const keyboard = new InlineKeyboard();
  shown.forEach((job, i) => {
    if (i > 0) keyboard.row();
    for (const op of opsFor(job)) keyboard.text(`${OP_LABEL[op]} ${job.name.slice(0, 16)}`, encodeCallback({ kind: 'job', id: job.id, op }));
  });
  return { html, keyboard };
}

/** The message for `by`, or an explanation when jobs are not available. */
export async function jobsMessageFor(jobs: JobControls | undefined, by: string): Promise<{ html: string; keyboard: InlineKeyboard | undefined }> {
  if (!jobs) return { html: 'Scheduled jobs are not available here.', keyboard: undefined };
  return jobsMessage(await jobs.list(by));
}
