/**
 * Two `switchboard start` processes over one PostgreSQL database, Telegram polling (one instance
 * polls and runs the turns; both deliver rows), answers streamed while a storm of 429s makes
 * every platform call wait, and the polling instance SIGKILLed mid-stream and started again.
 * The live stream of a reply is claimed like any delivery row and its claim renewed while the
 * sender waits out a 429, so the other instance never posts or edits the same reply meanwhile:
 * every answer ends shown exactly once, in full, and no half-streamed message is left — save the
 * one thing no ledger can prevent on Telegram, which has no way to look a sent message up: a post
 * Telegram accepted from the killed instance before it could record it (however long that instant
 * lasted on a busy machine: such a post is one no ledger row references).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { skipped } from '../helpers/skips.js';
import { openTestDatabase, postgresOnly } from '../helpers/test-db.js';

const CHATS = 8;
const PER_CHAT = 3;
const answerOf = (q: string) => `Answer to ${q}: ${'streamed words '.repeat(12).trim()}.`;
const questionOf = (chat: number, n: number) => `c${chat} m${n}`;

/** The question whose first answer is held half-streamed: the instance streaming it is killed then. */
const HELD = questionOf(0, 1);

/**
 * Streams each answer over about a second, in small chunks (many live edits). The first answer to
 * {@link HELD} stops after its first words and never goes on (its instance is killed under it):
 * a half-streamed message is then shown however long the 429s delay it, rather than only when the
 * machine happens to show one before the stream ends.
 */
