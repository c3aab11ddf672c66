/**
 * Telegram's own waits never outlast a delivery claim unseen: the presenter confirms its claim
 * right before it hands a post (an edit, an upload) to the surface, but the Bot API client waits
 * after that — for a pacing slot of the chat, or out a short 429 — in its API transformers. A
 * claim another instance took over meanwhile stops the call: the transformers confirm again after
 * their wait. Real HTTP to the Telegram emulator, the real presenter over one ledger, each
 * instance with its own API client (and pacer) and surface, as the channel builds them.
 */
import { Api } from 'grammy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pacingTransformer, retryTransformer } from '../../src/channels/telegram/api.js';
import { telegramEmitter } from '../../src/channels/telegram/emitter.js';
import { telegramLimits } from '../../src/channels/telegram/rates.js';
import { TelegramSurface } from '../../src/channels/telegram/surface.js';
import type { ApprovalContent } from '../../src/contract/content.js';
import { cardKey, enqueueReply, replyKey } from '../../src/delivery/ledger.js';
import type { Presenter } from '../../src/delivery/presenter.js';
import { Pacer } from '../../src/kit/pacer.js';
import { withConfirm } from '../../src/kit/send-confirm.js';
import { silentLogger } from '../../src/log.js';
import { type Db, migrateToLatest, openSqlite } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { deliveryByKey, upsertDelivery } from '../../src/store/repos/deliveries.js';
import { createTurn } from '../../src/store/repos/turns.js';
import type { Conversation } from '../../src/store/schema.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { waitFor } from '../helpers/harness.js';
import { presenterOn } from '../helpers/presenter.js';

/** A holder that is no presenter of this test: the instance that took the row over. */
const OTHER = 'other-instance';
const ALICE = 111;

let emu: TelegramEmulator;
let db: Db;
const presenters: Presenter[] = [];
beforeEach(async () => {
  emu = await startTelegramEmulator();
  db = openSqlite(':memory:');
  await migrateToLatest(db);
});
afterEach(async () => {
  for (const p of presenters.splice(0)) p.close();
  await db.destroy();
  await emu.close();
});

/** One instance: its own Bot API client (paced, retrying as the channel's), surface and presenter over the shared ledger. */
function instance(holder: string) {
  const log = silentLogger();
  const api = new Api(emu.token, { apiRoot: emu.apiRoot });
  const pacer = new Pacer();
  // In the channel's order: pacing inside the retry, so a retried send is paced again.
  api.config.use(pacingTransformer(pacer));
  api.config.use(retryTransformer());
  const surface = new TelegramSurface(api, log, telegramEmitter(String), 100, 'edit');
  const presenter = presenterOn(db, surface, { holder, channel: 'telegram' });

  presenters.push(presenter);
  return { api, pacer, presenter };
}

const conversation = () =>
  ensureConversation(db, { channel: 'telegram', chatKey: String(ALICE), threadKey: '' }, `telegram:${ALICE}`);

