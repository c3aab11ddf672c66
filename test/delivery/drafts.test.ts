/**
 * The presenter's draft lane against a fake surface with drafts, on simulated time: the
 * placeholder, the paced draft updates, the refresh before a draft expires (and none after the
 * turn), a stopped turn keeping its drafted text as the final message, and the fall back to
 * post-then-edit when the platform refuses drafts mid-answer.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Drafts, Part } from '../../src/contract/surface.js';
import { draftIdOf, THINKING_DELAY_MS } from '../../src/delivery/drafts.js';
import { enqueueReply, replyKey } from '../../src/delivery/ledger.js';
import type { Presenter } from '../../src/delivery/presenter.js';
import type { Db } from '../../src/store/db.js';
import { deliveryByKey } from '../../src/store/repos/deliveries.js';
import { createTurn, finishTurn } from '../../src/store/repos/turns.js';
import type { Conversation } from '../../src/store/schema.js';
import { FakeSurface } from './fake-surface.js';
import { pass, usePresenterWorld } from './presenter-world.js';

/** A fake surface whose drafts are recorded (null text: the placeholder); `refuse` makes them unknown. */
class DraftSurface extends FakeSurface {
  readonly shownDrafts: Array<{ id: number; text: string | null; at: number }> = [];
  refuse = false;
  readonly drafts: Drafts<string> = {
    refreshMs: 20_000,
    usable: () => !this.refuse,
    show: async (_a: string, id: number, part: Part | null) => {
      if (this.refuse) return false;
      this.shownDrafts.push({ id, text: part ? part.text : null, at: Date.now() });
      return true;
    },
  };
}

const world = usePresenterWorld();
let db: Db;
let conv: Conversation;
beforeEach(() => {
  ({ db, conv } = world());
});

/** A presenter whose claims' holders all count as running (one process, no restart). */
const presenter = (surface: FakeSurface): Presenter => world().presenter(surface, { holderGone: () => false });

describe('presenter: drafts', () => {
  it('placeholder, paced drafts, refreshed while quiet, then the answer posted once; nothing after the turn', async () => {
    const surface = new DraftSurface(200, 1000);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    p.onEvent(conv, surface, { type: 'turn_started', turnId: turn.id });
    await pass(THINKING_DELAY_MS - 50);
    expect(surface.shownDrafts).toEqual([]);
    await pass(60);
    expect(surface.shownDrafts.map((d) => d.text)).toEqual([null]);
    for (const w of ['one ', 'two ', 'three ', 'four ']) {
      p.onEvent(conv, surface, { type: 'delta', text: w, stream: key, turnId: turn.id });
      await pass(100);
    }
    // The model is quiet for a while: the draft is shown again before it expires.
    await pass(25_000);
    const texts = surface.shownDrafts.map((d) => d.text);
    expect(texts[0]).toBeNull();
    expect(texts.at(-1)).toBe('one two three four');
    expect(texts.filter((t) => t === 'one two three four').length).toBeGreaterThanOrEqual(2);
    expect(new Set(surface.shownDrafts.map((d) => d.id))).toEqual(new Set([draftIdOf(turn.id)]));
    // Paced like edits: never two draft updates within the interval.
    const textAts = surface.shownDrafts.filter((d) => d.text).map((d) => d.at);
    for (let i = 1; i < textAts.length; i++)
      expect((textAts[i] as number) - (textAts[i - 1] as number)).toBeGreaterThanOrEqual(200);
    expect(surface.calls).toEqual([]);
    expect(await deliveryByKey(db, key)).toBeUndefined();

    await enqueueReply(db, conv.id, key, turn.id, 'one two three four five');
    p.onEvent(conv, surface, { type: 'reply', text: 'one two three four five' });
    await finishTurn(db, turn.id, 'done');
    p.onEvent(conv, surface, { type: 'turn_done', status: 'done' });
    await pass(10);
    await p.idle();
    expect(surface.calls.map((c) => [c.op, c.text])).toEqual([['post', 'one two three four five']]);
    const drafted = surface.shownDrafts.length;
    await pass(60_000);
    await p.idle();
    expect(surface.shownDrafts.length).toBe(drafted);
    expect(surface.calls).toHaveLength(1);
  });

  it("an answer quicker than the placeholder's delay is posted with no draft at all", async () => {
    const surface = new DraftSurface(200, 1000);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    p.onEvent(conv, surface, { type: 'turn_started', turnId: turn.id });
    p.onEvent(conv, surface, { type: 'delta', text: 'Quick.', stream: key, turnId: turn.id });
    await enqueueReply(db, conv.id, key, turn.id, 'Quick.');
    p.onEvent(conv, surface, { type: 'reply', text: 'Quick.' });
    await finishTurn(db, turn.id, 'done');
    p.onEvent(conv, surface, { type: 'turn_done', status: 'done' });
    await pass(5_000);
    await p.idle();
    expect(surface.shownDrafts).toEqual([]);
    expect(surface.calls.map((c) => [c.op, c.text])).toEqual([['post', 'Quick.']]);
  });

  it('a stopped turn keeps its drafted text as the final message, marked stopped', async () => {
    const surface = new DraftSurface(200, 1000);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    p.onEvent(conv, surface, { type: 'delta', text: 'half an answer', stream: key, turnId: turn.id });
    await pass(300);
    expect(surface.shownDrafts.map((d) => d.text)).toEqual(['half an answer']);
    await finishTurn(db, turn.id, 'cancelled', 'stopped');
    p.onEvent(conv, surface, { type: 'turn_done', status: 'cancelled' });
    await pass(10);
    await p.idle();
    expect(surface.calls.map((c) => c.text)).toEqual(['half an answer\n\n_(stopped)_']);
    expect((await deliveryByKey(db, key))?.status).toBe('delivered');
  });

  it('drafts refused mid-answer: the answer goes on by post-then-edit, nothing lost', async () => {
    const surface = new DraftSurface(200, 1000);
    const p = presenter(surface);
    const turn = await createTurn(db, conv.id, 'fake:u1');
    const key = replyKey(turn.id, 0);
    p.onEvent(conv, surface, { type: 'delta', text: 'first part ', stream: key, turnId: turn.id });
    await pass(300);
    surface.refuse = true;
    p.onEvent(conv, surface, { type: 'delta', text: 'second part', stream: key, turnId: turn.id });
    await pass(300);
    expect(surface.calls.map((c) => [c.op, c.text])).toEqual([['post', 'first part second part']]);
    expect((await deliveryByKey(db, key))?.status).toBe('streaming');
    await enqueueReply(db, conv.id, key, turn.id, 'first part second part, done');
    p.onEvent(conv, surface, { type: 'reply', text: 'first part second part, done' });
    await pass(10);
    await p.idle();
    expect(surface.shown()).toEqual(['first part second part, done']);
  });
});
