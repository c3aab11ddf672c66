/**
 * Failover of the elected Telegram poller at awkward moments, with `switchboard start` processes
 * over one database (two processes over one SQLite file, or PostgreSQL) and one bot token:
 * - the poller is stopped (SIGSTOP, as a starved process) past its lease while an update is on its
 *   way to it: the standby takes over, and the stalled one, once it runs again, stands down; a
 *   getUpdates it had on its way ends the successor's long poll with 409, and the successor polls
 *   on; SIGKILLed, the successor is replaced by the first poller;
 * - the poller is SIGKILLed while Telegram's answer to its getUpdates is on the way, and the
 *   restarted process polls and answers the message;
 * - the poller is SIGKILLed while its reply is on the way to Telegram, and the standby polls.
 * Bounds are generous (15 s for a takeover); how fast it is, `bench/failover.ts` measures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api } from 'grammy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor } from '../helpers/harness.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';
import { openTestDatabase } from '../helpers/test-db.js';

/** A takeover's bound: the 4 s lease (ELECTION_LEASE_MS) plus slack for a loaded machine. */
const TAKEOVER_MS = 15_000;

const alice = { id: 111, first_name: 'Alice' };
let emu: TelegramEmulator;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
const procs: StartedProcess[] = [];
/** Processes stopped with SIGSTOP, continued in teardown so that they can die. */
const stopped = new Set<number>();

beforeEach(async () => {
  emu = await startTelegramEmulator();
  llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-failover-'));
  env = childEnv(dir, llm.url, '[telegram]\nstream_interval_ms = 100\n', {
    // Answers as HTML (sendMessage, which this test watches); rich answers across kills: kill-telegram.test.ts.
    SWITCHBOARD__TELEGRAM__RICH_MESSAGES: 'off',
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(alice.id),
  });
});

