/**
 * The ledger keeps every message of a card at its outcome: a message a tap made known (a post a
 * crash left unrecorded) gets a row of its own and follows the card; a card row holding no
 * message takes the tapped one instead of posting again; and a version of a card replaced while
 * it was on its way is never drawn after it. The presenter runs against a fake surface.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TappedCard } from '../../src/contract/core.js';
import { repairCards } from '../../src/delivery/card-repair.js';
import { approvalContent } from '../../src/delivery/content.js';
import { cardKey, recordTappedCard, showApproval, tappedCardKey } from '../../src/delivery/ledger.js';
import type { Presenter } from '../../src/delivery/presenter.js';
import { type Db, migrateToLatest, openSqlite } from '../../src/store/db.js';
import { createApproval, decideApprovalRow, getApproval } from '../../src/store/repos/approvals.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { cardRows, deliveryByKey } from '../../src/store/repos/deliveries.js';
import type { Approval, Conversation } from '../../src/store/schema.js';
import { FakeSurface } from './fake-surface.js';
import { presenterOn } from '../helpers/presenter.js';

const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

let db: Db;
let conv: Conversation;
let holders = 0;

/** A surface whose next look-up of the chat's address waits until released (a slow moment mid-send). */
class GatedSurface extends FakeSurface {
  private gate: Promise<void> | null = null;
  private open: () => void = () => undefined;

  holdNextAddress(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  release(): void {
    this.open();
  }

  override address(): string {
    return 'chat';
  }

  async addressLater(): Promise<string> {
    const gate = this.gate;
    this.gate = null;
    if (gate) await gate;
    return 'chat';
  }
}

function presenter(surface: FakeSurface): Presenter {
  if (surface instanceof GatedSurface) surface.address = (() => surface.addressLater()) as never;
  return presenterOn(db, surface, { holder: `test:${++holders}`, holderGone: () => true });
}

async function delivered(p: Presenter): Promise<void> {
  p.deliver(conv.id);
  await pass(10);
  await p.idle();
}

function newApproval(callId = 'call1', command = 'ls'): Promise<Approval> {
  return createApproval(db, {
    conversation_id: conv.id,
    tool_call_id: callId,
    attempt: 0,
    tool_name: 'bash',
    label: `bash ${command}`,
    preview: command,
    requester: 'fake:u1',
    expires_at: null,
  });
}

/** Approve as the core does: the row and every message of its card in one transaction. */
async function approve(a: Approval, tapped?: TappedCard): Promise<void> {
  const shown = { state: 'approved' as const, scope: 'once' as const, by: 'fake:u1' };
  await db.transaction().execute(async (trx) => {
    await decideApprovalRow(trx, a.id, ['pending'], 'approved', { scope: 'once', decided_by: 'fake:u1' });
    await showApproval(trx, a, shown);
    if (tapped) await recordTappedCard(trx, tapped, approvalContent(a, shown));
  });
}

const tapOn = (ref: string): TappedCard => ({ chat: { channel: 'fake', chatKey: 'c1', threadKey: '' }, ref });

beforeEach(async () => {
  // In-process SQLite with fake timers, as the presenter's own tests (the kill tests run the same
  // queries on PostgreSQL).
  db = openSqlite(':memory:');
  await migrateToLatest(db);
  conv = await ensureConversation(db, { channel: 'fake', chatKey: 'c1', threadKey: '' }, 'fake:u1');
  vi.useFakeTimers();
});

afterEach(async () => {
  vi.useRealTimers();
  await db.destroy();
});

describe('card copies', () => {
  it('a tapped message the row does not hold follows the card to its outcome; a tap on a known one adds nothing', async () => {
    const surface = new FakeSurface();
    const p = presenter(surface);
    const a = await newApproval();
    await showApproval(db, a);
    await delivered(p);
    // A copy of the card the ledger never recorded (its post's answer was lost), and the known one.
    surface.messages.set('m0', 'approval bash ls [pending]');
    const [known] = [...surface.messages.keys()].filter((r) => r !== 'm0');
    await approve(a, tapOn('m0'));
    await recordTappedCard(db, tapOn(known as string), approvalContent((await getApproval(db, a.id)) as Approval));
    await delivered(p);
    expect(surface.shown()).toEqual([
      'approval bash ls [approved] by fake:u1',
      'approval bash ls [approved] by fake:u1',
    ]);
    expect((await cardRows(db, cardKey(a.id))).map((r) => r.idem_key)).toEqual([
      cardKey(a.id),
      tappedCardKey(a.id, 'm0'),
    ]);
    expect(surface.ops('post')).toHaveLength(1);
  });

  it('a card row holding no message takes the tapped one (the post a crash left unrecorded) instead of posting again', async () => {
    const surface = new FakeSurface();
    const p = presenter(surface);
    const a = await newApproval();
    await showApproval(db, a);
    // The post landed, the process died before recording it: the row is half sent.
    surface.messages.set('m0', 'approval bash ls [pending]');
    await db.updateTable('deliveries').set({ status: 'sending' }).where('idem_key', '=', cardKey(a.id)).execute();
    await approve(a, tapOn('m0'));
    expect((await deliveryByKey(db, cardKey(a.id)))?.status).toBe('sending');
    await delivered(p);
    expect(surface.ops('post')).toHaveLength(0);
    expect(surface.shown()).toEqual(['approval bash ls [approved] by fake:u1']);
  });

  it('a version replaced while it was on its way is never drawn', async () => {
    const surface = new GatedSurface();
    const p = presenter(surface);
    const a = await newApproval();
    await showApproval(db, a);
    await delivered(p);
    // Denied, waiting for a note: on its way, the sender stalls; the denial is finished meanwhile.
    await decideApprovalRow(db, a.id, ['pending'], 'awaiting_note', { decided_by: 'fake:u1' });
    await showApproval(db, a, { state: 'awaiting_note', scope: null, by: 'fake:u1' });
    surface.holdNextAddress();
    p.deliver(conv.id);
    await pass(10);
    await decideApprovalRow(db, a.id, ['awaiting_note'], 'rejected', { decided_by: 'fake:u1' });
    await showApproval(db, a, { state: 'denied', scope: null, by: 'fake:u1' });
    surface.release();
    await pass(10);
    await p.idle();
    expect(surface.ops('edit').map((c) => c.text)).toEqual(['approval bash ls [denied] by fake:u1']);
    expect(surface.shown()).toEqual(['approval bash ls [denied] by fake:u1']);
  });

  it('a start brings a card offering buttons for a decided approval, and a card given up on, to the outcome', async () => {
    const surface = new FakeSurface();
    const p = presenter(surface);
    const a = await newApproval();
    await showApproval(db, a);
    await delivered(p);
    // Decided without its card (as an older version could leave it), and a card given up on.
    await decideApprovalRow(db, a.id, ['pending'], 'expired', {});
    const b = await newApproval('call2', 'pwd');
    await showApproval(db, b);
    await delivered(p);
    await decideApprovalRow(db, b.id, ['pending'], 'approved', { scope: 'once', decided_by: 'fake:u2' });
    await showApproval(db, b, { state: 'approved', scope: 'once', by: 'fake:u2' });
    await db.updateTable('deliveries').set({ status: 'abandoned' }).where('idem_key', '=', cardKey(b.id)).execute();

    expect(await repairCards(db)).toEqual({ settled: 1, retried: 1 });
    await delivered(p);
    expect(surface.shown()).toEqual(['approval bash ls [expired]', 'approval bash pwd [approved] by fake:u2']);
    // Nothing is left to repair.
    expect(await repairCards(db)).toEqual({ settled: 0, retried: 0 });
  });
});
