import { afterEach, describe, expect, it, vi } from 'vitest';
import { FORGET_DELAY_MS, JOURNAL_SOURCE, UpdateJournal } from '../../src/channels/telegram/journal.js';
import { journaledUpdates, journalUpdates } from '../../src/store/repos/inbound-journal.js';
import { silentLogger } from '../../src/log.js';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const update = (id: number, text: string) => ({
  update_id: id,
  message: {
    message_id: 5000 + id,
    date: 0,
    chat: { id: alice.id, type: 'private' },
    from: { id: alice.id, is_bot: false, first_name: 'Alice' },
    text,
  },
});

describe('telegram: update journal', () => {
  it('journals fetched updates and empties the journal once they are handled', async () => {
    t = await startTelegramTest();
    // What the journal held right after each write, read back from the database.
    const core = t.h.core;
    const journal = core.channelRole.store.journal;
    const write = journal.journalUpdates.bind(journal);
    const held: number[] = [];
    vi.spyOn(journal, 'journalUpdates').mockImplementation(async (source, updates) => {
      await write(source, updates);
      held.push(...(await journaledUpdates(core.db, source)).map((u) => u.id));
    });
    t.llm.push({ text: 'handled' });
    const id = t.emu.sendText(alice, 'hello');
    await waitForText(t.emu, alice.id, (p) => p === 'handled', 'reply');
    expect(held).toContain(id);
    await waitFor(async () => (await journaledUpdates(t!.h.core.db, JOURNAL_SOURCE)).length === 0, 'journal emptied');
  });

  it('replays updates fetched but not handled before a crash, and skips ones already handled', async () => {
    t = await startTelegramTest();
    t.llm.push({ text: 'first reply' });
    const handledId = t.emu.sendText(alice, 'already handled');
    await waitForText(t.emu, alice.id, (p) => p === 'first reply', 'first reply');

    // As if the process died after getUpdates confirmed these but before handling one of them.
    await journalUpdates(
      t.h.core.db,
      JOURNAL_SOURCE,
      [update(handledId, 'already handled'), update(77_777, 'lost in the crash')].map((u) => ({
        id: u.update_id,
        payload: JSON.stringify(u),
      })),
    );
    t.llm.push({ text: 'recovered reply' });
    await t.restart();
    await waitForText(t.emu, alice.id, (p) => p === 'recovered reply', 'reply to the journaled update');
    await t.h.core.idle();
    await t.channel().idle();
    expect(texts(t.emu, alice.id).map((m) => m.plain)).toEqual(['first reply', 'recovered reply']);
    const users = t.llm
      .chatRequests()
      .flatMap((r) =>
        (r.body.messages as Array<{ role: string; content: string }>)
          .filter((m) => m.role === 'user')
          .map((m) => m.content),
      );
    expect(users.filter((u) => u === 'already handled')).toHaveLength(2); // history of both requests, never queued twice
    expect(users.filter((u) => u === 'lost in the crash')).toHaveLength(1);
    expect(await journaledUpdates(t.h.core.db, JOURNAL_SOURCE)).toEqual([]);
  });
});

describe('telegram: update journal writes', () => {
  it('records a fetched batch before returning it, and forgets handled updates together in one delete', async () => {
    const calls: string[] = [];
    const rows = new Map<number, string>();
    const store = {
      journalUpdates: async (_source: string, updates: Array<{ id: number; payload: string }>) => {
        calls.push(`add ${updates.map((u) => u.id).join(',')}`);
        for (const u of updates) rows.set(u.id, u.payload);
      },
      forgetUpdates: async (_source: string, ids: number[]) => {
        calls.push(`forget ${ids.join(',')}`);
        for (const id of ids) rows.delete(id);
      },
      journaledUpdates: async () => [...rows].map(([id, payload]) => ({ id, payload })),
    };
    const journal = new UpdateJournal(() => store, silentLogger());
    await journal.add(Array.from({ length: 5 }, (_, i) => update(i + 1, `m${i}`)) as never);
    expect(calls).toEqual(['add 1,2,3,4,5']);
    expect(journal.size).toBe(5);
    for (const id of [1, 2, 3, 4]) journal.done(id);
    journal.done(99); // not journaled (a webhook update): nothing to forget
    expect(calls).toHaveLength(1); // nothing written per handled update
    await new Promise((r) => setTimeout(r, FORGET_DELAY_MS + 50));
    expect(calls).toEqual(['add 1,2,3,4,5', 'forget 1,2,3,4']);
    expect([...rows.keys()]).toEqual([5]);
    expect(journal.size).toBe(1);
    journal.done(5);
    await journal.flush(); // shutdown does not wait for the timer
    expect(calls.at(-1)).toBe('forget 5');
    expect(rows.size).toBe(0);
  });

  it('drops an unreadable journaled update at load and replays the rest in order', async () => {
    const rows = new Map<number, string>([
      [7, JSON.stringify(update(7, 'seven'))],
      [8, '{not json'],
      [9, JSON.stringify(update(9, 'nine'))],
    ]);
    const store = {
      journalUpdates: async () => {},
      forgetUpdates: async (_source: string, ids: number[]) => {
        for (const id of ids) rows.delete(id);
      },
      journaledUpdates: async () => [...rows].map(([id, payload]) => ({ id, payload })),
    };
    const journal = new UpdateJournal(() => store, silentLogger());
    const loaded = await journal.load();
    expect(loaded.map((u) => u.update_id)).toEqual([7, 9]);
    expect([...rows.keys()]).toEqual([7, 9]);
  });
});
