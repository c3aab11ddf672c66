/**
 * Slack over HTTP: an event is answered 200 ("taken": Slack never sends it again) only once its
 * message is recorded. A process that cannot record it within Slack's deadline — starved of CPU,
 * or its database slow — answers 503, so Slack retries; a SIGKILL before the recording then loses
 * nothing, and the retry is taken once. The test keeps the recording from finishing by holding a
 * lock on the inbox table (PostgreSQL: a write waiting on a lock there does not block the process).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { eventCallback } from '../emulators/slack-payloads.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor } from '../helpers/harness.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';
import { skipped } from '../helpers/skips.js';
import { openTestDatabase, postgresOnly } from '../helpers/test-db.js';

const ALICE = 'UALICE';
const DM = 'D1';
/** The test starts `switchboard` twice and waits out Slack's deadline once; a start takes seconds on a loaded machine. */
const TEST_TIMEOUT_MS = 90_000;

let emu: SlackEmulator;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let db: Db;
const procs: StartedProcess[] = [];
/** Ends the test's lock on the inbox (also when the test fails while holding it). */
let releaseLock: () => void = () => undefined;

const onlyPostgres = postgresOnly('the test holds a table lock that only blocks the writer on a server');

beforeEach(async () => {
  emu = await startSlackEmulator();
  emu.app.mode = 'http';
  llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-slack-ack-'));
  env = childEnv(dir, llm.url, '', {
    SLACK_BOT_TOKEN: 'xoxb-emulator',
    SLACK_SIGNING_SECRET: emu.app.signingSecret,
    SLACK_API_URL: emu.apiUrl,
    SLACK_ALLOWED_USERS: ALICE,
  });
  db = openTestDatabase(dir, 'db');
});

afterEach(async () => {
  releaseLock();
  await killLeftRunning(procs);
  await db.destroy();
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

async function start(): Promise<StartedProcess> {
  const p = await startProcess(env, 60_000);
  procs.push(p);
  return p;
}

/** Slack's POST of `event` to the process's `/slack/events`; `retryNum` marks a retry. */
async function post(p: StartedProcess, event: Record<string, unknown>, retryNum?: number) {
  const port = Number(p.logs.find((l) => l.msg === 'switchboard started')?.port);
  return emu.deliver('events_api', event, {
    url: `http://127.0.0.1:${port}/slack/events`,
    ...(retryNum === undefined ? {} : { retryNum }),
  });
}

const message = (text: string) =>
  eventCallback(emu.userMessage({ channel: DM, user: ALICE, text, channelType: 'im' }), { botUserId: emu.botUserId });

const answers = () =>
  emu
    .botMessages(DM)
    .map((m) => m.text)
    .filter((t) => t.startsWith('Answer to'));

describe.skipIf(onlyPostgres !== undefined)(
  `slack events over HTTP: taken only once recorded${skipped(onlyPostgres)}`,
  () => {
    it(
      'a message not recorded by Slack’s deadline is answered 503; after a SIGKILL its retry is taken and answered once',
      async () => {
        let proc = await start();
        expect((await post(proc, message('q1'))).status).toBe(200);
        await waitFor(() => answers().includes(answerFor('q1')), 'the first answer', 30_000);

        // The inbox is locked: the process receives q2 but cannot store it until the lock goes.
        const released = new Promise<void>((resolve) => {
          releaseLock = resolve;
        });
        let locked: () => void = () => undefined;
        const isLocked = new Promise<void>((resolve) => {
          locked = resolve;
        });
        const holder = db.transaction().execute(async (trx) => {
          await sql`LOCK TABLE inbox IN EXCLUSIVE MODE`.execute(trx);
          locked();
          await released;
        });
        await isLocked;
        const q2 = message('q2');
        const first = await post(proc, q2);
        // "Taken" now would be a promise the process cannot keep: it dies before storing q2.
        expect(first.status).toBe(503);
        await proc.kill();
        releaseLock();
        await holder;

        // Slack sends the event again, to the restarted process.
        proc = await start();
        expect((await post(proc, q2, 1)).status).toBe(200);
        await waitFor(() => answers().includes(answerFor('q2')), 'the answer to the retried message', 30_000);
        // A second retry (Slack's own timing is not ours to know) is taken once all the same.
        expect((await post(proc, q2, 2)).status).toBe(200);
        await waitFor(async () => {
          const open = await db
            .selectFrom('deliveries')
            .select('id')
            .where('status', 'in', ['pending', 'sending', 'streaming'])
            .execute();
          return open.length === 0;
        }, 'the ledger to be empty');
        expect(answers()).toEqual([answerFor('q1'), answerFor('q2')]);
      },
      TEST_TIMEOUT_MS,
    );
  },
);