function streamingModel(): (body: { messages: Array<{ role: string; content: string | null }> }) => ScriptedStep {
  let held = false;
  return (body) => {
    const asked = String(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
    const q = /c\d+ m\d+/.exec(asked)?.[0] ?? asked;
    const step = { text: answerOf(q), chunkSize: 8, delayMs: 40 };
    if (q !== HELD || held) return step;
    held = true;
    return { ...step, pauses: [{ afterChars: 40, until: new Promise<void>(() => undefined) }] };
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs: number,
  detail?: () => unknown,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${detail ? `: ${JSON.stringify(detail())}` : ''}`);
    await sleep(50);
  }
}

let tg: TelegramEmulator;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let db: Db;
const procs: StartedProcess[] = [];

/** Ledger rows still to be shown or finished (a live stream included). */
async function openRows(): Promise<number> {
  const rows = await db
    .selectFrom('deliveries')
    .select('id')
    .where('status', 'in', ['pending', 'sending', 'streaming'])
    .execute();
  return rows.length;
}

/** Every Telegram message id some ledger row references (as `<chat id>:<message id>`). */
async function recordedMessages(): Promise<Set<string>> {
  const rows = await db.selectFrom('deliveries').select('refs').execute();
  return new Set(rows.flatMap((r) => (JSON.parse(r.refs) as Array<{ ref: string }>).map((x) => x.ref)));
}

const onlyPostgres = postgresOnly('two instances over one database need a server');

beforeEach(async () => {
  tg = await startTelegramEmulator();
  llm = await startScriptedLlm();
  llm.setHandler(streamingModel());
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-streams-'));
  env = childEnv(dir, llm.url, '[telegram]\nstream_interval_ms = 100\n\n[access]\nrate_limit_per_minute = 10000\n', {
    // Answers as HTML (sendMessage, which this test watches); rich answers across kills: kill-telegram.test.ts.
    SWITCHBOARD__TELEGRAM__RICH_MESSAGES: 'off',
    // Streams by edits (a half-streamed message is what this test kills under): private chats would use drafts.
    SWITCHBOARD__TELEGRAM__STREAMING: 'edit',
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: Array.from({ length: CHATS }, (_, i) => String(5000 + i)).join(','),
  });
  db = openTestDatabase(dir, 'db');
});

afterEach(async () => {
  await killLeftRunning(procs);
  await db.destroy();
  await tg.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function start(): Promise<StartedProcess> {
  const p = await startProcess(env, 90_000);
  procs.push(p);
  return p;
}

describe.skipIf(onlyPostgres !== undefined)(
  `two instances streaming answers through a 429 storm${skipped(onlyPostgres)}`,
  () => {
    it('every answer shown once and in full: no doubles, no fragments, also across a SIGKILL of the instance streaming them', async () => {
      const first = await start();
      await start();
      const users = Array.from({ length: CHATS }, (_, i) => ({ id: 5000 + i, first_name: `U${i}` }));
      const texts = (chatId: number) =>
        tg
          .messages(chatId)
          .filter((m) => m.kind === 'text' && m.plain.startsWith('Answ'))
          .map((m) => m.plain);
      // A third of sends and edits answered 429 (retry after 1 s): streams wait on the platform.
      const random = (() => {
        let x = 42;
        return () => {
          x = (x * 1103515245 + 12345) % 2147483648;
          return x / 2147483648;
        };
      })();
      tg.failRate('sendMessage', 0.3, { status: 429, retryAfter: 1 }, random);
      tg.failRate('editMessageText', 0.3, { status: 429, retryAfter: 1 }, random);

      let killed = false;
      let killedAt = 0;
      await Promise.all(
        users.map(async (user, i) => {
          for (let n = 0; n < PER_CHAT; n++) {
            const q = questionOf(i, n);
            tg.sendText(user, q);
            if (i === 0 && n === 1 && !killed) {
              // Mid-stream: the polling instance (the one running the turns) dies.
              killed = true;
              await until(
                () => texts(user.id).some((t) => t.startsWith('Answer to c0 m1') && t !== answerOf(q)),
                'a half-streamed answer',
                60_000,
              );
              await first.kill();
              // Whatever Telegram accepted up to here may be the killed instance's.
              killedAt = Date.now();
              await start();
            }
            await until(
              () => texts(user.id).includes(answerOf(q)),
              `the answer to ${q}`,
              90_000,
              () => texts(user.id),
            );
          }
        }),
      );
      tg.failRate('sendMessage', 0, { status: 429 });
      tg.failRate('editMessageText', 0, { status: 429 });
      // The ledger settles and every instance stops before judging: no late edit or post can come after.
      await until(async () => (await openRows()) === 0, 'the ledger to settle', 60_000);
      for (const p of procs)
        if (p.child.exitCode === null && p.child.signalCode === null) expect(await p.stop()).toBe(0);
      expect(tg.calls.filter((c) => !c.ok && c.method === 'editMessageText').length).toBeGreaterThan(0);
      const recorded = await recordedMessages();
      for (const [i, user] of users.entries()) {
        const expected = Array.from({ length: PER_CHAT }, (_, n) => answerOf(questionOf(i, n)));
        const shown = tg.messages(user.id).filter((m) => m.kind === 'text' && m.plain.startsWith('Answ'));
        // Each answer once, in order; anything more is a message whose first post Telegram accepted
        // from the killed instance before the kill, and that it died before recording.
        const kept = shown.filter(
          (m, k) => expected.includes(m.plain) && !shown.slice(0, k).some((o) => o.plain === m.plain),
        );
        expect(
          kept.map((m) => m.plain),
          `chat ${user.id}`,
        ).toEqual(expected);
        for (const extra of shown.filter((m) => !kept.includes(m))) {
          const post = tg.calls.find(
            (c) =>
              c.method === 'sendMessage' &&
              c.ok &&
              Number(c.params.chat_id) === user.id &&
              c.params.text === extra.history[0],
          );
          const what = `chat ${user.id}: "${extra.plain}" (a fragment or a double)`;
          expect(post?.at, `${what} was posted by the killed instance`).toBeLessThanOrEqual(killedAt);
          expect(recorded.has(`${user.id}:${extra.message_id}`), `${what} is in no ledger row`).toBe(false);
        }
      }
    }, 240_000);
  },
);
