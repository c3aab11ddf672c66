/**
 * Channels that print events (terminal, JSONL, this recording channel) have nothing to edit
 * later: their rows are settled once printed, and notifications reach them once per key.
 */
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { deliveryByKey, deliveryCounts } from '../../src/store/repos/deliveries.js';
import type { Conversation } from '../../src/store/schema.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { RecordingChannel } from '../helpers/recording-channel.js';
import { sqliteOnly } from '../helpers/test-db.js';
import { skipped } from '../helpers/skips.js';

const onlySqlite = sqliteOnly('it reads the row through a second SQLite connection inside the event');

/** A session opened on one chat, like `chat --conversation mine`. */
class OneChatChannel extends RecordingChannel {
  serves(conversation: Conversation): boolean {
    return conversation.chat_key === 'mine';
  }
}

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

describe('delivery on channels that print events', () => {
  it('settles the rows of a printed turn, so nothing stays pending', async () => {
    h = await startHarness({ tools: [] });
    h.llm.push({ text: 'printed answer' });
    await h.send('hi');
    await waitFor(() => h?.channel.eventsOf('turn_done').length, 'the turn');
    await h.core.idle();
    const counts = await deliveryCounts(h.core.db);
    expect(counts.delivered).toBeGreaterThanOrEqual(1);
    expect(counts.pending + counts.sending + counts.streaming).toBe(0);
  });

  // Read with a second SQLite connection, synchronously inside the event: what was committed then.
  it.skipIf(onlySqlite !== undefined)(
    `a reply’s row is committed already delivered with the reply: nothing is left for a presenter to settle${skipped(onlySqlite)}`,
    async () => {
      h = await startHarness({ tools: [] });
      h.llm.push({ text: 'printed answer' });
      const probe = new SQLite(h.config.store.database_url.replace(/^sqlite:/, ''), { readonly: true });
      const seen: unknown[] = [];
      h.core.subscribe((_id, event) => {
        if (event.type === 'reply')
          seen.push(
            probe
              .prepare("SELECT status, delivered_at IS NOT NULL AS stamped FROM deliveries WHERE kind = 'reply'")
              .all(),
          );
      });
      try {
        await h.send('hi');
        await waitFor(() => h?.channel.eventsOf('turn_done').length, 'the turn');
        expect(seen).toEqual([[{ status: 'delivered', stamped: 1 }]]);
      } finally {
        probe.close();
      }
    },
  );

  it('core.notify queues a notification once per key and prints it with its title', async () => {
    h = await startHarness({ tools: [] });
    h.llm.push({ text: 'ok' });
    const r = await h.send('hi');
    if (r.status !== 'queued') throw new Error(r.status);
    await waitFor(() => h?.channel.eventsOf('turn_done').length, 'the turn');
    const input = {
      conversationId: r.conversationId,
      key: 'notify:job7:1',
      title: 'Nightly backup',
      text: 'finished in **3 min**',
    };
    expect(await h.core.notify(input)).toBe(true);
    expect(await h.core.notify(input)).toBe(false);
    await h.core.idle();
    expect(h.channel.eventsOf('notification')).toEqual([
      { type: 'notification', text: 'finished in **3 min**', source: 'Nightly backup' },
    ]);
    const row = await h.core.db
      .selectFrom('deliveries')
      .selectAll()
      .where('idem_key', '=', 'notify:job7:1')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.content ?? '{}')).toEqual({
      type: 'text',
      title: 'Nightly backup',
      markdown: 'finished in **3 min**',
    });
  });

  it('a session serving one conversation neither prints nor settles the rows of another', async () => {
    h = await startHarness({ tools: [], channels: () => [new OneChatChannel()] });
    h.llm.push({ text: 'mine answered' });
    const r = await h.send('hi', { chatKey: 'mine' });
    if (r.status !== 'queued') throw new Error(r.status);
    await waitFor(() => h?.channel.eventsOf('turn_done').length, 'the turn');
    const other = await ensureConversation(h.core.db, { channel: 'test', chatKey: 'other', threadKey: '' }, 'test:u1');
    expect(
      await h.core.notify({
        conversationId: other.id,
        key: 'notify:other:1',
        title: 'Elsewhere',
        text: 'not for this session',
      }),
    ).toBe(true);
    expect(
      await h.core.notify({
        conversationId: r.conversationId,
        key: 'notify:mine:1',
        title: 'Here',
        text: 'for this session',
      }),
    ).toBe(true);
    await h.core.sweep();
    await h.core.idle();
    expect(h.channel.printed.filter((d) => d.conversationId === other.id)).toEqual([]);
    expect(h.channel.eventsOf('notification', r.conversationId)).toEqual([
      { type: 'notification', text: 'for this session', source: 'Here' },
    ]);
    expect((await deliveryByKey(h.core.db, 'notify:mine:1'))?.status).toBe('delivered');
    // Still waiting for a session (or a process) that serves that conversation.
    expect((await deliveryByKey(h.core.db, 'notify:other:1'))?.status).toBe('pending');
  });
});
