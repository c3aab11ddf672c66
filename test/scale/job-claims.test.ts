/**
 * A job occurrence runs once across instances over one PostgreSQL database: three processes claim
 * the same occurrence five times each, at once, on separate connections. (The same race over one
 * SQLite file is in test/jobs/two-processes.test.ts.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { getJob, insertJob } from '../../src/store/repos/jobs.js';
import { openTestDatabase, postgresOnly, testDatabaseUrl } from '../helpers/test-db.js';
import { skipped } from '../helpers/skips.js';

const run = promisify(execFile);
const WORKER = path.resolve(import.meta.dirname, '../jobs/claim-worker.ts');

let dir: string;
let db: Db;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-job-claims-'));
  db = openTestDatabase(dir);
  await migrateToLatest(db);
});
afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const onlyPostgres = postgresOnly('several instances in one process need a server, not one SQLite file');

describe.skipIf(onlyPostgres !== undefined)(
  `job occurrences over one PostgreSQL database${skipped(onlyPostgres)}`,
  () => {
    it('fifteen concurrent claims of one occurrence from three processes: exactly one wins', async () => {
      const due = Date.now() + 3_600_000;
      const conv = await ensureConversation(
        db,
        { channel: 'console', chatKey: 'race', threadKey: '' },
        'console:local',
      );
      await insertJob(db, {
        id: 'pgrace01',
        name: 'race',
        owner_id: 'console:local',
        report_conversation_id: conv.id,
        prompt: 'p',
        cron: '0 * * * *',
        run_at: null,
        timezone: 'UTC',
        next_run_at: due,
      });
      const url = testDatabaseUrl(dir);
      const outputs = await Promise.all(
        ['w1', 'w2', 'w3'].map((name) =>
          run(process.execPath, ['--import', 'tsx', WORKER, url, 'pgrace01', String(due), name], {
            cwd: path.resolve(import.meta.dirname, '../..'),
          }),
        ),
      );
      const outcomes = outputs.flatMap((o) => JSON.parse(o.stdout) as string[]);
      expect(outcomes).toHaveLength(15);
      expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'taken')).toHaveLength(14);
      expect(
        await db.selectFrom('inbox').select('id').where('conversation_id', '=', 'job:pgrace01').execute(),
      ).toHaveLength(1);
      expect(await db.selectFrom('job_runs').select('claimed_by').execute()).toHaveLength(1);
      expect((await getJob(db, 'pgrace01'))?.next_run_at).toBe(due + 3_600_000);
    }, 60_000);
  },
);
