/**
 * The scale-out acceptance test: three `switchboard start` processes over one PostgreSQL database,
 * Telegram in webhook mode behind a load balancer that spreads updates over the instances, and
 * Slack in HTTP mode with events spread the same way. 100 chats (50 on each platform) send a few
 * messages each; some need an approval, and the tap is sent to another instance than the one
 * that ran the turn. One instance is SIGKILLed mid-load and started again. Every chat ends with
 * each answer in the order asked, and every approval resolved; each answer exactly once, except a
 * Telegram message the killed instance had sent before the kill and not yet recorded (Telegram
 * has no way to look a sent message up, so it is sent again; no ledger row references the copy).
 * (Polling mode with an elected poller: test/scale/poller.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { blockAction, eventCallback } from '../emulators/slack-payloads.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { type LoadBalancer, startLoadBalancer } from '../helpers/load-balancer.js';
import { openTestDatabase, postgresOnly } from '../helpers/test-db.js';
import { skipped } from '../helpers/skips.js';

/** Most instances a test starts (the balancer has a slot per instance). */
const MAX_INSTANCES = 3;
const TELEGRAM_CHATS = 50;
const SLACK_CHATS = 50;
const PER_CHAT = 3;
/** Every tenth chat asks for something that needs an approval (its second message). */
const needsApproval = (chat: number, n: number) => chat % 10 === 0 && n === 1;
const textOf = (chat: number, n: number) => (needsApproval(chat, n) ? `approve c${chat}` : `c${chat} m${n}`);
const answerOf = (text: string) => `Answer to ${text}`;

