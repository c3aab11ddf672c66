import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import {
  claimLease,
  getLease,
  releaseConversationLease,
  releaseLease,
  renewLease,
  takeLeaseFrom,
} from '../../src/store/repos/leases.js';
import { enqueueInbox } from '../../src/store/repos/log.js';
import { createTurn } from '../../src/store/repos/turns.js';
import { openTestDatabase, postgresOnly } from '../helpers/test-db.js';
import { skipped } from '../helpers/skips.js';

let dir: string;
let db: Db;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-leases-'));
  db = openTestDatabase(dir);
  await migrateToLatest(db);
});
afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('lease rows', () => {
  it('one holder at a time; renewal by the holder only; takeover after expiry bumps the fencing token', async () => {
    const a = await claimLease(db, 'conv:1', 'A', 1000, 10_000);
    expect(a).toEqual({ name: 'conv:1', token: 1, takenOver: false });
    expect(await claimLease(db, 'conv:1', 'B', 1000, 10_500)).toBeNull();
    // The holder claims again (a second claim): same holder, new token.
    const a2 = await claimLease(db, 'conv:1', 'A', 1000, 10_600);
    expect(a2?.token).toBe(2);
    expect(await renewLease(db, a2!, 'A', 1000, 11_000)).toBe(true);
    // A stale token cannot renew: the newer claim fenced it off.
    expect(await renewLease(db, a!, 'A', 1000, 11_000)).toBe(false);
    // Expired (no renewal by 12 000): B takes over, and A's renewal now fails.
    expect(await claimLease(db, 'conv:1', 'B', 1000, 11_999)).toBeNull();
    const b = await claimLease(db, 'conv:1', 'B', 1000, 12_000);
    expect(b).toEqual({ name: 'conv:1', token: 3, takenOver: true });
    expect(await renewLease(db, a2!, 'A', 1000, 12_100)).toBe(false);
    // A late release by A changes nothing; B's release frees it for anyone at once.
    await releaseLease(db, a2!, 'A');
    expect((await getLease(db, 'conv:1'))?.holder).toBe('B');
    await releaseLease(db, b!, 'B');
    const c = await claimLease(db, 'conv:1', 'C', 1000, 12_200);
    expect(c).toEqual({ name: 'conv:1', token: 4, takenOver: false });
  });

  it('releasing a conversation lease reports, in the same statement, queued messages that have no turn', async () => {
    const conv = await ensureConversation(db, { channel: 'test', chatKey: 'lease', threadKey: '' }, 'u');
    const name = `conv:${conv.id}`;
    const claim = async () =>
      (await claimLease(db, name, 'A', 60_000)) as NonNullable<Awaited<ReturnType<typeof claimLease>>>;
    // Nothing queued.
    expect(await releaseConversationLease(db, await claim(), 'A', conv.id)).toBe(false);
    expect((await getLease(db, name))?.expires_at).toBe(0);
    // Queued (by another instance while this one held the lease) and no turn: it needs a run.
    await enqueueInbox(db, { conversationId: conv.id, authorId: 'u', text: 'hello' });
    expect(await releaseConversationLease(db, await claim(), 'A', conv.id)).toBe(true);
    // Queued, but a turn is unfinished: that turn takes the message at its next round.
    await createTurn(db, conv.id, 'u');
    expect(await releaseConversationLease(db, await claim(), 'A', conv.id)).toBe(false);
    // A lease lost to another holder is left alone and reports nothing.
    const lost = await claim();
    await releaseLease(db, lost, 'A');
    const b = await claimLease(db, name, 'B', 60_000);
    expect(await releaseConversationLease(db, lost, 'A', conv.id)).toBe(false);
    expect(await getLease(db, name)).toMatchObject({ holder: 'B', token: b?.token });
    expect((await getLease(db, name))?.expires_at).toBeGreaterThan(0);
  });

  it('takes a lease from a dead holder only while the row still names it', async () => {
    await claimLease(db, 'p', 'dead', 60_000, 1_000);
    const row = (await getLease(db, 'p'))!;
    const taken = await takeLeaseFrom(db, 'p', 'me', row, 1000, 2_000);
    expect(taken).toEqual({ name: 'p', token: 2, takenOver: true });
    // A second taker with the same stale view loses.
    expect(await takeLeaseFrom(db, 'p', 'other', row, 1000, 2_000)).toBeNull();
    expect((await getLease(db, 'p'))?.holder).toBe('me');
  });

  it('many concurrent claimants: exactly one wins each round', async () => {
    for (let round = 0; round < 5; round++) {
      const now = 100_000 * (round + 1);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => claimLease(db, 'hot', `h${i}`, 1000, now)));
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });
});

const onlyPostgres = postgresOnly('two handles in one process racing to migrate need a server');

// Two handles racing to migrate one database. On SQLite, two connections in one process would
// block each other's thread (better-sqlite3 waits for locks synchronously); there, processes
// are serialised by the file lock and the migration's own transaction.
describe.skipIf(onlyPostgres !== undefined)(`migrations on PostgreSQL${skipped(onlyPostgres)}`, () => {
  it('two instances starting at once migrate once', async () => {
    const fresh = openTestDatabase(dir, 'fresh');
    const again = openTestDatabase(dir, 'fresh');
    try {
      const [x, y] = await Promise.all([migrateToLatest(fresh), migrateToLatest(again)]);
      // Every migration applied by exactly one of them.
      expect([...x, ...y].sort()).toEqual([...new Set([...x, ...y])].sort());
      expect(x.length + y.length).toBeGreaterThan(3);
      const rows = await fresh
        .selectFrom('kysely_migration' as never)
        .selectAll()
        .execute();
      expect(rows).toHaveLength(x.length + y.length);
    } finally {
      await Promise.all([fresh.destroy(), again.destroy()]);
    }
  });
});
