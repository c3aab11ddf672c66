import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, type Db } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { getJob, insertJob } from '../../src/store/repos/jobs.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { waitFor } from '../helpers/harness.js';
import { openTestDatabase, testDatabaseUrl } from '../helpers/test-db.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { spawnStart, type StartProcess } from './start-process.js';

const run = promisify(execFile);
const WORKER = path.resolve(import.meta.dirname, 'claim-worker.ts');

let dir: string;
let url: string;
let db: Db;
let llm: ScriptedLlm | null = null;
let starts: StartProcess[] = [];
let emu: TelegramEmulator | null = null;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-jobs2p-'));
  mkdirSync(path.join(dir, 'workspace'));
  url = testDatabaseUrl(dir);
  db = openTestDatabase(dir);
  await migrateToLatest(db);
});
afterEach(async () => {
  for (const p of starts) if (p.child.exitCode === null) await p.kill('SIGTERM');
  starts = [];
  await emu?.close();
  emu = null;
  await llm?.close();
  llm = null;
  await db.destroy();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function jobFor(id: string, cron: string, nextRunAt: number, chatKey: string): Promise<void> {
  const conv = await ensureConversation(db, { channel: 'console', chatKey, threadKey: '' }, 'console:local');
  await insertJob(db, {
    id,
    name: id,
    owner_id: 'console:local',
    report_conversation_id: conv.id,
    prompt: 'p',
    cron,
    run_at: null,
    timezone: 'UTC',
    next_run_at: nextRunAt,
  });
}

describe('two processes over one database', () => {
  it('concurrent claims of one occurrence from three processes: exactly one wins', async () => {
    const due = Date.now() + 3_600_000;
    await jobFor('race0001', '0 * * * *', due, 'race');
    const outputs = await Promise.all(
      ['w1', 'w2', 'w3'].map((name) =>
        run(process.execPath, ['--import', 'tsx', WORKER, url, 'race0001', String(due), name], {
          cwd: path.resolve(import.meta.dirname, '../..'),
        }),
      ),
    );
    const outcomes = outputs.flatMap((o) => JSON.parse(o.stdout) as string[]);
    expect(outcomes).toHaveLength(15);
    expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
    expect(
      await db.selectFrom('inbox').select('id').where('conversation_id', '=', 'job:race0001').execute(),
    ).toHaveLength(1);
    expect(await db.selectFrom('job_runs').select('claimed_by').execute()).toHaveLength(1);
    expect((await getJob(db, 'race0001'))?.next_run_at).toBe(due + 3_600_000);
  });

  it('two running switchboards share a seconds job: every occurrence runs at most once', {
    timeout: 90_000,
  }, async () => {
    llm = await startScriptedLlm();
    llm.setHandler(() => ({ text: 'ran' }));
    emu = await startTelegramEmulator();
    // Re-read the schedule every second, so both notice the job made here (another process).
    const config = path.join(dir, 'switchboard.toml');
    writeFileSync(config, '[jobs]\nresync_seconds = 1\n');
    // Two instances over one database, Telegram in webhook mode (no competing pollers).
    const env = {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'k',
      DATABASE_URL: url,
      SWITCHBOARD_WORKSPACE: path.join(dir, 'workspace'),
      SWITCHBOARD_CONFIG: config,
      TELEGRAM_BOT_TOKEN: emu.token,
      TELEGRAM_API_ROOT: emu.apiRoot,
      TELEGRAM_WEBHOOK_URL: 'http://127.0.0.1:9/telegram',
      TELEGRAM_WEBHOOK_SECRET: 'secret',
    };
    starts = await Promise.all([spawnStart(env), spawnStart(env)]);
    const conv = await ensureConversation(db, { channel: 'telegram', chatKey: '7070', threadKey: '' }, 'telegram:7070');
    await insertJob(db, {
      id: 'shared01',
      name: 'shared',
      owner_id: 'telegram:7070',
      report_conversation_id: conv.id,
      prompt: 'p',
      cron: '* * * * * *',
      run_at: null,
      timezone: 'UTC',
      next_run_at: Math.ceil(Date.now() / 1000) * 1000 + 1000,
    });
    await waitFor(
      async () => (await db.selectFrom('job_runs').select('status').where('status', '=', 'done').execute()).length >= 4,
      'four runs',
      40_000,
    );
    await db.updateTable('jobs').set({ state: 'deleted', next_run_at: null }).where('id', '=', 'shared01').execute();
    await waitFor(
      async () =>
        (await db.selectFrom('job_runs').select('status').where('status', '=', 'running').execute()).length === 0,
      'the last run to end',
      30_000,
    );
    const rows = await db.selectFrom('job_runs').selectAll().execute();
    const ran = rows.filter((r) => r.status !== 'skipped');
    const prompts = await db
      .selectFrom('messages')
      .select('id')
      .where('conversation_id', '=', 'job:shared01')
      .where('role', '=', 'user')
      .execute();
    expect(prompts).toHaveLength(ran.length);
    // Every run reports once (its outcome, whatever it was), whichever instance ran it.
    const reports = () =>
      emu?.messages(7070).filter((m) => m.kind === 'text' && m.plain.startsWith('🔔 ⏰ shared')) ?? [];
    await waitFor(() => reports().length >= ran.length, 'a report per run', 30_000);
    // One report per run in the ledger, whichever instance ran it.
    const rowsOfReports = await db
      .selectFrom('deliveries')
      .select('idem_key')
      .where('idem_key', 'like', 'notify:shared01:%')
      .execute();
    expect(new Set(rowsOfReports.map((r) => r.idem_key)).size).toBe(ran.length);
    expect(rowsOfReports).toHaveLength(ran.length);
    // Shown exactly once each: a row being sent is claimed by one process; the other waits.
    await waitFor(
      async () =>
        (
          await db
            .selectFrom('deliveries')
            .select('id')
            .where('status', 'in', ['pending', 'sending', 'streaming'])
            .execute()
        ).length === 0,
      'the ledger to settle',
      30_000,
    );
    // Both processes stop: after that nothing more can arrive, so the count below is final.
    expect(await Promise.all(starts.map((p) => p.kill('SIGTERM')))).toEqual([0, 0]);
    expect(reports()).toHaveLength(ran.length);
    expect(ran.filter((r) => r.status === 'done').length).toBeGreaterThanOrEqual(4);
  });
});