afterEach(async () => {
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {}
  }
  stopped.clear();
  await killLeftRunning(procs);
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function start(): Promise<StartedProcess> {
  const p = await startProcess(env, 30_000);
  procs.push(p);
  return p;
}

/** How many times `p` began polling. */
const pollStarts = (p: StartedProcess) => p.logs.filter((l) => l.msg === 'telegram: this instance polls').length;
const lostLease = (p: StartedProcess) =>
  p.logs.some((l) => l.msg === 'election: another instance took the work over; stopping it here');
const answers = () =>
  emu
    .messages(alice.id)
    .filter((m) => m.kind === 'text' && m.plain.startsWith('Answer to'))
    .map((m) => m.plain);

async function ask(text: string): Promise<void> {
  emu.sendText(alice, text);
  await waitFor(() => answers().includes(answerFor(text)), `the answer to ${text}`, 30_000);
}

/** Deliveries not yet recorded as sent: a kill before they are would send them again (at-least-once). */
async function openRows(): Promise<number> {
  const db = openTestDatabase(dir, 'db');
  try {
    const rows = await db
      .selectFrom('deliveries')
      .select('id')
      .where('status', 'in', ['pending', 'sending', 'streaming'])
      .execute();
    return rows.length;
  } finally {
    await db.destroy();
  }
}
const settled = () => waitFor(async () => (await openRows()) === 0, 'the ledger to settle', 30_000);

/** The two processes, the one that polls first. */
async function pollerAndStandby(): Promise<[StartedProcess, StartedProcess]> {
  const a = await start();
  const b = await start();
  await waitFor(() => pollStarts(a) + pollStarts(b) > 0, 'a poller', TAKEOVER_MS);
  return pollStarts(a) > 0 ? [a, b] : [b, a];
}

describe('telegram poller failover', () => {
  // The stall has to outlast the poller's 4 s lease; two takeovers and four answers follow.
  it('a poller stalled past its lease does not silence its successor, and replaces it once that one is SIGKILLed', async () => {
    const [first, second] = await pollerAndStandby();
    await ask('q1');
    await settled();

    const pid = first.child.pid as number;
    process.kill(pid, 'SIGSTOP');
    stopped.add(pid);
    // Telegram answers the stalled poller's long poll with this update; it reads the answer only
    // once it runs again, and then, left to itself, would poll at once.
    emu.sendText(alice, 'q2');
    await waitFor(() => pollStarts(second) > 0, 'the standby to take over', TAKEOVER_MS);
    process.kill(pid, 'SIGCONT');
    stopped.delete(pid);
    await waitFor(() => lostLease(first), 'the stalled poller to find its lease taken', TAKEOVER_MS);
    await waitFor(() => answers().includes(answerFor('q2')), 'the answer to q2', 30_000);
    // A getUpdates the stalled poller had on its way when it stopped may still reach Telegram
    // after the successor began: Telegram then ends the successor's long poll with 409.
    const conflicts = emu.getUpdatesConflicts;
    const stale = new Api(emu.token, { apiRoot: emu.apiRoot });
    await waitFor(
      async () => (await stale.getUpdates({ offset: -1, limit: 1, timeout: 0 })) && emu.getUpdatesConflicts > conflicts,
      "a stale getUpdates to end the successor's long poll",
    );
    // The successor polls on: a message sent now is answered.
    await ask('q3');
    expect(pollStarts(first)).toBe(1);
    await settled();

    await second.kill();
    await waitFor(() => pollStarts(first) > 1, 'the first poller to poll again', TAKEOVER_MS);
    await ask('q4');
    await settled();
    expect(await first.stop()).toBe(0);
    expect(answers()).toEqual(['q1', 'q2', 'q3', 'q4'].map(answerFor));
  }, 60_000);

  // Two process starts and a takeover (up to TAKEOVER_MS on a loaded machine) besides the answers.
  it('the restarted poller takes over after a SIGKILL while the answer to its getUpdates was on the way', async () => {
    const first = await start();
    await waitFor(() => pollStarts(first) > 0, 'the poller', TAKEOVER_MS);
    await ask('q1');
    await settled();

    // Telegram has taken the update from the queue for the poller; the poller never reads it. The
    // long poll in flight now is not held: an update not addressed to the bot ends it first.
    const held = emu.hold('getUpdates', { phase: 'after' });
    const polled = emu.calls.filter((c) => c.method === 'getUpdates').length;
    emu.sendText({ id: 222 }, 'chatter', { chatId: -100 });
    await waitFor(
      () => emu.calls.filter((c) => c.method === 'getUpdates').length > polled,
      'the poll in flight to end',
    );
    emu.sendText(alice, 'q2');
    await held.arrived;
    await first.kill();
    const restarted = await start();
    await waitFor(() => pollStarts(restarted) > 0, 'the restarted process to poll', TAKEOVER_MS);
    await waitFor(() => answers().includes(answerFor('q2')), 'the answer to q2', 30_000);
    await settled();
    expect(await restarted.stop()).toBe(0);
    expect(answers()).toEqual(['q1', 'q2'].map(answerFor));
  }, 40_000);

  // Two process starts and a takeover (up to TAKEOVER_MS on a loaded machine) besides the answers.
  it('the standby takes over after the poller is SIGKILLed while its reply was on the way to Telegram', async () => {
    const [poller, standby] = await pollerAndStandby();
    await ask('q1');
    await settled();

    const sending = emu.hold('sendMessage');
    emu.sendText(alice, 'q2');
    await sending.arrived;
    await poller.kill();
    await waitFor(() => pollStarts(standby) > 0, 'the standby to poll', TAKEOVER_MS);
    // The turn the killed poller was answering is taken over from the database too.
    await waitFor(() => answers().includes(answerFor('q2')), 'the answer to q2', 30_000);
    await ask('q3');
    await settled();
    expect(await standby.stop()).toBe(0);
    expect(answers()).toEqual(['q1', 'q2', 'q3'].map(answerFor));
  }, 40_000);
});
