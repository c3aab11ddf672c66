/**
 * The elected Telegram poller: two `switchboard start` processes over one database and one bot
 * token; exactly one runs the getUpdates loop. SIGKILL it: the other polls within 10 s, no live
 * poller's getUpdates is ever ended by another's (Telegram's 409), and messages are answered once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor } from '../helpers/harness.js';
import { ELECTION_RETRY_MS } from '../../src/core/election.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';
import { openTestDatabase } from '../helpers/test-db.js';

const alice = { id: 111, first_name: 'Alice' };
let emu: TelegramEmulator;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
const procs: StartedProcess[] = [];

beforeEach(async () => {
  emu = await startTelegramEmulator();
  llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-poller-'));
  env = childEnv(dir, llm.url, '[telegram]\nstream_interval_ms = 100\n', {
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(alice.id),
  });
});

afterEach(async () => {
  await killLeftRunning(procs);
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

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

const polls = (p: StartedProcess) => p.logs.some((l) => l.msg === 'telegram: this instance polls');
const answers = () =>
  emu
    .messages(alice.id)
    .filter((m) => m.kind === 'text' && m.plain.startsWith('Answer to'))
    .map((m) => m.plain);

describe('telegram polling across instances', () => {
  it('one poller; SIGKILLed, another polls within 10 s; never two getUpdates loops; answers once', async () => {
    const a = await startProcess(env, 30_000);
    procs.push(a);
    const b = await startProcess(env, 30_000);
    procs.push(b);
    await waitFor(() => polls(a) || polls(b), 'a poller', 15_000);
    // Both stand past the standby's next try for the poller lease: still exactly one poller.
    await new Promise((r) => setTimeout(r, ELECTION_RETRY_MS + 500));
    expect([polls(a), polls(b)].filter(Boolean)).toHaveLength(1);
    const [poller, standby] = polls(a) ? [a, b] : [b, a];

    emu.sendText(alice, 'q1');
    await waitFor(() => answers().includes(answerFor('q1')), 'the first answer', 30_000);

    // Let the ledger record the delivery first: a kill between Telegram accepting a message and the
    // ledger recording it resends it (at-least-once; the delivery kill tests cover that window).
    await waitFor(async () => (await openRows()) === 0, 'the ledger to settle', 30_000);
    expect(emu.getUpdatesConflicts).toBe(0);
    await poller.kill();
    const killedAt = Date.now();
    await waitFor(() => polls(standby), 'the standby to poll', 15_000);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    emu.sendText(alice, 'q2');
    await waitFor(() => answers().includes(answerFor('q2')), 'the answer through the new poller', 30_000);
    // The ledger settles and the process stops: no duplicate can come after that.
    await waitFor(async () => (await openRows()) === 0, 'the ledger to settle', 30_000);
    expect(await standby.stop()).toBe(0);
    expect(answers()).toEqual([answerFor('q1'), answerFor('q2')]);
    // The killed poller's last long poll may still be open at Telegram when the standby polls (the
    // standby sees the process gone at once): it is ended with 409 that nobody hears. No live
    // poller's loop was ever ended by another's (each would have logged it).
    expect(emu.getUpdatesConflicts).toBeLessThanOrEqual(1);
    expect(
      [...poller.logs, ...standby.logs].filter((l) => String(l.msg).startsWith('telegram polling stopped')),
    ).toEqual([]);
  }, 120_000);
});
