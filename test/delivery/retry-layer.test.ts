/**
 * One retry layer: a platform call of a delivery waits out only a 429 with a short retry_after in
 * its transport; a 429 with a long one goes back to the presenter at once, which keeps the row,
 * waits as the platform asked and sends it again: nothing lost, nothing doubled. The row's
 * `attempts` tells the two apart (each send the presenter makes counts; the transport's waits do not).
 * The channels here count up to 1 s as short (in production up to `SHORT_RETRY_AFTER_SECONDS`, 5 s),
 * so the long wait is 2 s instead of 7: the same rule, either side of a lower line.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { ALICE, type SlackStack, startSlackStack, visibleText } from '../slack/stack.js';
import { alice, startTelegramTest, type TelegramTest, waitFor } from '../telegram/setup.js';

let tg: TelegramTest | null = null;
let slack: SlackStack | null = null;
afterEach(async () => {
  await tg?.close();
  await slack?.close();
  tg = null;
  slack = null;
});

/** The longest retry-after the channels under test wait out in place, seconds; 1 s is short, 2 s long. */
const SHORT = 1;

async function replyRow(db: Db) {
  return db
    .selectFrom('deliveries')
    .select(['status', 'attempts'])
    .where('kind', '=', 'reply')
    .executeTakeFirstOrThrow();
}

describe('one retry layer', () => {
  it('Telegram: a long retry_after is the presenter’s (it waits and sends once more), a short one the transport’s', async () => {
    tg = await startTelegramTest({ channelOptions: { shortRetryAfterSeconds: SHORT } });
    const t = tg;
    const long = SHORT + 1;
    t.emu.fail('sendRichMessage', 1, { status: 429, retryAfter: long });
    t.llm.push({ text: 'patience pays' });
    t.emu.sendText(alice, 'hello');
    await waitFor(() => t.emu.messages(alice.id).find((m) => m.plain === 'patience pays'), 'the reply', 30_000);
    await t.h.core.idle();
    const sends = t.emu.calls.filter((c) => c.method === 'sendRichMessage');
    // One refused call, then the presenter's retry, not before retry_after: no wait inside the transport.
    expect(sends.map((c) => c.ok)).toEqual([false, true]);
    expect(sends[1]!.at - sends[0]!.at).toBeGreaterThanOrEqual(long * 1000 - 50);
    expect(t.emu.messages(alice.id).filter((m) => m.plain === 'patience pays')).toHaveLength(1);
    const row = await replyRow(t.h.core.db);
    expect(row.status).toBe('delivered');
    expect(row.attempts).toBe(2);

    // A short one is waited out below the presenter: the row never records a failed attempt.
    t.emu.fail('sendRichMessage', 1, { status: 429, retryAfter: SHORT });
    t.llm.push({ text: 'second answer' });
    t.emu.sendText(alice, 'again');
    await waitFor(() => t.emu.messages(alice.id).find((m) => m.plain === 'second answer'), 'the second reply', 30_000);
    await t.h.core.idle();
    const rows = await t.h.core.db
      .selectFrom('deliveries')
      .select(['attempts'])
      .where('kind', '=', 'reply')
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.attempts)).toEqual([2, 1]);
    expect(t.emu.messages(alice.id).filter((m) => m.plain === 'second answer')).toHaveLength(1);
  }, 60_000);

  it('Slack: a long Retry-After is the presenter’s (no retry in the WebClient or the API layer), a short one the transport’s', async () => {
    slack = await startSlackStack('http', { channelOptions: { shortRetryAfterSeconds: SHORT } });
    const s = slack;
    const long = SHORT + 1;
    s.emu.rateLimit('chat.postMessage', 1, String(long));
    s.llm.push({ text: 'slow but sure' });
    const started = Date.now();
    await s.sendEvent(s.emu.userMessage({ channel: 'D1', user: ALICE, text: 'go' }));
    await waitFor(() => s.findBot('D1', 'slow but sure').length, 'the reply', 30_000);
    const elapsed = Date.now() - started;
    await s.quiesce();
    const posts = s.emu.calls.filter((c) => c.method === 'chat.postMessage');
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    expect(elapsed).toBeGreaterThanOrEqual(long * 1000 - 50);
    expect(s.emu.botMessages('D1').map((m) => visibleText(m))).toEqual(['slow but sure']);
    const row = await replyRow(s.core.db);
    expect(row.status).toBe('delivered');
    expect(row.attempts).toBe(2);

    s.emu.rateLimit('chat.postMessage', 1, String(SHORT));
    s.llm.push({ text: 'quick one' });
    await s.sendEvent(s.emu.userMessage({ channel: 'D1', user: ALICE, text: 'more' }));
    await waitFor(() => s.findBot('D1', 'quick one').length, 'the second reply', 30_000);
    await s.quiesce();
    const rows = await s.core.db
      .selectFrom('deliveries')
      .select(['attempts'])
      .where('kind', '=', 'reply')
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.attempts)).toEqual([2, 1]);
    expect(s.emu.botMessages('D1').map((m) => visibleText(m))).toEqual(['slow but sure', 'quick one']);
  }, 60_000);
});
