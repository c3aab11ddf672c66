/**
 * The presenter against a fake surface, on simulated time: streaming by post-then-edit within
 * the interval, splitting at the surface's limit, card lifecycle, restarts mid-stream, and the
 * handling of transient, permanent and ambiguous failures. A new channel gets all of this by
 * implementing the surface.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { CoreEvent } from '../../src/contract/events.js';
import { type CoreMetrics, createMetrics } from '../../src/metrics.js';
import { enqueueError, enqueueNotification, enqueueReply, replyKey, showApproval } from '../../src/delivery/ledger.js';
import type { Presenter } from '../../src/delivery/presenter.js';
import type { Db } from '../../src/store/db.js';
import { createApproval, getApproval } from '../../src/store/repos/approvals.js';
import { deliveryByKey } from '../../src/store/repos/deliveries.js';
import { createTurn, finishTurn } from '../../src/store/repos/turns.js';
import type { Conversation } from '../../src/store/schema.js';
import { FakeFailure, FakeSurface } from './fake-surface.js';
import { pass, usePresenterWorld } from './presenter-world.js';

const world = usePresenterWorld();
let db: Db;
let conv: Conversation;
beforeEach(() => {
  ({ db, conv } = world());
});

/**
 * A presenter as one process would run it. Each has its own holder name; `alive` says which
 * holders still run (by default every earlier one counts as crashed, as after a restart).
 */
function presenter(
  surface: FakeSurface,
  abandonAfterMs?: number,
  alive: (holder: string) => boolean = () => false,
  metrics?: CoreMetrics,
): Presenter {
  return world().presenter(surface, { abandonAfterMs, holderGone: (h) => !alive(h), metrics });
}

function event(p: Presenter, surface: FakeSurface, e: CoreEvent): void {
  p.onEvent(conv, surface, e);
}

