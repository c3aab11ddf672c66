/**
 * A separate process that claims one job occurrence several times at once (two-process claim
 * test). Usage: node --import tsx claim-worker.ts DATABASE_URL JOB_ID DUE_MS NAME; prints outcomes.
 */
import { databaseTarget } from '../../src/config.js';
import { openDatabase } from '../../src/store/db.js';
import { claimOccurrence, getJob } from '../../src/store/repos/jobs.js';

const [url, jobId, dueText, name] = process.argv.slice(2) as [string, string, string, string];
const db = openDatabase(databaseTarget(url), { poolSize: 5 });
const job = await getJob(db, jobId);
if (!job) throw new Error(`no job ${jobId}`);
const due = Number(dueText);
// Start together with the other workers: wait for the next 200 ms boundary.
await new Promise((r) => setTimeout(r, 200 - (Date.now() % 200)));
const outcomes = await Promise.all(
  Array.from({ length: 5 }, () =>
    claimOccurrence(db, {
      due: { job, kind: 'schedule', at: due },
      scheduledAt: due,
      trigger: 'schedule',
      nextRunAt: due + 3_600_000,
      lateMs: 0,
      missed: 0,
      claimedBy: name,
      now: Date.now(),
      message: 'p',
    }),
  ),
);
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
await db.destroy();
