/**
 * Slack's own waits never outlast a delivery claim unseen: the presenter confirms its claim right
 * before it hands a post to the surface, but the Slack surface may wait after that — for a pacing
 * slot of the channel, or out a short 429 — and a native stream's start looks things up first. A
 * claim another instance took over meanwhile stops the call: the surface confirms again after its
 * wait, and a stream confirms right before `chat.startStream`. Real HTTP to the Slack emulator,
 * the real presenter over one ledger, each instance with its own surface.
 */
import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackApi } from '../../src/channels/slack/api.js';
import { SlackStreams } from '../../src/channels/slack/stream.js';
import { SLACK_RATES, SlackSurface } from '../../src/channels/slack/surface.js';
import { enqueueReply, replyKey } from '../../src/delivery/ledger.js';
import type { Presenter } from '../../src/delivery/presenter.js';
import { silentLogger } from '../../src/log.js';
import { type Db, migrateToLatest, openSqlite } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { deliveryByKey } from '../../src/store/repos/deliveries.js';
import { createTurn } from '../../src/store/repos/turns.js';
import type { Conversation } from '../../src/store/schema.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { waitFor } from '../helpers/harness.js';
import { presenterOn } from '../helpers/presenter.js';

/** A holder that is no presenter of this test: the instance that took the row over. */
const OTHER = 'other-instance';

let emu: SlackEmulator;
let db: Db;
const presenters: Presenter[] = [];
beforeEach(async () => {
  emu = await startSlackEmulator();
  db = openSqlite(':memory:');
  await migrateToLatest(db);
});
afterEach(async () => {
  for (const p of presenters.splice(0)) p.close();
  await db.destroy();
  await emu.close();
});

