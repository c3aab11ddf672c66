/**
 * The presenter never posts a delivery twice across instances: a sender that stalled past its
 * claim and was taken over stops before its post (the claim is confirmed right before each
 * platform call), and a post that landed before recording its outcome failed is recorded with
 * the retry, so the next attempt edits it instead of posting it again.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { CompiledQuery } from 'kysely';
import { enqueueReply, replyKey, showApproval } from '../../src/delivery/ledger.js';
import { createApproval, getApproval } from '../../src/store/repos/approvals.js';
import type { Db } from '../../src/store/db.js';
import { deliveryByKey } from '../../src/store/repos/deliveries.js';
import { createTurn } from '../../src/store/repos/turns.js';
import type { Conversation } from '../../src/store/schema.js';
import { FakeSurface } from './fake-surface.js';
import { pass, usePresenterWorld } from './presenter-world.js';

const world = usePresenterWorld();
let db: Db;
let conv: Conversation;
beforeEach(() => {
  ({ db, conv } = world());
});

/** A surface whose address look-up waits while `stall` is set: the sender stalls between its claim and its post. */
class StallingSurface extends FakeSurface {
  stall: Promise<void> | null = null;
  override async address(): Promise<string> {
    if (this.stall) await this.stall;
    return 'chat';
  }
}

describe('presenter: no delivery posted twice across instances', () => {
  it('a sender that stalled before its post and was taken over meanwhile posts nothing: the reply shows once', async () => {
    const surface = new StallingSurface(100, 1000);
    let wake = () => {};
    surface.stall = new Promise<void>((r) => {
      wake = r;
    });
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    await enqueueReply(db, conv.id, key, turn.id, 'once');
    const a = world().presenter(surface, { holderGone: () => false });
    a.deliver(conv.id);
    await pass(10);
    expect(a.heldClaims()).toHaveLength(1);
    // A is starved: its renewals do not land and its claim runs out. B takes the row over and posts.
    await db
      .updateTable('deliveries')
      .set({ claim_expires_at: Date.now() - 1 })
      .where('idem_key', '=', key)
      .execute();
    surface.stall = null;
    const b = world().presenter(surface, { holderGone: () => false });
    b.deliver(conv.id);
    await pass(10);
    await b.idle();
    expect(surface.calls.map((c) => `${c.op} ${c.text}`)).toEqual(['post once']);
    // A wakes up and goes on: its claim is no longer its own, so it posts nothing.
    wake();
    await pass(10);
    await a.idle();
    expect(surface.calls.map((c) => `${c.op} ${c.text}`)).toEqual(['post once']);
    expect(surface.shown()).toEqual(['once']);
    const row = await deliveryByKey(db, key);
    expect(row?.status).toBe('delivered');
    expect(JSON.parse(row?.refs ?? '[]')).toHaveLength(1);
    a.close();
    b.close();
  });

  it('a post whose outcome could not be recorded (the database failed once) is not posted again by the retry', async () => {
    const surface = new FakeSurface(100, 1000);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    await enqueueReply(db, conv.id, key, turn.id, 'recorded late');
    // The handle fails the first "mark delivered" (a dropped connection), after the post landed.
    let failures = 1;
    const flaky = new Proxy(db, {
      get(target, prop) {
        if (prop === 'executeQuery')
          return (q: CompiledQuery) => {
            if (failures > 0 && /^update "deliveries" set .*"delivered_at"/.test(q.sql)) {
              failures--;
              return Promise.reject(new Error('Connection terminated unexpectedly'));
            }
            return target.executeQuery(q);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const p = world().presenter(surface, { db: flaky });
    p.deliver(conv.id);
    await pass(10);
    await p.idle();
    expect(failures).toBe(0);
    const retried = await deliveryByKey(db, key);
    expect(retried?.status).toBe('pending');
    expect(JSON.parse(retried?.refs ?? '[]')).toHaveLength(1);
    // The retry finds the message it posted: nothing is posted again.
    await pass(5_000);
    await p.idle();
    expect(surface.calls.map((c) => `${c.op} ${c.text}`)).toEqual(['post recorded late']);
    expect((await deliveryByKey(db, key))?.status).toBe('delivered');
    p.close();
  });

  it('a card decided while its sender waited goes round again before the rows after it: order kept', async () => {
    const surface = new StallingSurface(100, 1000);
    let wake = () => {};
    surface.stall = new Promise<void>((r) => {
      wake = r;
    });
    const approval = await createApproval(db, {
      conversation_id: conv.id,
      tool_call_id: 'call1',
      attempt: 0,
      tool_name: 'bash',
      label: 'bash ls',
      preview: 'ls',
      requester: 'fake:u1',
      expires_at: null,
    });
    await showApproval(db, approval);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    await enqueueReply(db, conv.id, replyKey(turn.id, 0), turn.id, 'after the card');
    const p = world().presenter(surface);
    p.deliver(conv.id);
    await pass(10);
    // Decided while the card's sender looks up where to post: the version it holds is stale.
    await showApproval(db, (await getApproval(db, approval.id))!, { state: 'approved', scope: 'once', by: 'fake:u1' });
    surface.stall = null;
    wake();
    await pass(10);
    await p.idle();
    expect(surface.calls.map((c) => `${c.op} ${c.text}`)).toEqual([
      'post approval bash ls [approved] by fake:u1',
      'post after the card',
    ]);
    p.close();
  });
});