/** A reply row of a new turn in `conv`, with `text` as its final content. */
async function reply(conv: Conversation, text: string): Promise<string> {
  const turn = await createTurn(db, conv.id, `telegram:${ALICE}`);
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

/** Whether each call of `method` reached the emulator answered (false: a 429). */
const answered = (method: string) => emu.calls.filter((c) => c.method === method).map((c) => c.ok);

describe('Telegram: a claim taken over while the API client waits stops the call', () => {
  it('a send confirms again only after a wait: none without one, one after a pacing wait or a 429', async () => {
    const a = instance('test:a');
    let confirms = 0;
    const confirm = async () => void confirms++;
    await a.api.sendMessage(ALICE, 'no wait', withConfirm({}, confirm));
    expect(confirms).toBe(0);
    // Past the bot's own slot (one send per 33 ms), so that only the 429 waits.
    await new Promise((resolve) => setTimeout(resolve, 50));
    emu.fail('sendMessage', 1, { status: 429, retryAfter: 1 });
    await a.api.sendMessage(ALICE, 'after a 429', withConfirm({}, confirm));
    expect(confirms).toBe(1);
    // Another chat that has had its burst: its next send waits about a second.
    const other = ALICE + 1;
    for (let i = 0; i < 5; i++) await a.pacer.take(telegramLimits(other));
    await a.api.sendMessage(other, 'after a pacing wait', withConfirm({}, confirm));
    expect(confirms).toBe(2);
    // A call outside a delivery has no claim to confirm.
    await a.api.sendMessage(other, 'paced, outside a delivery');
    expect(emu.messages(ALICE)).toHaveLength(2);
    expect(emu.messages(other)).toHaveLength(2);
    expect(confirms).toBe(2);
  });

  it('a post that waited for a pacing slot, taken over meanwhile, is not posted: the reply shows once', async () => {
    const conv = await conversation();
    const key = await reply(conv, 'once');
    const a = instance('test:a');
    const b = instance('test:b');
    // A's chat has had its burst: its next send waits about a second for a slot.
    for (let i = 0; i < 5; i++) await a.pacer.take(telegramLimits(ALICE));
    const take = a.pacer.take.bind(a.pacer);
    let waited = 0;
    a.pacer.take = async (limits) => {
      const ms = await take(limits);
      if (ms > 0 && !waited) {
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
    const shown = emu.messages(ALICE);
    expect(shown.map((m) => m.plain)).toEqual(['once']);
    expect(answered('sendMessage')).toEqual([true]);
    const row = await deliveryByKey(db, key);
    expect(row?.status).toBe('delivered');
    expect(JSON.parse(row?.refs ?? '[]').map((r: { ref: string }) => r.ref)).toEqual([
      `${ALICE}:${shown[0]?.message_id}`,
    ]);
  });

  it('a post that waited out a short 429, taken over meanwhile, is not sent again: the row stays the new holder’s', async () => {
    const conv = await conversation();
    const key = await reply(conv, 'after a 429');
    const a = instance('test:a');
    emu.fail('sendMessage', 1, { status: 429, retryAfter: 1 });
    a.presenter.deliver(conv.id);
    await waitFor(() => answered('sendMessage').length > 0, 'the 429');
    // Within the one second A waits before it sends again.
    await takeOver(key);
    await waitFor(async () => !a.presenter.heldClaims().length, 'A leaving the row');
    await a.presenter.idle();
    expect(answered('sendMessage')).toEqual([false]);
    expect(emu.messages(ALICE)).toEqual([]);
    const row = await deliveryByKey(db, key);
    expect(row?.claimed_by).toBe(OTHER);
    expect(row?.status).not.toBe('delivered');
    expect(row?.refs).toBe('[]');
  });

  it('an approval’s arguments file that waited out a short 429, taken over meanwhile, is not uploaded', async () => {
    const conv = await conversation();
    const approval: ApprovalContent = {
      type: 'approval',
      id: 'abcdef0123456789',
      label: 'write_file big.txt',
      // Longer than a card shows: the whole arguments go as a file before it.
      preview: 'y'.repeat(25_000),
      requester: `telegram:${ALICE}`,
      state: 'pending',
      scope: null,
      by: null,
      note: null,
    };
    const key = cardKey(approval.id);
    const content = JSON.stringify(approval);
    await upsertDelivery(db, { conversationId: conv.id, kind: 'card', key, content, openCard: approval.id });
    const a = instance('test:a');
    emu.fail('sendDocument', 1, { status: 429, retryAfter: 1 });
    a.presenter.deliver(conv.id);
    await waitFor(() => answered('sendDocument').length > 0, 'the 429');
    await takeOver(key);
    await waitFor(async () => !a.presenter.heldClaims().length, 'A leaving the row');
    await a.presenter.idle();
    expect(answered('sendDocument')).toEqual([false]);
    expect(answered('sendMessage')).toEqual([]);
    expect(emu.messages(ALICE)).toEqual([]);
    const row = await deliveryByKey(db, key);
    expect(row?.claimed_by).toBe(OTHER);
    expect(row?.refs).toBe('[]');
  });
});
