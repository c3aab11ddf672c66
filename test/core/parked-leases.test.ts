import { afterEach, describe, expect, it } from 'vitest';
import { PARK_MS, ParkedLeases, type RunLease } from '../../src/core/parked-leases.js';
import type { Leases } from '../../src/core/leases.js';
import { silentLogger } from '../../src/log.js';
import { type Db, openDatabase } from '../../src/store/db.js';
import { receiveMessage } from '../../src/store/repos/message-steps.js';
import { databaseTarget } from '../../src/config.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { sqliteOnly } from '../helpers/test-db.js';
import { skipped } from '../helpers/skips.js';

let h: Harness | null = null;
let other: Db | null = null;
afterEach(async () => {
  await other?.destroy();
  other = null;
  await h?.close();
  h = null;
});

const claims = async (harness: Harness) =>
  (await harness.core.metrics.leaseClaims.get()).values.reduce((s, v) => s + v.value, 0);
const leaseRow = (harness: Harness, conversationId: string) =>
  harness.core.db
    .selectFrom('leases')
    .select(['holder', 'expires_at'])
    .where('name', '=', `conv:${conversationId}`)
    .executeTakeFirst();

const onlySqlite = sqliteOnly('leases are parked on SQLite only');

// Parking is for SQLite, where one process runs every conversation; over PostgreSQL leases are
// given up after each turn, as instances hand chats to each other (test/scale covers that).
describe.skipIf(onlySqlite !== undefined)(
  `a conversation lease kept a moment after its turn (SQLite)${skipped(onlySqlite)}`,
  () => {
    it('back-to-back messages of a chat claim its lease once; it is given up once the chat is quiet', async () => {
      h = await startHarness();
      h.llm.setHandler(() => ({ text: 'ok' }));
      const first = (await h.send('one')) as { conversationId: string };
      await h.core.idle();
      for (const text of ['two', 'three']) {
        expect((await h.send(text)).status).toBe('queued');
        await h.core.idle();
      }
      expect(h.channel.eventsOf('reply')).toHaveLength(3);
      expect(await claims(h)).toBe(1);
      expect((await leaseRow(h, first.conversationId))?.expires_at).toBeGreaterThan(Date.now());
      await waitFor(
        async () => (h ? (await leaseRow(h, first.conversationId))?.expires_at === 0 : false),
        'the lease given up',
        PARK_MS + 3000,
      );
      // The next message claims it again.
      await h.send('four');
      await h.core.idle();
      expect(await claims(h)).toBe(2);
    });

    it('a message another process queued while the lease was kept gets its turn when the lease is given up', async () => {
      // No periodic sweep to find the message: the lease's release itself must.
      h = await startHarness({ sweepIntervalMs: 3_600_000 });
      h.llm.setHandler(() => ({ text: 'ok' }));
      const first = (await h.send('one')) as { conversationId: string };
      await h.core.idle();
      // Another process records a message and cannot run it: the lease is held here. It wakes nobody.
      other = openDatabase(databaseTarget(h.config.store.database_url));
      await receiveMessage(other, {
        conversationId: first.conversationId,
        authorId: 'test:u1',
        text: 'from elsewhere',
      });
      await new Promise((r) => setTimeout(r, PARK_MS / 2));
      expect(h.channel.eventsOf('reply')).toHaveLength(1);
      await waitFor(() => h?.channel.eventsOf('reply').length === 2, 'the queued message answered', PARK_MS + 3000);
      // Given up when the chat went quiet, then claimed again for the queued message.
      expect(await claims(h)).toBe(2);
    });

    it('shutdown gives kept leases up at once', async () => {
      h = await startHarness();
      h.llm.setHandler(() => ({ text: 'ok' }));
      const first = (await h.send('one')) as { conversationId: string };
      await h.core.idle();
      const core = h.core;
      expect((await leaseRow(h, first.conversationId))?.expires_at).toBeGreaterThan(Date.now());
      const db = openDatabase(databaseTarget(h.config.store.database_url));
      try {
        await core.close();
        const row = await db
          .selectFrom('leases')
          .select('expires_at')
          .where('name', '=', `conv:${first.conversationId}`)
          .executeTakeFirst();
        expect(row?.expires_at).toBe(0);
      } finally {
        await db.destroy();
      }
    });
  },
);

describe('parked leases (unit)', () => {
  /** Leases that record releases; nothing else of theirs is used by ParkedLeases. */
  function fakeLeases(ttlMs: number) {
    const released: string[] = [];
    const leases = {
      defaultTtlMs: ttlMs,
      releaseConversation: async (lease: { name: string }) => {
        released.push(lease.name);
        return false;
      },
    } as unknown as Leases;
    return { leases, released };
  }
  const run = (name: string, confirmedAt: number): RunLease => ({
    lease: { name, token: 1, takenOver: false },
    stopRenewing: () => {},
    confirmedAt,
  });

  it('a kept lease renewed recently is taken as it is, without the database', async () => {
    const { leases, released } = fakeLeases(30_000);
    const parked = new ParkedLeases(leases, () => {}, silentLogger(), 60_000);
    const held = run('conv:a', Date.now());
    parked.park('a', held);
    expect(parked.take('a')).toBe(held);
    expect(parked.take('a')).toBeUndefined();
    expect(released).toEqual([]);
  });

  it('a kept lease not renewed for half its lifetime (a stalled process) is given up, not reused', async () => {
    const { leases, released } = fakeLeases(30_000);
    const parked = new ParkedLeases(leases, () => {}, silentLogger(), 60_000);
    parked.park('a', run('conv:a', Date.now() - 20_000));
    expect(parked.take('a')).toBeUndefined();
    await waitFor(() => released.length === 1, 'the release');
    expect(released).toEqual(['conv:a']);
  });

  it('a kept lease lost to another instance is forgotten, never released by this one', async () => {
    const { leases, released } = fakeLeases(30_000);
    const parked = new ParkedLeases(leases, () => {}, silentLogger(), 60_000);
    const held = run('conv:a', Date.now());
    parked.park('a', held);
    parked.lost('a', held.lease);
    expect(parked.take('a')).toBeUndefined();
    await parked.releaseAll();
    expect(released).toEqual([]);
  });
});
