/**
 * Pause, resume, run now and delete: the same rules for `/jobs` buttons, the CLI and tools.
 * Only the owner and admins act on a job. Each action is one conditional update, so a second
 * tap or a second process cannot apply it twice.
 */
import type { Db } from '../store/db.js';
import { getJob, requestRun, setJobState } from '../store/repos/jobs.js';
import type { Job } from '../store/schema.js';
import { formatInstant } from '../delivery/job-lines.js';
import { nextOccurrence, scheduleOf } from './schedule.js';

import type { JobOp } from '../contract/core.js';

export type { JobOp };

/** Every op, in button order. */
export const JOB_OPS: readonly JobOp[] = ['pause', 'resume', 'run', 'delete'];

/** The outcome, with a sentence for the person who asked. */
export type JobActionResult = { ok: true; job: Job; message: string } | { ok: false; message: string };

/**
 * Apply `op` to job `id` on behalf of `by` (`channel:userId`, or `cli`).
 * @param isAdmin whether `by` may act on anyone's job.
 */
export async function applyJobAction(
  db: Db,
  id: string,
  op: JobOp,
  by: string,
  isAdmin: boolean,
  now = Date.now(),
): Promise<JobActionResult> {
  const job = await getJob(db, id);
  if (!job || job.state === 'deleted') return { ok: false, message: `No job ${id}.` };
  if (job.owner_id !== by && !isAdmin)
    return { ok: false, message: `Only the owner of job ${id} or an admin can change it.` };
  const name = `“${job.name}” (${job.id})`;
  switch (op) {
    case 'pause':
      if (job.state !== 'active') return { ok: false, message: `Job ${name} is ${job.state}, not active.` };
      await setJobState(db, id, 'paused', null, now);
      return { ok: true, job, message: `Paused job ${name}.` };
    case 'resume': {
      if (job.state !== 'paused') return { ok: false, message: `Job ${name} is ${job.state}, not paused.` };
      const next = nextOccurrence(scheduleOf(job), now);
      await setJobState(db, id, next === null ? 'finished' : 'active', next, now);
      return {
        ok: true,
        job,
        message:
          next === null
            ? `Job ${name} has no run left (its time has passed).`
            : `Resumed job ${name}; next run ${formatInstant(next, job.timezone)}.`,
      };
    }
    case 'run':
      if (!(await requestRun(db, id, now))) return { ok: false, message: `Job ${name} cannot run now.` };
      return { ok: true, job, message: `Job ${name} will run now.` };
    case 'delete':
      await setJobState(db, id, 'deleted', null, now);
      return { ok: true, job, message: `Deleted job ${name}.` };
  }
}
