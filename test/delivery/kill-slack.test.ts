/**
 * Kill tests against the Slack emulator (Socket Mode): `switchboard start` as a child process,
 * SIGKILLed after an answer is stored and before Slack has it, during a streamed update, and
 * between Slack accepting a post and the ledger recording it — the restart looks the post up
 * instead of posting it twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { eventCallback } from '../emulators/slack-payloads.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { childEnv, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor as baseWaitFor } from '../helpers/harness.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';
import { openTestDatabase } from '../helpers/test-db.js';

const ALICE = 'UALICE';
const DM = 'D1';

let emu: SlackEmulator;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let db: Db;
const procs: StartedProcess[] = [];

/**
 * The kill model, with the first answer to a `slow` question held at two points: after its first
 * words until `resume` is called (the test has seen them posted), and a few words later until the
 * process goes away. The reply then stays a live stream, with an edit under way, for as long as
 * the test needs to kill it, however slowly the process runs; the restarted process's request
 * streams in full.
 */
function heldSlowAnswer(): { model: (body: Parameters<typeof scriptedModel>[0]) => ScriptedStep; resume: () => void } {
  let resume: () => void = () => undefined;
  const resumed = new Promise<void>((resolve) => {
    resume = resolve;
  });
  let held = false;
  return {
    resume,
    model: (body) => {
      const step = scriptedModel(body);
      if (held || !('delayMs' in step) || !step.text.includes('slow')) return step;
      held = true;
      return {
        ...step,
        pauses: [
          { afterChars: 12, until: resumed },
          { afterChars: 24, until: new Promise(() => undefined) },
        ],
      };
    },
  };
}
/** Waits here span process starts: a longer default than the harness's. */
const waitFor = <T>(check: () => T | Promise<T>, what: string, timeoutMs = 30_000) =>
  baseWaitFor(check, what, timeoutMs);
/** Each test starts `switchboard` two or three times; a start takes seconds on a loaded machine. */
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

function ask(text: string): Promise<unknown> {
  return emu.deliver(
    'events_api',
    eventCallback(emu.userMessage({ channel: DM, user: ALICE, text, channelType: 'im' }), { botUserId: emu.botUserId }),
  );
}

/** Full visible text of a bot message. */
function visible(m: { text: string; blocks?: Array<{ text?: { text?: string } }> }): string {
  return m.blocks?.length ? m.blocks.map((b) => b.text?.text ?? '').join('\n') : m.text;
}

const answers = () =>
  emu
    .botMessages(DM)
    .map(visible)
    .filter((t) => t.startsWith('Answer to'));

async function openRows(): Promise<number> {
  const row = await db
    .selectFrom('deliveries')
    .select(db.fn.countAll<number>().as('n'))
    .where('status', 'in', ['pending', 'sending', 'streaming'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function expectAnswersExactly(expected: string[]): Promise<void> {
  await waitFor(() => expected.every((a) => answers().includes(a)), `answers ${JSON.stringify(expected)}`, 20_000);
  await waitFor(async () => (await openRows()) === 0, 'the ledger to be empty', 20_000);
  expect(answers()).toEqual(expected);
}

beforeEach(async () => {
  emu = await startSlackEmulator();
  emu.app.mode = 'socket';
  llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-kill-slack-'));
  env = childEnv(dir, llm.url, '[slack]\nstream_interval_ms = 100\n', {
    SLACK_BOT_TOKEN: 'xoxb-emulator',
    SLACK_APP_TOKEN: 'xapp-emulator',
    SLACK_API_URL: emu.apiUrl,
    SLACK_ALLOWED_USERS: ALICE,
  });
  db = openTestDatabase(dir, 'db');
});

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill();
  await db.destroy();
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('slack: SIGKILL at the awkward moments of delivery', () => {
  it(
    'stored but not sent, then killed again after Slack took the post: shown exactly once, in order',
    async () => {
      const first = await start();
      await ask('q1');
      await waitFor(() => answers().includes(answerFor('q1')), 'the first answer');

      const held = emu.hold('chat.postMessage', { match: (a) => a.channel === DM });
      await ask('q2');
      await held.arrived;
      await waitFor(async () => {
        const rows = await db.selectFrom('deliveries').select('content').where('kind', '=', 'reply').execute();
        return rows.some((r) => r.content?.includes('Answer to q2') && !r.content.includes('"partial":true'));
      }, 'the answer stored');
      await kill(first);

      // Recovery posts the stored answer; Slack takes it but the answer never reaches the process.
      const accepted = emu.hold('chat.postMessage', { match: (a) => a.channel === DM, phase: 'after' });
      const second = await start();
      await accepted.arrived;
      await kill(second);

      await start();
      await waitFor(() => answers().includes(answerFor('q2')), 'the stored answer');
      await ask('q3');
      await expectAnswersExactly([answerFor('q1'), answerFor('q2'), answerFor('q3')]);
    },
    KILL_TEST_TIMEOUT_MS,
  );

  it(
    'during a streamed update: the restarted answer finishes the message already shown',
    async () => {
      const slow = heldSlowAnswer();
      llm.setHandler(slow.model);
      const first = await start();
      const held = emu.hold('chat.update', { match: (a) => a.channel === DM });
      await ask('slow q');
      // The first words are posted; then the answer goes on, and the message is being updated.
      const fragment = await waitFor(
        () => emu.botMessages(DM).find((m) => visible(m).startsWith('Answ')),
        'the first words posted',
      );
      slow.resume();
      await held.arrived;
      await waitFor(async () => {
        const row = await db
          .selectFrom('deliveries')
          .select(['status', 'refs'])
          .where('kind', '=', 'reply')
          .executeTakeFirst();
        return row?.status === 'streaming' && row.refs.includes(String(fragment?.ts));
      }, 'the streamed message recorded');
      await kill(first);

      await start();
      await expectAnswersExactly([answerFor('slow q')]);
      expect(
        emu
          .botMessages(DM)
          .filter((m) => visible(m).startsWith('Answ'))
          .map((m) => m.ts),
      ).toEqual([fragment?.ts]);
    },
    KILL_TEST_TIMEOUT_MS,
  );
});