/** Zero-latency model: `approve …` runs bash first (an approval), anything else is answered at once. */
function model(body: { messages: Array<{ role: string; content: string | null }> }): ScriptedStep {
  const last = body.messages.at(-1);
  const asked = String(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  const text = /(approve c\d+|c\d+ m\d+)/.exec(asked)?.[1] ?? asked;
  if (text.startsWith('approve') && last?.role !== 'tool')
    return { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'echo approved' }) }] };
  return { text: answerOf(text), chunkSize: 1000 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `check` every 50 ms (a hundred chats wait at once: keep the test's own load low). */
async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 120_000,
  detail?: () => unknown,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${detail ? `: ${JSON.stringify(await detail())}` : ''}`);
    await sleep(50);
  }
}

let tg: TelegramEmulator;
let slack: SlackEmulator;
let llm: ScriptedLlm;
let lb: LoadBalancer;
let dir: string;
let db: Db;
let env: Record<string, string>;
/** The instance in each slot (a killed one is replaced in its slot). */
const slots: Array<StartedProcess | null> = [];
/** Telegram taps the balancer sends to a given slot, by callback query id. */
const tapTargets = new Map<string, number>();
const everStarted: StartedProcess[] = [];

const portOf = (p: StartedProcess) => Number(p.logs.find((l) => l.msg === 'switchboard started')?.port);
const baseOf = (p: StartedProcess) => `http://127.0.0.1:${portOf(p)}`;

async function startSlot(i: number): Promise<void> {
  const p = await startProcess(env, 90_000);
  everStarted.push(p);
  slots[i] = p;
  lb.backends[i] = baseOf(p);
}

beforeEach(async () => {
  tg = await startTelegramEmulator();
  slack = await startSlackEmulator();
  slack.app.mode = 'http';
  llm = await startScriptedLlm();
  llm.setHandler(model);
  let next = 0;
  tapTargets.clear();
  // Telegram's webhook goes to the balancer: updates round-robin over the instances; a tap goes
  // where the test sends it (another instance than the one that ran the turn).
  lb = await startLoadBalancer([], (body, n) => {
    const update = JSON.parse(body) as { callback_query?: { id: string } };
    const target = update.callback_query ? tapTargets.get(update.callback_query.id) : undefined;
    return target ?? next++ % n;
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-multi-'));
  env = childEnv(dir, llm.url, '[access]\nrate_limit_per_minute = 10000\n\n[store]\npool_size = 4\n', {
    // Answers as HTML (sendMessage, which this test watches); rich answers across kills: kill-telegram.test.ts.
    SWITCHBOARD__TELEGRAM__RICH_MESSAGES: 'off',
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_WEBHOOK_URL: `${lb.url}/telegram`,
    TELEGRAM_WEBHOOK_SECRET: 'secret',
    TELEGRAM_ALLOWED_USERS: Array.from({ length: TELEGRAM_CHATS }, (_, i) => String(1000 + i)).join(','),
    SLACK_BOT_TOKEN: 'xoxb-emulator',
    SLACK_SIGNING_SECRET: slack.app.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    SLACK_ALLOWED_USERS: Array.from({ length: SLACK_CHATS }, (_, i) => `U${i}`).join(','),
  });
  db = openTestDatabase(dir, 'db');
});

afterEach(async () => {
  for (const p of everStarted.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill();
  slots.length = 0;
  await db.destroy();
  await lb.close();
  await tg.close();
  await slack.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** Visible text of a Slack bot message. */
function visible(m: { text: string; blocks?: Array<{ text?: { text?: string } }> }): string {
  return m.blocks?.length ? m.blocks.map((b) => b.text?.text ?? '').join('\n') : m.text;
}

/** One chat on either platform, as the test drives it. */
interface Chat {
  index: number;
  /** Answers shown in the chat, in order. */
  answers(): string[];
  send(text: string, n: number): Promise<void>;
  /** Tap "Approve" on the chat's pending card, through instance `slot`; false while no card shows. */
  tapApprove(slot: number): Promise<boolean>;
  /** The conversation's key in the database. */
  key: { channel: string; chatKey: string };
  /** What the chat shows (for a failure message). */
  shown(): string[];
}

function telegramChat(index: number): Chat {
  const user = { id: 1000 + index, first_name: `U${index}` };
  return {
    index,
    key: { channel: 'telegram', chatKey: String(user.id) },
    shown: () => tg.messages(user.id).map((m) => m.plain),
    answers: () =>
      tg
        .messages(user.id)
        .filter((m) => m.kind === 'text' && m.plain.startsWith('Answer to'))
        .map((m) => m.plain),
    async send(text) {
      tg.sendText(user, text);
    },
    async tapApprove(slot) {
      const card = tg.messages(user.id).find((m) => m.plain.includes('Approval needed') && m.reply_markup);
      const button = (card?.reply_markup?.inline_keyboard ?? [])
        .flat()
        .find((b: { text: string }) => b.text.includes('Approve'));
      if (!card || !button) return false;
      const id = tg.tap(user, user.id, card.message_id, button.callback_data);
      tapTargets.set(id, slot);
      return true;
    },
  };
}

/** Deliver to instance `slot`, or the next one that answers (Slack retries a request that failed). */
async function deliverSlack(
  kind: 'events_api' | 'interactive',
  payload: Record<string, unknown>,
  slot: number,
): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = lb.backends[(slot + attempt) % lb.backends.length];
    if (base) {
      try {
        const r = await slack.deliver(kind, payload, {
          url: `${base}/slack/events`,
          ...(attempt > 0 ? { retryNum: Math.min(attempt, 3) } : {}),
        });
        if (r.status === 200) return;
      } catch {
        // The instance is down: Slack retries, and the balancer sends the retry elsewhere.
      }
    }
    await sleep(100);
  }
  throw new Error('no instance took the Slack request');
}

function slackChat(index: number): Chat {
  const channel = `D${index}`;
  const user = `U${index}`;
  return {
    index,
    key: { channel: 'slack', chatKey: channel },
    shown: () => slack.messagesIn(channel).map((m) => `${m.bot_id ? 'bot' : 'user'}: ${visible(m)}`),
    answers: () =>
      slack
        .botMessages(channel)
        .map(visible)
        .filter((t) => t.startsWith('Answer to')),
    async send(text, n) {
      const event = eventCallback(slack.userMessage({ channel, user, text, channelType: 'im' }), {
        botUserId: slack.botUserId,
      });
      await deliverSlack('events_api', event, (index + n) % lb.backends.length);
    },
    async tapApprove(slot) {
      const approveOnce = (e: { action_id?: string; value?: string }) =>
        e.action_id?.startsWith('sb_approval_') && e.value?.endsWith(':y');
      const elements = (m: { blocks?: Array<{ elements?: Array<{ action_id?: string; value?: string }> }> }) =>
        (m.blocks ?? []).flatMap((b) => b.elements ?? []);
      const card = slack
        .botMessages(channel)
        .find((m) => elements(m).some(approveOnce) && visible(m).includes('Approval needed'));
      const action = card ? elements(card).find(approveOnce) : undefined;
      if (!card || !action?.value || !action.action_id) return false;
      await deliverSlack(
        'interactive',
        blockAction({ user, channel, messageTs: card.ts, actionId: action.action_id, value: action.value }),
        slot,
      );
      return true;
    },
  };
}

/** The slot of the instance that last ran a chat's turns (its conversation lease), if it still runs. */
async function runnerSlot(chat: Chat): Promise<number | undefined> {
  const conv = await db
    .selectFrom('conversations')
    .select('id')
    .where('channel', '=', chat.key.channel)
    .where('chat_key', '=', chat.key.chatKey)
    .where('archived', '=', 0)
    .executeTakeFirst();
  if (!conv) return undefined;
  const lease = await db.selectFrom('leases').select('holder').where('name', '=', `conv:${conv.id}`).executeTakeFirst();
  const pid = Number(lease?.holder.split(':')[1]);
  const slot = slots.findIndex((p) => p?.child.pid === pid);
  return slot >= 0 ? slot : undefined;
}

async function openRows(): Promise<number> {
  const rows = await db
    .selectFrom('deliveries')
    .select('id')
    .where('status', 'in', ['pending', 'sending', 'streaming'])
    .execute();
  return rows.length;
}

const onlyPostgres = postgresOnly('several instances in one process need a server, not one SQLite file');

describe.skipIf(onlyPostgres !== undefined)(
  `instances over one PostgreSQL database, webhooks and Slack HTTP spread over them${skipped(onlyPostgres)}`,
  () => {
    it.each([2, MAX_INSTANCES])(
      '%i instances, 100 chats, approvals tapped through another instance, one SIGKILLed mid-load: nothing lost, order kept, doubled only at the kill',
      async (instances) => {
        for (let i = 0; i < instances; i++) await startSlot(i);
        const chats = [
          ...Array.from({ length: TELEGRAM_CHATS }, (_, i) => telegramChat(i)),
          ...Array.from({ length: SLACK_CHATS }, (_, i) => slackChat(i)),
        ];
        const totalAnswers = () => chats.reduce((s, c) => s + c.answers().length, 0);
        const taps: Array<{ chat: number; runner: number | undefined; tappedVia: number }> = [];

        // Mid-load, one instance dies without warning and comes back.
        let answersAtKill = -1;
        let killedAt = 0;
        const chaos = (async () => {
          await until(() => totalAnswers() >= 40, 'load to be under way');
          answersAtKill = totalAnswers();
          const victim = slots[1] as StartedProcess;
          await victim.kill();
          // Whatever Telegram accepted up to here may be the killed instance's.
          killedAt = Date.now();
          slots[1] = null;
          lb.backends[1] = null;
          await sleep(1000);
          await startSlot(1);
        })();

        await Promise.all(
          chats.map(async (chat, ci) => {
            for (let n = 0; n < PER_CHAT; n++) {
              const text = textOf(chat.index, n);
              await chat.send(text, n);
              if (needsApproval(chat.index, n)) {
                // The card is shown; the tap goes to an instance other than the one that ran the turn.
                await until(
                  async () => {
                    const runner = await runnerSlot(chat);
                    // Another live instance than the runner (none while the killed one restarts: wait).
                    const via = Array.from({ length: instances }, (_, k) => ((runner ?? ci) + 1 + k) % instances).find(
                      (k) => lb.backends[k] && k !== runner,
                    );
                    if (via === undefined) return false;
                    if (!(await chat.tapApprove(via))) return false;
                    taps.push({ chat: ci, runner, tappedVia: via });
                    return true;
                  },
                  `the approval card of chat ${ci}`,
                  120_000,
                  () => chat.shown(),
                );
              }
              await until(
                () => chat.answers().includes(answerOf(text)),
                `the answer to "${text}" in chat ${ci}`,
                120_000,
                () => chat.shown(),
              );
            }
          }),
        );
        await chaos;
        // The kill came mid-load: most answers were still to come.
        expect(answersAtKill).toBeGreaterThan(0);
        expect(answersAtKill).toBeLessThan((chats.length * PER_CHAT) / 2);

        // The ledger settles and every instance stops before judging: no late duplicate can come after.
        await until(async () => (await openRows()) === 0, 'the ledger to settle', 60_000);
        // Each live instance is healthy, and how many ran turns (checked below), read before they stop.
        let running = 0;
        for (const p of slots) {
          const metrics = await (await fetch(`${baseOf(p as StartedProcess)}/metrics`)).text();
          if (/switchboard_lease_claims_total\{kind="conv"\} [1-9]/.test(metrics)) running++;
          const health = await fetch(`${baseOf(p as StartedProcess)}/healthz`);
          expect(health.status).toBe(200);
        }
        for (const [i, slot] of slots.entries()) {
          if (!slot) continue;
          expect(await slot.stop(), `instance ${i} stopped cleanly`).toBe(0);
          slots[i] = null;
          lb.backends[i] = null;
        }
        const recorded = new Set(
          (await db.selectFrom('deliveries').select('refs').execute()).flatMap((r) =>
            (JSON.parse(r.refs) as Array<{ ref: string }>).map((x) => x.ref),
          ),
        );
        for (const chat of chats) {
          const expected = Array.from({ length: PER_CHAT }, (_, n) => answerOf(textOf(chat.index, n)));
          const answers = chat.answers();
          if (chat.key.channel === 'slack') {
            // Slack: a post whose reference was not recorded is looked up, never sent again.
            expect(answers, `chat slack:${chat.key.chatKey} shows ${JSON.stringify(chat.shown())}`).toEqual(expected);
            continue;
          }
          // Telegram has no look-up: a message Telegram accepted from the killed instance before
          // it could record the reference is sent again (the one double the ledger allows; no row
          // references the first copy). Any other double, loss or reordering fails.
          const doubled = answers.filter((a, i) => i > 0 && a === answers[i - 1]);
          expect(
            answers.filter((a, i) => i === 0 || a !== answers[i - 1]),
            `chat telegram:${chat.key.chatKey}`,
          ).toEqual(expected);
          for (const text of doubled) {
            const first = tg.calls.find(
              (c) =>
                c.method === 'sendMessage' &&
                String(c.params.chat_id) === chat.key.chatKey &&
                String(c.params.text ?? '').includes(text),
            );
            expect(first?.at, `the first copy of "${text}" was accepted before the kill`).toBeLessThanOrEqual(killedAt);
            const copy = tg.messages(Number(chat.key.chatKey)).find((m) => m.kind === 'text' && m.plain === text);
            expect(
              recorded.has(`${chat.key.chatKey}:${copy?.message_id}`),
              `the first copy of "${text}" is in no ledger row`,
            ).toBe(false);
          }
        }
        // Every approval resolved, each tapped through another instance than the one that ran the turn.
        const approvalChats = chats.filter((c) => needsApproval(c.index, 1)).length;
        expect(taps).toHaveLength(approvalChats);
        for (const t of taps) expect(t.tappedVia).not.toBe(t.runner);
        const approvals = await db.selectFrom('approvals').select(['status']).execute();
        expect(approvals).toHaveLength(approvalChats);
        expect(approvals.every((a) => a.status === 'approved')).toBe(true);
        const open = await db.selectFrom('turns').select('id').where('status', 'in', ['running', 'waiting']).execute();
        expect(open).toEqual([]);

        // The work was spread: every instance took webhooks, and the live ones ran turns and sent rows.
        expect(lb.served.every((n) => n > 0)).toBe(true);
        expect(running).toBeGreaterThanOrEqual(2);
        const claimed = (await db.selectFrom('deliveries').select('claim_token').execute()).filter(
          (r) => Number(r.claim_token) > 0,
        );
        expect(claimed.length).toBeGreaterThan(0);
      },
      300_000,
    );
  },
);
