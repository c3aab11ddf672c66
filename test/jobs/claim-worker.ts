/**
 * A separate process that claims one job occurrence several times at once (two-process claim
 * test). Usage: node --import tsx claim-worker.ts DB JOB_ID DUE_MS NAME; prints outcomes.
 * DB is a SQLite file or a `postgres://` URL (then each claim runs on its own pooled connection).
 */
import { databaseTarget, isPostgresUrl } from '../../src/config.js';
import { openDatabase, openSqlite } from '../../src/store/db.js';
import { claimOccurrence, getJob } from '../../src/store/repos/jobs.js';

const [file, jobId, dueText, name] = process.argv.slice(2) as [string, string, string, string];
const db = isPostgresUrl(file) ? openDatabase(databaseTarget(file), { poolSize: 5 }) : openSqlite(file);
const job = await getJob(db, jobId);
if (!job) throw new Error(`no job ${jobId}`);
const due = Number(dueText);
// Start together with the other workers: wait for the next 200 ms boundary.
await new Promise((r) => setTimeout(r, 200 - (Date.now() % 200)));
const outcomes = await Promise.all(
  Array.from({ length: 5 }, () =>
    claimOccurrence(db, { due: { job, kind: 'schedule', at: due }, scheduledAt: due, trigger: 'schedule', nextRunAt: due + 3_600_000, lateMs: 0, missed: 0, claimedBy: name, now: Date.now(), message: 'p' }),
  ),
);
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
await db.destroy();
