/**
 * Kill test of an approval card against the Slack emulator (Socket Mode): `switchboard start` as
 * a child process over one database. The card's post is half sent when its instance dies, the
 * decision comes while nobody sends the row, the process is killed again while the outcome is
 * drawn, Slack answers 429 and a button from before the restart is clicked again: the card stays
 * one message, ends without buttons naming who decided, and the answer is shown once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { blockAction, eventCallback } from '../emulators/slack-payloads.js';
import { type EmuMessage, type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor as baseWaitFor } from '../helpers/harness.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';
import { openTestDatabase } from '../helpers/test-db.js';

const ALICE = 'UALICE';
const DM = 'D1';
/** The claim of an instance on another machine that died while posting (never "gone" to this host). */
const ELSEWHERE = 'another-host:4242:0:1';

let emu: SlackEmulator;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let db: Db;
const procs: StartedProcess[] = [];
/** Waits here span process starts: a longer default than the harness's. */
const waitFor = <T>(check: () => T | Promise<T>, what: string, timeoutMs = 30_000) =>
  baseWaitFor(check, what, timeoutMs);
/** The test starts `switchboard` three times; a start takes seconds on a loaded machine. */
const KILL_TEST_TIMEOUT_MS = 120_000;

async function start(): Promise<StartedProcess> {
  const p = await startProcess(env);
  procs.push(p);
  await waitFor(() => emu.socketCount() > 0, 'the socket connection');
  return p;
}

async function kill(p: StartedProcess): Promise<void> {
  await p.kill();
  await waitFor(() => emu.socketCount() === 0, 'the socket closed');
}

/** Full visible text of a bot message. */
function visible(m: { text: string; blocks?: Array<{ text?: { text?: string } }> }): string {
  return m.blocks?.length ? m.blocks.map((b) => b.text?.text ?? '').join('\n') : m.text;
}

/** Buttons of a message. */
function buttonsOf(m: EmuMessage): Array<{ action_id: string; value: string }> {
  return (m.blocks ?? []).filter((b: any) => b.type === 'actions').flatMap((b: any) => b.elements);
}

/** Bot messages showing an approval card (asking, or its outcome). */
const cards = () => emu.botMessages(DM).filter((m) => /Approval needed|Approved|Denied/.test(visible(m)));

const answerish = () =>
  emu
    .botMessages(DM)
    .map(visible)
    .filter((t) => t.startsWith('Answ'));

/** Click Approve on `card` with the button as it was drawn. */
function clickApprove(card: EmuMessage, button: { action_id: string; value: string }): Promise<unknown> {
  return emu.deliver(
    'interactive',
    blockAction({
      user: ALICE,
      channel: DM,
      messageTs: card.ts,
      threadTs: card.thread_ts,
      actionId: button.action_id,
      value: button.value,
    }),
  );
}

async function openRows(): Promise<number> {
  const row = await db
    .selectFrom('deliveries')
    .select(db.fn.countAll<number>().as('n'))
    .where('status', 'in', ['pending', 'sending', 'streaming'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

beforeEach(async () => {
  emu = await startSlackEmulator();
  emu.app.mode = 'socket';
  llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-kill-cards-slack-'));
  env = childEnv(dir, llm.url, '[slack]\nstream_interval_ms = 100\n', {
    SLACK_BOT_TOKEN: 'xoxb-emulator',
    SLACK_APP_TOKEN: 'xapp-emulator',
    SLACK_API_URL: emu.apiUrl,
    SLACK_ALLOWED_USERS: ALICE,
  });
  db = openTestDatabase(dir, 'db');
});

afterEach(async () => {
  await killLeftRunning(procs);
  await db.destroy();
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('slack: a decided card settles, whatever dies when', () => {
  it(
    'decided while its half-sent post waits for a dead sender, killed while drawing the outcome, 429s: one card, no buttons, who decided',
    async () => {
      const first = await start();
      // Slack takes the card; the instance dies before it learns the message's ts.
      const posted = emu.hold('chat.postMessage', {
        match: (a) => a.channel === DM && JSON.stringify(a.blocks ?? '').includes('actions'),
        phase: 'after',
      });
      await emu.deliver(
        'events_api',
        eventCallback(emu.userMessage({ channel: DM, user: ALICE, text: 'approve it', channelType: 'im' }), {
          botUserId: emu.botUserId,
        }),
      );
      await posted.arrived;
      await kill(first);
      const [card] = cards() as [EmuMessage];
      const approve = buttonsOf(card).find((b) => b.value.endsWith(':y'));
      if (!approve) throw new Error('the card shows no Approve button');

      // As if the row had been claimed by an instance elsewhere that died: nobody sends it until
      // that claim runs out, and Alice approves meanwhile.
      await db
        .updateTable('deliveries')
        .set({ claimed_by: ELSEWHERE, claim_expires_at: Date.now() + 600_000 })
        .where('kind', '=', 'card')
        .execute();
      const second = await start();
      const drawing = emu.hold('chat.update', { match: (a) => a.channel === DM && a.ts === card.ts });
      await clickApprove(card, approve);
      await waitFor(async () => {
        const row = await db.selectFrom('approvals').select('status').executeTakeFirst();
        return row?.status === 'approved';
      }, 'the approval recorded');
      await db.updateTable('deliveries').set({ claim_expires_at: 0 }).where('kind', '=', 'card').execute();
      // The outcome is on its way to Slack when the process dies.
      await drawing.arrived;
      await kill(second);

      emu.rateLimit('chat.update', 3, '1');
      await start();
      // The same button again, from before the restart.
      await clickApprove(card, approve);
      const clicked = new Set([card.ts]);
      await waitFor(() => {
        // A command the crash cut short runs again only after a new approval: Alice gives it.
        for (const m of cards()) {
          const again = buttonsOf(m).find((b) => b.value.endsWith(':y'));
          if (again && !clicked.has(m.ts)) {
            clicked.add(m.ts);
            void clickApprove(m, again);
          }
        }
        return answerish().includes(answerFor('approve it'));
      }, 'the answer after the approval');
      await waitFor(
        () =>
          cards().every((m) => buttonsOf(m).length === 0 && /Approved/.test(visible(m)) && visible(m).includes(ALICE)),
        'every card settled, naming who decided',
      );
      await waitFor(async () => (await openRows()) === 0, 'the ledger to be empty');
      // The half-sent card was found on Slack, not posted a second time.
      expect(cards().filter((m) => m.ts === card.ts)).toHaveLength(1);
      expect(cards().filter((m) => !visible(m).includes('re-run after a restart'))).toHaveLength(1);
      expect(answerish()).toEqual([answerFor('approve it')]);
    },
    KILL_TEST_TIMEOUT_MS,
  );
});
