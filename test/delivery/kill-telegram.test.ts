/**
 * Kill tests against the Telegram emulator: `switchboard start` runs as a child process and is
 * SIGKILLed at the awkward moments of delivery, then started again over the same database.
 * After the restart every answer is in the chat exactly once, in order, with no fragment beside it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor as baseWaitFor } from '../helpers/harness.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';
import { openTestDatabase } from '../helpers/test-db.js';

const alice = { id: 111, first_name: 'Alice' };

let emu: TelegramEmulator;
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
  return p;
}

const answers = () =>
  emu
    .messages(alice.id)
    .filter((m) => m.kind === 'text' && m.plain.startsWith('Answer to'))
    .map((m) => m.plain);

/** The chat holds `expected` answers, each complete, in this order, and nothing else that looks like one. */
async function expectAnswersExactly(expected: string[]): Promise<void> {
  await waitFor(
    () => answers().length >= expected.length && expected.every((a) => answers().includes(a)),
    `answers ${JSON.stringify(expected)}`,
    20_000,
  );
  // Let any late duplicate show itself before judging.
  await waitFor(async () => (await openRows()) === 0, 'the ledger to be empty', 20_000);
  expect(answers()).toEqual(expected);
}

async function openRows(): Promise<number> {
  const row = await db
    .selectFrom('deliveries')
    .select(db.fn.countAll<number>().as('n'))
    .where('status', 'in', ['pending', 'sending', 'streaming'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The stored final reply row of a question, once the model's answer is in the database. */
async function storedReply(question: string) {
  const rows = await db.selectFrom('deliveries').selectAll().where('kind', '=', 'reply').execute();
  return rows.find(
    (r) => r.content?.includes(answerFor(question).slice(0, 40)) && !r.content.includes('"partial":true'),
  );
}

beforeEach(async () => {
  emu = await startTelegramEmulator();
  llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-kill-tg-'));
  env = childEnv(dir, llm.url, '[telegram]\nstream_interval_ms = 100\n', {
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(alice.id),
  });
  // The test reads the same file the child writes (WAL: readers never block the writer).
  db = openTestDatabase(dir, 'db');
});

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill();
  await db.destroy();
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

// Answers as rich messages (the default) and as HTML: the same guarantees either way.
for (const rich of ['auto', 'off'] as const) {
  describe(`telegram: SIGKILL at the awkward moments of delivery (rich_messages = ${rich})`, () => {
    /** The method that posts an answer. */
    const postAnswer = rich === 'off' ? 'sendMessage' : 'sendRichMessage';
    beforeEach(() => {
      env = { ...env, SWITCHBOARD__TELEGRAM__RICH_MESSAGES: rich };
    });

    it(
      'after the answer is stored and before it is sent, and again during recovery: shown once, in order',
      async () => {
        const first = await start();
        emu.sendText(alice, 'q1');
        await waitFor(() => answers().includes(answerFor('q1')), 'the first answer');

        // The answer to q2 is stored while Telegram never sees a message for it.
        const held = emu.hold(postAnswer, { match: (p) => Number(p.chat_id) === alice.id });
        emu.sendText(alice, 'q2');
        await held.arrived;
        await waitFor(() => storedReply('q2'), 'the answer stored');
        await first.kill();

        // Recovery itself is killed while it sends the stored answer.
        const again = emu.hold(postAnswer, { match: (p) => Number(p.chat_id) === alice.id });
        const second = await start();
        await again.arrived;
        await second.kill();

        await start();
        await waitFor(() => answers().includes(answerFor('q2')), 'the stored answer after the restart', 20_000);
        emu.sendText(alice, 'q3');
        await expectAnswersExactly([answerFor('q1'), answerFor('q2'), answerFor('q3')]);
      },
      KILL_TEST_TIMEOUT_MS,
    );

    it(
      'mid-draft: nothing is left in the chat, and the restarted answer is posted once, complete',
      async () => {
        const slow = heldSlowAnswer();
        llm.setHandler(slow.model);
        const first = await start();
        emu.sendText(alice, 'slow q');
        // The first words show as a draft (private chat, the default streaming); the chat has no message.
        await waitFor(() => emu.draft(alice.id)?.plain.startsWith('Answ'), 'the first words as a draft');
        slow.resume();
        await waitFor(() => (emu.draft(alice.id)?.plain.length ?? 0) > 12, 'the draft growing');
        expect(emu.messages(alice.id)).toEqual([]);
        expect(await db.selectFrom('deliveries').select('id').where('kind', '=', 'reply').execute()).toEqual([]);
        await first.kill();

        await start();
        await expectAnswersExactly([answerFor('slow q')]);
        // No fragment: the one message of the chat is the whole answer, posted once and never edited.
        const shown = emu.messages(alice.id).filter((m) => m.kind === 'text');
        expect(shown.map((m) => m.plain)).toEqual([answerFor('slow q')]);
        expect(shown[0]?.history).toHaveLength(1);
        expect(emu.calls.filter((c) => c.method === 'editMessageText')).toEqual([]);
      },
      KILL_TEST_TIMEOUT_MS,
    );

    it(
      'during a streamed edit (telegram.streaming = "edit"): the restarted answer finishes the message already shown',
      async () => {
        env = { ...env, SWITCHBOARD__TELEGRAM__STREAMING: 'edit' };
        const slow = heldSlowAnswer();
        llm.setHandler(slow.model);
        const first = await start();
        const held = emu.hold('editMessageText', { match: (p) => Number(p.chat_id) === alice.id });
        emu.sendText(alice, 'slow q');
        // The first words are posted; then the answer goes on, and the message is being edited.
        const fragment = await waitFor(
          () => emu.messages(alice.id).find((m) => m.kind === 'text' && m.plain.startsWith('Answ')),
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
          return row?.status === 'streaming' && row.refs.includes(String(fragment?.message_id));
        }, 'the streamed message recorded');
        await first.kill();

        await start();
        await expectAnswersExactly([answerFor('slow q')]);
        const shown = emu.messages(alice.id).filter((m) => m.kind === 'text' && m.plain.startsWith('Answ'));
        expect(shown.map((m) => m.message_id)).toEqual([fragment?.message_id]);
      },
      KILL_TEST_TIMEOUT_MS,
    );

    it(
      'between Telegram accepting a card and the ledger recording it: resent once, and every copy resolves',
      async () => {
        const first = await start();
        // Telegram takes the card; the process dies before it learns the message id.
        const held = emu.hold('sendMessage', { match: (p) => p.reply_markup !== undefined, phase: 'after' });
        emu.sendText(alice, 'approve it');
        await held.arrived;
        await first.kill();

        await start();
        const cards = () =>
          emu.messages(alice.id).filter((m) => m.plain.includes('Approval needed') || m.plain.includes('Approved'));
        await waitFor(() => cards().length === 2, 'the card resent after the restart', 20_000);
        // Telegram has no way to look a message up: the ambiguous card is sent again (the window is
        // one database write between Telegram's answer and the ledger). Both copies carry the same
        // approval id, so tapping the older one works too.
        const older = cards()[0]!;
        const approve = (older.reply_markup?.inline_keyboard ?? [])
          .flat()
          .find((b: { text: string }) => b.text.includes('Approve'));
        emu.tap(alice, alice.id, older.message_id, approve.callback_data);
        await expectAnswersExactly([answerFor('approve it')]);
        await waitFor(
          () => emu.messages(alice.id).filter((m) => m.plain.includes('Approved')).length >= 1,
          'a card shows the outcome',
        );
      },
      KILL_TEST_TIMEOUT_MS,
    );
  });
}
