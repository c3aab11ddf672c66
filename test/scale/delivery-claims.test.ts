/**
 * Delivery row claims between instances, at the store: two handles over one database (two
 * instances) racing for the same row, a holder whose claim ran out, and what a sender records
 * when a step after a post fails. Each case is one where, without the check, two instances could
 * both post the same delivery (a doubled message in the chat).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import {
  claimDelivery,
  confirmClaim,
  type DeliveryClaim,
  deliveryByKey,
  insertDelivery,
  markDelivered,
  scheduleRetry,
} from '../../src/store/repos/deliveries.js';
import type { Delivery } from '../../src/store/schema.js';
import { openTestDatabase } from '../helpers/test-db.js';

const TTL = 15_000;
const KEY = 'notice:claims';

let dir: string;
/** Instance A's handle, and instance B's: two pools over one database. */
let a: Db;
let b: Db;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-delivery-claims-'));
  a = openTestDatabase(dir);
  await migrateToLatest(a);
  b = openTestDatabase(dir);
  const conv = await ensureConversation(a, { channel: 'test', chatKey: 'claims', threadKey: '' }, 'u');
  await insertDelivery(a, {
    conversationId: conv.id,
    kind: 'notice',
    key: KEY,
    content: '{"type":"text","markdown":"hi"}',
  });
});
afterEach(async () => {
  await b.destroy();
  await a.destroy();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const read = async (db: Db) => (await deliveryByKey(db, KEY)) as Delivery;

describe('delivery claims between two instances', () => {
  it('two instances claiming the same row as they read it: exactly one gets it', async () => {
    for (let round = 0; round < 20; round++) {
      const [seenA, seenB] = await Promise.all([read(a), read(b)]);
      const [ca, cb] = await Promise.all([claimDelivery(a, seenA, 'A', TTL), claimDelivery(b, seenB, 'B', TTL)]);
      expect([ca, cb].filter(Boolean), `round ${round}`).toHaveLength(1);
      const won = (ca ?? cb) as DeliveryClaim;
      // Each round's winner gives the row back unsent, as a transient failure would.
      await scheduleRetry(won.holder === 'A' ? a : b, won, 0, 'again');
    }
  });

  it('a claim renewed after another instance saw it run out is not taken from its holder', async () => {
    const claimA = (await claimDelivery(a, await read(a), 'A', TTL, 1_000)) as DeliveryClaim;
    // B reads the row when A's claim has run out (A was starved and did not renew in time).
    const seenByB = await read(b);
    expect(seenByB.claim_expires_at).toBeLessThan(1_000 + TTL + 1);
    // A wakes, confirms its claim right before posting (still its own: nobody took it), and posts.
    expect(await confirmClaim(a, claimA, TTL, undefined, 1_000 + TTL + 5)).toBe(true);
    // B's claim, decided on what it read, must not succeed: A is posting.
    expect(await claimDelivery(b, seenByB, 'B', TTL, 1_000 + TTL + 6)).toBeNull();
    expect(await markDelivered(a, claimA, seenByB.version, '[{"ref":"m1","shown":"x"}]')).toBe('delivered');
    expect((await read(b)).status).toBe('delivered');
  });

  it('a holder whose claim ran out and was taken over cannot confirm it: it posts nothing, records nothing', async () => {
    const claimA = (await claimDelivery(a, await read(a), 'A', TTL, 1_000)) as DeliveryClaim;
    // A stalls past its claim; B takes the row over (a row left `sending`: B looks before posting).
    const seen = await read(b);
    const claimB = (await claimDelivery(b, seen, 'B', TTL, 1_000 + TTL + 1)) as DeliveryClaim;
    expect(claimB.token).toBe(claimA.token + 1);
    // A wakes right before its post: the check fails, so it does not post.
    expect(await confirmClaim(a, claimA, TTL, undefined, 1_000 + TTL + 2)).toBe(false);
    expect(await markDelivered(a, claimA, seen.version, '[{"ref":"late","shown":"x"}]')).toBe('lost');
    expect(await confirmClaim(b, claimB, TTL)).toBe(true);
    expect(await markDelivered(b, claimB, seen.version, '[{"ref":"m1","shown":"x"}]')).toBe('delivered');
    const row = await read(a);
    expect(row.refs).toBe('[{"ref":"m1","shown":"x"}]');
    expect(row.claimed_by).toBeNull();
  });

  it('a card confirmed for an older version is refused (a newer decision replaced its content)', async () => {
    const row = await read(a);
    const claim = (await claimDelivery(a, row, 'A', TTL)) as DeliveryClaim;
    expect(await confirmClaim(a, claim, TTL, row.version)).toBe(true);
    await b
      .updateTable('deliveries')
      .set({ version: row.version + 1 })
      .where('id', '=', row.id)
      .execute();
    expect(await confirmClaim(a, claim, TTL, row.version)).toBe(false);
    expect(await confirmClaim(a, claim, TTL)).toBe(true);
  });

  it('a retry after a post that landed records the post, so the next sender edits it instead of posting again', async () => {
    const claimA = (await claimDelivery(a, await read(a), 'A', TTL)) as DeliveryClaim;
    // A posted (m1), then recording the outcome failed: the retry carries what landed.
    await scheduleRetry(a, claimA, 0, 'connection reset', false, '[{"ref":"m1","shown":"x"}]');
    const seen = await read(b);
    expect(seen.status).toBe('pending');
    expect(seen.refs).toBe('[{"ref":"m1","shown":"x"}]');
    expect(seen.claimed_by).toBeNull();
    // The next sender starts from that message.
    const claimB = (await claimDelivery(b, seen, 'B', TTL)) as DeliveryClaim;
    expect(claimB).not.toBeNull();
  });
});
