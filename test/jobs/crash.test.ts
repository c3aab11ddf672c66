import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, type Db } from '../../src/store/db.js';
import { openTestDatabase, testDatabaseUrl } from '../helpers/test-db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { insertJob } from '../../src/store/repos/jobs.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { budget, CHILD_START_MS, times, WAIT_MS } from '../helpers/budgets.js';
import { waitFor } from '../helpers/harness.js';
import { isJobRun } from './helpers.js';
import { spawnStart, type StartProcess } from './start-process.js';

const alice = { id: 5151, first_name: 'Alice' };

let emu: TelegramEmulator;
let llm: ScriptedLlm;
let dir: string;
let db: Db;
let proc: StartProcess | null = null;
beforeEach(async () => {
  emu = await startTelegramEmulator();
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-jobcrash-'));
  mkdirSync(path.join(dir, 'workspace'));
  db = openTestDatabase(dir);
  await migrateToLatest(db);
});
afterEach(async () => {
  if (proc && proc.child.exitCode === null) await proc.kill();
  proc = null;
  await db.destroy();
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function env(): Record<string, string> {
  return {
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'test',
    DATABASE_URL: testDatabaseUrl(dir),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'workspace'),
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(alice.id),
  };
}

/** A one-off job reporting to Alice's DM, due now. */
async function dueJob(id: string): Promise<void> {
  const conv = await ensureConversation(
    db,
    { channel: 'telegram', chatKey: String(alice.id), threadKey: '' },
    `telegram:${alice.id}`,
  );
  await insertJob(db, {
    id,
    name: 'nightly check',
    owner_id: `telegram:${alice.id}`,
    report_conversation_id: conv.id,
    prompt: 'check things',
    cron: null,
    run_at: Date.now(),
    timezone: 'UTC',
    next_run_at: Date.now(),
  });
}

/** Deliveries not yet settled: anything the ledger could still send. */
const openDeliveries = async () =>
  (await db.selectFrom('deliveries').select('id').where('status', 'in', ['pending', 'sending', 'streaming']).execute())
    .length;

const reports = () =>
  emu.messages(alice.id).filter((m) => m.kind === 'text' && m.plain.startsWith('🔔 ⏰ nightly check'));

/**
 * Each test's timeout is the sum of its waits: two child starts (to the "switchboard started"
 * line), the start-up work each start is followed by (the scheduler's first pass reaching the
 * model; the recovery that sends the report), and the steps after that.
 */
const TEST_BUDGET = budget(...times(4, CHILD_START_MS), ...times(2, WAIT_MS));

describe('job runs across SIGKILL (child processes)', () => {
  it('a run in flight at SIGKILL resumes after restart: the occurrence runs once, the report arrives once', {
    timeout: TEST_BUDGET,
  }, async () => {
    await dueJob('crash001');
    let hang = true;
    llm.setHandler((body) => (isJobRun(body) && hang ? { hang: true, text: 'work' } : { text: 'all checks passed' }));
    proc = await spawnStart(env());
    // The scheduler's first pass comes after the "started" line, with the rest of the start-up
    // work: under load it is a start-up's wait, not a step's (it timed out at a step's 10 s).
    await waitFor(() => llm.chatRequests().length > 0, 'the run reached the model', CHILD_START_MS);
    const running = await db.selectFrom('job_runs').selectAll().execute();
    expect(running).toMatchObject([{ job_id: 'crash001', status: 'running' }]);
    await proc.kill('SIGKILL');

    hang = false;
    proc = await spawnStart(env());
    // Resuming the stranded run (or re-sending its report) is the restarted process's start-up work.
    await waitFor(() => reports().length, 'the report after restart', CHILD_START_MS);
    // No duplicate can come: the ledger has nothing left to send and the process has stopped.
    await waitFor(async () => (await openDeliveries()) === 0, 'nothing left to send');
    expect(await proc.kill('SIGTERM')).toBe(0);
    expect(reports().map((m) => m.plain)).toEqual(['🔔 ⏰ nightly check\n\nall checks passed']);
    expect(await db.selectFrom('job_runs').select(['status', 'trigger']).execute()).toEqual([
      { status: 'done', trigger: 'schedule' },
    ]);
    // The occurrence was claimed once: one prompt in the job's conversation, one turn.
    const prompts = await db
      .selectFrom('messages')
      .select('content')
      .where('conversation_id', '=', 'job:crash001')
      .where('role', '=', 'user')
      .execute();
    expect(prompts).toHaveLength(1);
    expect(
      await db.selectFrom('turns').select('status').where('conversation_id', '=', 'job:crash001').execute(),
    ).toEqual([{ status: 'done' }]);
    expect(await db.selectFrom('jobs').select(['state', 'last_outcome']).executeTakeFirst()).toEqual({
      state: 'finished',
      last_outcome: 'done',
    });
  });
});
describe('a job report across SIGKILL (child processes)', () => {
  it('killed while the report is being sent: after restart it arrives exactly once', {
    timeout: TEST_BUDGET,
  }, async () => {
    await dueJob('crash002');
    llm.setHandler(() => ({ text: 'disk usage is fine' }));
    // The report is Markdown: it goes as a rich message (the default).
    const held = emu.hold('sendRichMessage', {
      match: (p) => String(p.rich_message?.markdown ?? '').includes('nightly check'),
      phase: 'before',
    });
    proc = await spawnStart(env());
    await held.arrived;
    // The run is recorded as done and its report is in the ledger, not yet on Telegram.
    expect(await db.selectFrom('job_runs').select('status').execute()).toEqual([{ status: 'done' }]);
    expect(
      await db
        .selectFrom('deliveries')
        .select(['kind', 'status'])
        .where('idem_key', 'like', 'notify:crash002:%')
        .execute(),
    ).toEqual([{ kind: 'notification', status: 'sending' }]);
    // Not released: the held request ends with the killed process's connection, so Telegram never
    // had the message (releasing it could race the emulator noticing that the connection closed).
    await proc.kill('SIGKILL');

    proc = await spawnStart(env());
    // Resuming the stranded run (or re-sending its report) is the restarted process's start-up work.
    await waitFor(() => reports().length, 'the report after restart', CHILD_START_MS);
    // No duplicate can come: the ledger has nothing left to send and the process has stopped.
    await waitFor(async () => (await openDeliveries()) === 0, 'nothing left to send');
    expect(await proc.kill('SIGTERM')).toBe(0);
    expect(reports().map((m) => m.plain)).toEqual(['🔔 ⏰ nightly check\n\ndisk usage is fine']);
    expect(llm.chatRequests()).toHaveLength(1);
    expect(
      await db.selectFrom('deliveries').select('status').where('idem_key', 'like', 'notify:crash002:%').execute(),
    ).toEqual([{ status: 'delivered' }]);
  });
});