describe('presenter: streaming', () => {
  it('posts once, edits no more often than the interval, and lands the final text', async () => {
    const surface = new FakeSurface(200, 1000);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`);
    const t0 = Date.now();
    for (const w of words) {
      event(p, surface, { type: 'delta', text: `${w} `, stream: key, turnId: turn.id });
      await pass(15);
    }
    await enqueueReply(db, conv.id, key, turn.id, words.join(' '));
    event(p, surface, { type: 'reply', text: words.join(' ') });
    await pass(300);
    await p.idle();
    const start = surface.calls[0]!.at;
    // The first post waited one interval (too little text to post at once), the final text did not
    // wait for the throttle.
    expect(surface.calls.map((c) => [c.op, c.at - start])).toEqual([
      ['post', 0],
      ['edit', 200],
      ['edit', 250],
    ]);
    expect(start - t0).toBe(200);
    expect(surface.shown()).toEqual([words.join(' ')]);
    expect((await deliveryByKey(db, key))?.status).toBe('delivered');
  });

  it('a reply complete before the first interval is posted once, in full, with no edit', async () => {
    const surface = new FakeSurface(200, 1000);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    for (const w of ['Short ', 'and ', 'done.']) {
      event(p, surface, { type: 'delta', text: w, stream: key, turnId: turn.id });
      await pass(5);
    }
    await enqueueReply(db, conv.id, key, turn.id, 'Short and done.');
    event(p, surface, { type: 'reply', text: 'Short and done.' });
    await pass(500);
    await p.idle();
    expect(surface.calls.map((c) => c.op)).toEqual(['post']);
    expect(surface.shown()).toEqual(['Short and done.']);
  });

  it('posts the first message at once when enough text has arrived, before the interval', async () => {
    const surface = new FakeSurface(1000, 4000);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    const t0 = Date.now();
    event(p, surface, { type: 'delta', text: 'x'.repeat(50), stream: key, turnId: turn.id });
    await pass(10);
    expect(surface.calls).toEqual([]); // too little text: waiting
    event(p, surface, { type: 'delta', text: ' y'.repeat(100), stream: key, turnId: turn.id });
    await pass(10);
    expect(surface.calls.map((c) => c.op)).toEqual(['post']);
    expect(surface.calls[0]!.at - t0).toBeLessThan(100);
    p.close();
  });

  it('never posts twice while the first post is still on its way', async () => {
    const surface = new FakeSurface(20, 1000);
    surface.postDelayMs = 300;
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    for (let i = 0; i < 10; i++) {
      event(p, surface, { type: 'delta', text: `t${i} `, stream: key, turnId: turn.id });
      await pass(30);
    }
    await enqueueReply(db, conv.id, key, turn.id, 'final text');
    event(p, surface, { type: 'reply', text: 'final text' });
    await pass(400);
    await p.idle();
    expect(surface.ops('post')).toHaveLength(1);
    expect(surface.shown()).toEqual(['final text']);
  });

  it('splits at the surface limit, continues in new messages and drops the ones no longer needed', async () => {
    const surface = new FakeSurface(100, 10);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    event(p, surface, { type: 'delta', text: 'a'.repeat(35), stream: key, turnId: turn.id });
    await pass(150);
    expect(surface.shown()).toEqual(['aaaaaaaaaa', 'aaaaaaaaaa', 'aaaaaaaaaa', 'aaaaa']);
    await enqueueReply(db, conv.id, key, turn.id, 'b'.repeat(15));
    event(p, surface, { type: 'reply', text: '' });
    await pass(150);
    await p.idle();
    expect(surface.shown()).toEqual(['bbbbbbbbbb', 'bbbbb']);
    expect(surface.ops('delete')).toHaveLength(2);
  });
});

describe('presenter: cards and order', () => {
  it('posts a card once and edits the same message after the decision', async () => {
    const surface = new FakeSurface();
    const p = presenter(surface);
    const a = await createApproval(db, {
      conversation_id: conv.id,
      tool_call_id: 'call1',
      attempt: 0,
      tool_name: 'bash',
      label: 'bash ls',
      preview: 'ls',
      requester: 'fake:u1',
      expires_at: null,
    });
    await showApproval(db, a);
    p.deliver(conv.id);
    await pass(10);
    await p.idle();
    expect(surface.shown()).toEqual(['approval bash ls [pending]']);
    await showApproval(db, (await getApproval(db, a.id))!, { state: 'approved', scope: 'once', by: 'fake:u1' });
    p.deliver(conv.id);
    await pass(10);
    await p.idle();
    expect(surface.ops('post')).toHaveLength(1);
    expect(surface.shown()).toEqual(['approval bash ls [approved] by fake:u1']);
  });

  it('a notification carries a visible title and is queued once per key', async () => {
    const surface = new FakeSurface(200, 1000);
    const p = presenter(surface);
    expect(
      await enqueueNotification(db, {
        conversationId: conv.id,
        key: 'notify:job1:1',
        title: 'Backup',
        text: 'all **good**',
      }),
    ).toBe(true);
    expect(
      await enqueueNotification(db, {
        conversationId: conv.id,
        key: 'notify:job1:1',
        title: 'Backup',
        text: 'all **good**',
      }),
    ).toBe(false);
    p.deliver(conv.id);
    await pass(10);
    await p.idle();
    expect(surface.shown()).toEqual(['# Backup\nall **good**']);
  });
});

describe('presenter: restarts', () => {
  it('a restarted round reuses the message a crash left mid-stream; nothing is left beside it', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    const first = presenter(surface);
    event(first, surface, { type: 'delta', text: 'half an ans', stream: key, turnId: turn.id });
    await pass(150);
    expect(surface.shown()).toEqual(['half an ans']);
    // Crash: the first presenter is gone without a word. The round runs again in a new process.
    first.close();
    const second = presenter(surface);
    await second.recover(async () => true);
    event(second, surface, { type: 'delta', text: 'the whole', stream: key, turnId: turn.id });
    await pass(150);
    await enqueueReply(db, conv.id, key, turn.id, 'the whole answer');
    event(second, surface, { type: 'reply', text: 'the whole answer' });
    await pass(150);
    await second.idle();
    expect(surface.ops('post')).toHaveLength(1);
    expect(surface.shown()).toEqual(['the whole answer']);
  });

  it('a stream whose turn did not survive is finished as interrupted on start, not left as a fragment', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    const first = presenter(surface);
    event(first, surface, { type: 'delta', text: 'cut off', stream: key, turnId: turn.id });
    await pass(150);
    first.close();
    await finishTurn(db, turn.id, 'cancelled', 'stopped');
    const second = presenter(surface);
    await second.recover(async () => true);
    await pass(10);
    await second.idle();
    expect(surface.shown()).toEqual(['cut off\n\n_(interrupted)_']);
    expect((await deliveryByKey(db, key))?.status).toBe('delivered');
  });

  it('a reply stored but not sent before a crash is sent on start, before anything newer', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    await enqueueReply(db, conv.id, replyKey(turn.id, 0), turn.id, 'stored answer');
    await enqueueError(db, conv.id, 'later error');
    const p = presenter(surface);
    await p.recover(async () => true);
    await pass(10);
    await p.idle();
    expect(surface.calls.map((c) => c.text)).toEqual(['stored answer', '! later error']);
  });

  it('an ambiguous send is looked up before posting again (platforms that can look)', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    await enqueueReply(db, conv.id, replyKey(turn.id, 0), turn.id, 'only once');
    surface.failNext.post = [new FakeFailure({ kind: 'transient', reason: 'socket hang up', unanswered: true }, true)];
    const p = presenter(surface);
    p.deliver(conv.id);
    await pass(10);
    // The post landed but its answer was lost: the row waits for a retry with no reference.
    await pass(5_000);
    await p.idle();
    expect(surface.shown()).toEqual(['only once']);
    expect(surface.ops('post')).toHaveLength(1);
    expect((await deliveryByKey(db, replyKey(turn.id, 0)))?.status).toBe('delivered');
  });
});

describe('presenter: failures', () => {
  it('waits out retry_after on a transient failure and keeps the order of later rows', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    await enqueueReply(db, conv.id, replyKey(turn.id, 0), turn.id, 'first');
    await enqueueError(db, conv.id, 'second');
    surface.failNext.post = [new FakeFailure({ kind: 'transient', reason: '429', retryAfterMs: 7_000 })];
    const p = presenter(surface);
    p.deliver(conv.id);
    await pass(6_900);
    expect(surface.shown()).toEqual([]);
    await pass(200);
    await p.idle();
    expect(surface.shown()).toEqual(['first', '! second']);
  });

  it('a permanent refusal marks the row failed and nothing retries it; later rows still go', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    await enqueueReply(db, conv.id, key, turn.id, 'to a blocked chat');
    await enqueueError(db, conv.id, 'next');
    surface.failNext.post = [new FakeFailure({ kind: 'permanent', reason: '403 bot was blocked by the user' })];
    const p = presenter(surface);
    p.deliver(conv.id);
    await pass(10);
    await p.recover(async () => true);
    await pass(60_000);
    await p.idle();
    const row = await deliveryByKey(db, key);
    expect(row?.status).toBe('failed');
    expect(row?.last_error).toContain('blocked');
    expect(surface.calls.map((c) => c.text)).toEqual(['! next']);
  });

  it('gives up after the configured bound with the row abandoned', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    await enqueueReply(db, conv.id, key, turn.id, 'never lands');
    surface.failNext.post = Array.from(
      { length: 50 },
      () => new FakeFailure({ kind: 'transient', reason: '502 bad gateway' }),
    );
    const p = presenter(surface, 60_000);
    p.deliver(conv.id);
    for (let i = 0; i < 20; i++) await pass(10_000);
    await p.idle();
    const row = await deliveryByKey(db, key);
    expect(row?.status).toBe('abandoned');
    expect(row?.attempts).toBeGreaterThan(2);
    expect(surface.shown()).toEqual([]);
  });
});

describe('presenter: row claims between instances', () => {
  it('a row another live instance is sending is left to it; rows after it wait; each is shown once, in order', async () => {
    const surface = new FakeSurface(100, 1000);
    surface.postDelayMs = 2_000;
    const turn = await createTurn(db, conv.id, 'fake:u1');
    await enqueueReply(db, conv.id, replyKey(turn.id, 0), turn.id, 'first');
    await enqueueError(db, conv.id, 'second');
    // Two instances over one database, both alive, both serving the chat.
    const metricsA = createMetrics();
    const metricsB = createMetrics();
    const a = presenter(surface, undefined, () => true, metricsA);
    const b = presenter(surface, undefined, () => true, metricsB);
    a.deliver(conv.id);
    await pass(10);
    // A is posting the first row; B (its sweep, a wake-up) drains the same conversation.
    expect(a.heldClaims()).toHaveLength(1);
    b.deliver(conv.id);
    await pass(10);
    expect(surface.calls).toEqual([]);
    await pass(10_000);
    await Promise.all([a.idle(), b.idle()]);
    expect(surface.calls.map((c) => c.text)).toEqual(['first', '! second']);
    const claimsOf = async (m: ReturnType<typeof createMetrics>) =>
      (await m.leaseClaims.get()).values.find((v) => v.labels.kind === 'delivery')?.value ?? 0;
    expect((await claimsOf(metricsA)) + (await claimsOf(metricsB))).toBe(2);
    expect(a.heldClaims()).toEqual([]);
    const row = await deliveryByKey(db, replyKey(turn.id, 0));
    expect(row?.claimed_by).toBeNull();
    expect(row?.status).toBe('delivered');
    a.close();
    b.close();
  });

  it('a sender that stopped renewing loses the row after the claim runs out; the new sender finishes it once and counts a takeover', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    await enqueueReply(db, conv.id, key, turn.id, 'taken over');
    // An instance elsewhere claimed the row and vanished (another host: not known to be dead).
    const row = await deliveryByKey(db, key);
    await db
      .updateTable('deliveries')
      .set({ status: 'sending', claimed_by: 'other-host:1:x', claim_token: 4, claim_expires_at: Date.now() + 5_000 })
      .where('id', '=', row?.id as number)
      .execute();
    const metrics = createMetrics();
    const p = presenter(surface, undefined, (h) => h === 'other-host:1:x', metrics);
    p.deliver(conv.id);
    await pass(1_000);
    expect(surface.calls).toEqual([]);
    await pass(5_000);
    await p.idle();
    expect(surface.shown()).toEqual(['taken over']);
    const after = await deliveryByKey(db, key);
    expect(after?.status).toBe('delivered');
    expect(after?.claim_token).toBe(5);
    expect((await metrics.leaseTakeovers.get()).values.find((v) => v.labels.kind === 'delivery')?.value).toBe(1);
    p.close();
  });

  it('a sender whose claim was taken records nothing over the new sender', async () => {
    const surface = new FakeSurface(100, 1000);
    surface.postDelayMs = 1_000;
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    await enqueueReply(db, conv.id, key, turn.id, 'fenced');
    const metrics = createMetrics();
    const a = presenter(surface, undefined, () => true, metrics);
    a.deliver(conv.id);
    await pass(10);
    // Meanwhile another instance took the row over (A stalled past its claim).
    await db
      .updateTable('deliveries')
      .set({ claimed_by: 'other-host:2:y', claim_token: 99, claim_expires_at: Date.now() + 60_000 })
      .where('idem_key', '=', key)
      .execute();
    await pass(2_000);
    await a.idle();
    const row = await deliveryByKey(db, key);
    // A's post went out, but the row stays with its new sender: no outcome, no references from A.
    expect(row?.status).toBe('sending');
    expect(row?.claimed_by).toBe('other-host:2:y');
    expect(row?.refs).toBe('[]');
    expect((await metrics.leaseLosses.get()).values.find((v) => v.labels.kind === 'delivery')?.value).toBe(1);
    a.close();
  });
});
