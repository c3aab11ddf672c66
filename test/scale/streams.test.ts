/**
 * Two `switchboard start` processes over one PostgreSQL database, Telegram polling (one instance
 * polls and runs the turns; both deliver rows), answers streamed while a storm of 429s makes
 * every platform call wait, and the polling instance SIGKILLed mid-stream and started again.
 * The live stream of a reply is claimed like any delivery row and its claim renewed while the
 * sender waits out a 429, so the other instance never posts or edits the same reply meanwhile:
 * every answer ends shown exactly once, in full, and no half-streamed message is left — save the
 * one thing no ledger can prevent on Telegram, which has no way to look a sent message up: a post
 * Telegram accepted from the killed instance in the instant before it could record it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { skipped } from '../helpers/skips.js';
import { postgresOnly } from '../helpers/test-db.js';

/**
 * How long before the SIGKILL a Telegram post may have been accepted and still not recorded
 * (the send's response and its one write of the reference; seconds only on an overloaded machine).
 */
const KILL_WINDOW_MS = 3000;
const CHATS = 8;
const PER_CHAT = 3;
const answerOf = (q: string) => `Answer to ${q}: ${'streamed words '.repeat(12).trim()}.`;
const questionOf = (chat: number, n: number) => `c${chat} m${n}`;

/** Streams each answer over about a second, in small chunks (many live edits). */
function model(body: { messages: Array<{ role: string; content: string | null }> }): ScriptedStep {
  const asked = String(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  const q = /c\d+ m\d+/.exec(asked)?.[0] ?? asked;
  return { text: answerOf(q), chunkSize: 8, delayMs: 40 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  check: () => T,
  what: string,
  timeoutMs: number,
  detail?: () => unknown,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
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
const procs: StartedProcess[] = [];

const onlyPostgres = postgresOnly('two instances over one database need a server');

beforeEach(async () => {
  tg = await startTelegramEmulator();
  llm = await startScriptedLlm();
  llm.setHandler(model);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-streams-'));
  env = childEnv(dir, llm.url, '[telegram]\nstream_interval_ms = 100\n\n[access]\nrate_limit_per_minute = 10000\n', {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: Array.from({ length: CHATS }, (_, i) => String(5000 + i)).join(','),
  });
});

afterEach(async () => {
  await killLeftRunning(procs);
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
              killedAt = Date.now();
              await first.kill();
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
      // Late edits or posts would come within a few stream intervals and sweeps.
      await sleep(3_000);
      for (const p of procs)
        if (p.child.exitCode === null && p.child.signalCode === null) expect(await p.stop()).toBe(0);
      expect(tg.calls.filter((c) => !c.ok && c.method === 'editMessageText').length).toBeGreaterThan(0);
      for (const [i, user] of users.entries()) {
        const expected = Array.from({ length: PER_CHAT }, (_, n) => answerOf(questionOf(i, n)));
        const shown = tg.messages(user.id).filter((m) => m.kind === 'text' && m.plain.startsWith('Answ'));
        // Each answer once, in order; anything more is a message whose first post Telegram accepted
        // from the killed instance just before the kill (it could not record it).
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
          const what = `chat ${user.id}: "${extra.plain}" (a fragment or a double) was posted`;
          expect(post?.at, `${what} just before the kill`).toBeGreaterThan(killedAt - KILL_WINDOW_MS);
          expect(post?.at, what).toBeLessThanOrEqual(killedAt + 50);
        }
      }
    }, 240_000);
  },
);
