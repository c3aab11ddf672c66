import { afterEach, describe, expect, it } from 'vitest';
import { JOURNAL_SETTING } from '../../src/channels/telegram/journal.js';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const update = (id: number, text: string) => ({
  update_id: id,
  message: { message_id: 5000 + id, date: 0, chat: { id: alice.id, type: 'private' }, from: { id: alice.id, is_bot: false, first_name: 'Alice' }, text },
});

describe('telegram: update journal', () => {
  it('journals fetched updates and empties the journal once they are handled', async () => {
    t = await startTelegramTest();
    t.llm.push({ text: 'handled' });
    t.emu.sendText(alice, 'hello');
    await waitForText(t.emu, alice.id, (p) => p === 'handled', 'reply');
    await waitFor(async () => (await t?.h.core.getSetting(JOURNAL_SETTING)) === '[]', 'journal emptied');
  });

  it('replays updates fetched but not handled before a crash, and skips ones already handled', async () => {
    t = await startTelegramTest();
    t.llm.push({ text: 'first reply' });
    const handledId = t.emu.sendText(alice, 'already handled');
    await waitForText(t.emu, alice.id, (p) => p === 'first reply', 'first reply');

    // As if the process died after getUpdates confirmed these but before handling one of them.
    await t.h.core.setSetting(JOURNAL_SETTING, JSON.stringify([update(handledId, 'already handled'), update(77_777, 'lost in the crash')]));
    t.llm.push({ text: 'recovered reply' });
    await t.restart();
    await waitForText(t.emu, alice.id, (p) => p === 'recovered reply', 'reply to the journaled update');
    await t.h.core.idle();
    await t.channel().idle();
    expect(texts(t.emu, alice.id).map((m) => m.plain)).toEqual(['first reply', 'recovered reply']);
    const users = t.llm.chatRequests().flatMap((r) => (r.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'user').map((m) => m.content));
    expect(users.filter((u) => u === 'already handled')).toHaveLength(2); // history of both requests, never queued twice
    expect(users.filter((u) => u === 'lost in the crash')).toHaveLength(1);
    expect(await t.h.core.getSetting(JOURNAL_SETTING)).toBe('[]');
  });
});

describe('telegram: update journal writes', () => {
  it('updates handled while a write runs share the next write, and each caller waits for a write that records it', async () => {
    const { UpdateJournal } = await import('../../src/channels/telegram/journal.js');
    const { silentLogger } = await import('../../src/log.js');
    const writes: string[] = [];
    let release: () => void = () => {};
    const store = {
      getSetting: async () => undefined,
      setSetting: async (_key: string, value: string) => {
        writes.push(value);
        if (writes.length === 2) await new Promise<void>((r) => (release = r)); // the first done() write hangs
      },
    };
    const journal = new UpdateJournal(() => store, silentLogger());
    await journal.add(Array.from({ length: 5 }, (_, i) => update(i + 1, `m${i}`)) as never);
    expect(writes).toHaveLength(1);
    const first = journal.done(1);
    await new Promise((r) => setTimeout(r, 10)); // the write for done(1) is now running (and hangs)
    const rest = [journal.done(2), journal.done(3), journal.done(4)];
    let settled = false;
    void Promise.all(rest).then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false); // not acknowledged before their write
    release();
    await Promise.all([first, ...rest]);
    expect(writes).toHaveLength(3); // add, done(1), then one write for done(2..4)
    expect((JSON.parse(writes[2] as string) as Array<{ update_id: number }>).map((u) => u.update_id)).toEqual([5]);
  });
});
