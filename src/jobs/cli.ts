/**
 * `switchboard jobs list|run|pause|resume|delete ID` and `switchboard notify [--to CHAT] TEXT|-`.
 * `jobs` works on the database (the CLI acts as an admin; a running switchboard picks changes up
 * at its next schedule re-read, `jobs.resync_seconds`). `notify` hands the text to the running
 * switchboard's `POST /api/notify` on this machine, so it is delivered like any notification.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { migrateToLatest, openStore } from '../store/db.js';
import { listJobs } from '../store/repos/jobs.js';
import { applyJobAction, JOB_OPS, type JobOp } from './actions.js';
import { jobRow } from '../delivery/job-lines.js';

/** A CLI outcome: what to print and the exit code. */
export interface CliOutcome {
  code: 0 | 1 | 2;
  stdout?: string;
  stderr?: string;
}

const JOBS_USAGE =
  'usage: switchboard jobs list | switchboard jobs add (--cron EXPR | --at TIME) … PROMPT | ' +
  'switchboard jobs run|pause|resume|delete ID (see switchboard jobs --help)';

/** `switchboard jobs …`. */
export async function jobsCommand(
  config: Config,
  sub: string | undefined,
  id: string | undefined,
): Promise<CliOutcome> {
  const ops: readonly string[] = JOB_OPS;
  if (sub !== 'list' && !(sub && ops.includes(sub))) return { code: 2, stderr: JOBS_USAGE };
  if (sub !== 'list' && !id) return { code: 2, stderr: JOBS_USAGE };
  // The store the running switchboard uses, SQLite file or PostgreSQL.
  const db = openStore(config.store);
  try {
    await migrateToLatest(db);
    if (sub === 'list') {
      const jobs = await listJobs(db);
      if (jobs.length === 0) return { code: 0, stdout: 'no jobs\n' };
      return { code: 0, stdout: `${jobs.map(jobRow).join('\n')}\n` };
    }
    const r = await applyJobAction(db, id as string, sub as JobOp, 'cli', true);
    return r.ok ? { code: 0, stdout: `${r.message}\n` } : { code: 1, stderr: r.message };
  } finally {
    await db.destroy();
  }
}

/** `switchboard notify [--to CHANNEL:CHAT] [--title T] TEXT|-`. */
export async function notifyCommand(
  config: Config,
  options: { to?: string; title?: string; text: string },
): Promise<CliOutcome> {
  const text = options.text.trim();
  if (!text)
    return {
      code: 2,
      stderr: 'usage: switchboard notify [--to CHANNEL:CHAT] [--title TITLE] TEXT|-  (the text is empty)',
    };
  const token = config.http.api_token;
  if (!token)
    return {
      code: 2,
      stderr:
        'config: http.api_token (env SWITCHBOARD_API_TOKEN): required by switchboard notify, which hands the text to the running switchboard',
    };
  const url = `http://127.0.0.1:${config.http.port}/api/notify`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({ to: options.to, title: options.title, text }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    return {
      code: 1,
      stderr: `switchboard notify: cannot reach the running switchboard at ${url} (${(err as Error).message}); is \`switchboard start\` running?`,
    };
  }
  const body = (await res.json().catch(() => ({}))) as { error?: string; to?: string[] };
  if (res.status === 202) return { code: 0, stdout: `queued for ${(body.to ?? []).join(', ')}\n` };
  const reason = body.error ?? `HTTP ${res.status}`;
  return { code: res.status === 400 || res.status === 422 ? 2 : 1, stderr: `switchboard notify: ${reason}` };
}

/** Read all of stdin (for `notify -`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