/** One instance: its own Slack clients, surface (and pacer), native streams and presenter over the shared ledger. */
function instance(holder: string) {
  const log = silentLogger();
  const client = (options: webApi.WebClientOptions) =>
    new webApi.WebClient('xoxb-emulator', { slackApiUrl: emu.apiUrl, ...options });
  // As the channel makes them: no retries, 429s rejected at once (the surface waits out a short one).
  const deliveryClient = client({ retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  const api = new SlackApi(client({ retryConfig: { retries: 0 } }));
  const streams = new SlackStreams({
    config: { streaming: 'native', stream_rollover_ms: 60_000 },
    api,
    deliveryClient,
    log,
  });
  const surface = new SlackSurface({
    api,
    deliveryClient,
    uploadClient: deliveryClient,
    log,
    dmThread: async () => undefined,
    config: { stream_interval_ms: 100, max_upload_bytes: 1_000_000, task_cards: 'auto', markdown_blocks: 'auto' },
    streams,
  });
  const presenter = presenterOn(db, surface, { holder, channel: 'slack' });

  presenters.push(presenter);
  return { surface, streams, presenter };
}

/** A reply row of a new turn in `conv`, with `text` as its final content. */
async function reply(conv: Conversation, text: string): Promise<string> {
  const turn = await createTurn(db, conv.id, 'slack:UALICE');
  const key = replyKey(turn.id, 0);
  await enqueueReply(db, conv.id, key, turn.id, text);
  return key;
}

/** Another instance takes the row over (its claim, with a new fencing token, held for a minute). */
async function takeOver(key: string): Promise<void> {
  const row = await deliveryByKey(db, key);
  await db
    .updateTable('deliveries')
    .set({ claimed_by: OTHER, claim_token: (row?.claim_token ?? 0) + 1, claim_expires_at: Date.now() + 60_000 })
    .where('idem_key', '=', key)
    .execute();
}

const calls = (method: string) => emu.calls.filter((c) => c.method === method);

describe('Slack: a claim taken over while the surface waits stops the call', () => {
  it('a post that waited for a pacing slot, taken over meanwhile, is not posted: the reply shows once', async () => {
    const conv = await ensureConversation(db, { channel: 'slack', chatKey: 'C1', threadKey: '' }, 'slack:UALICE');
    const key = await reply(conv, 'once');
    const a = instance('test:a');
    const b = instance('test:b');
    // A's channel has had its burst: its next post waits about a second for a slot.
    const limits = [{ key: 'C1', rate: SLACK_RATES.slackChannel }];
    for (let i = 0; i < SLACK_RATES.slackChannel.burst; i++) await a.surface.pacer.take(limits);
    const take = a.surface.pacer.take.bind(a.surface.pacer);
    let waited = 0;
    a.surface.pacer.take = async (l) => {
      const ms = await take(l);
      if (ms > 0) {
        waited = ms;
        // A was starved while it waited: its claim ran out, and B took the row over and posted it.
        await db
          .updateTable('deliveries')
          .set({ claim_expires_at: Date.now() - 1 })
          .where('idem_key', '=', key)
          .execute();
        b.presenter.deliver(conv.id);
        await waitFor(async () => (await deliveryByKey(db, key))?.status === 'delivered', 'B delivered the reply');
      }
      return ms;
    };
    a.presenter.deliver(conv.id);
    await waitFor(() => waited > 0, "A's pacing wait");
    await a.presenter.idle();
    await b.presenter.idle();
    expect(waited).toBeGreaterThan(0);
    const shown = emu.botMessages('C1');
    expect(shown.map((m) => m.text)).toEqual(['once']);
    const row = await deliveryByKey(db, key);
    expect(row?.status).toBe('delivered');
    expect(JSON.parse(row?.refs ?? '[]').map((r: { ref: string }) => r.ref)).toEqual([shown[0]?.ts]);
  });

  it('a post that waited out a short 429, taken over meanwhile, is not sent again: the row stays the new holder’s', async () => {
    const conv = await ensureConversation(db, { channel: 'slack', chatKey: 'C2', threadKey: '' }, 'slack:UALICE');
    const key = await reply(conv, 'after a 429');
    const a = instance('test:a');
    emu.rateLimit('chat.postMessage', 1, '1');
    a.presenter.deliver(conv.id);
    await waitFor(() => calls('chat.postMessage').some((c) => c.status === 429), 'the 429');
    // Within the one second A waits before it sends again.
    await takeOver(key);
    await waitFor(async () => !a.presenter.heldClaims().length, 'A leaving the row');
    await a.presenter.idle();
    expect(calls('chat.postMessage').map((c) => c.status)).toEqual([429]);
    expect(emu.botMessages('C2')).toEqual([]);
    const row = await deliveryByKey(db, key);
    expect(row?.claimed_by).toBe(OTHER);
    expect(row?.status).not.toBe('delivered');
    expect(row?.refs).toBe('[]');
  });

  it('a native stream whose claim was taken over before it started is not started', async () => {
    const thread = '1700000000.000100';
    const conv = await ensureConversation(db, { channel: 'slack', chatKey: 'D1', threadKey: thread }, 'slack:UALICE');
    const turn = await createTurn(db, conv.id, 'slack:UALICE');
    const key = replyKey(turn.id, 0);
    const a = instance('test:a');
    let started = false;
    // What a stream does before its start (ending the thread's steps message, looking up whom it is for) takes a while.
    // The takeover is another process's: this one's event loop turns meanwhile (a claim written in
    // the same turn fences the call by itself: src/delivery/fresh-claim.ts).
    a.streams.beforeStart = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await takeOver(key);
      started = true;
    };
    expect(a.streams.available(await a.surface.address(conv))).toBe(true);
    // Enough text for the first message at once.
    a.presenter.live.delta(conv, a.surface, key, turn.id, 'streamed words '.repeat(20));
    await waitFor(() => started, 'the stream about to start');
    await waitFor(async () => (await deliveryByKey(db, key))?.claimed_by === OTHER, 'the takeover');
    await a.presenter.idle();
    expect(calls('chat.startStream')).toEqual([]);
    expect(emu.botMessages('D1', thread)).toEqual([]);
    const row = await deliveryByKey(db, key);
    expect(row?.status).toBe('streaming');
    expect(row?.refs).toBe('[]');
  });
});
