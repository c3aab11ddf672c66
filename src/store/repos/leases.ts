/**
 * Leases: one row per piece of work that one instance at a time may do. Claimed by one
 * conditional upsert (free, expired or already ours → ours, with a new fencing token), renewed by
 * a conditional update on the token, released by setting the expiry to 0. No lock is held across
 * awaits: the row is the truth, and a holder that fails to renew knows it lost the lease.
 * Times are the instances' clocks (epoch ms); leases last seconds, so clocks must agree to well
 * under that (NTP).
 */
import { sql } from 'kysely';
import type { Db } from '../db.js';
import type { HeldLease } from '../schema.js';
import { prepared, preparedWrite } from '../prepared.js';

export type { HeldLease };

/**
 * Claim `name` for `holder` until `now + ttlMs` when it is free, expired or already held by
 * `holder`. Null when another instance holds it.
 */
export async function claimLease(
  db: Db,
  name: string,
  holder: string,
  ttlMs: number,
  now = Date.now(),
): Promise<HeldLease | null> {
  const row = (await claimQuery(db, name, holder, now + ttlMs, now))[0];
  return row ? { name, token: Number(row.token), takenOver: Number(row.taken_over) === 1 } : null;
}

const claimQuery = prepared((db: Db, name: string, holder: string, expiresAt: number, now: number) => {
  const query = sql<{ token: number; taken_over: number }>`
    INSERT INTO leases (name, holder, token, expires_at, taken_over, claimed_at)
    VALUES (${name}, ${holder}, 1, ${expiresAt}, 0, ${now})
    ON CONFLICT (name) DO UPDATE SET
      token = leases.token + 1,
      taken_over = CASE WHEN leases.holder <> excluded.holder AND leases.expires_at > 0 THEN 1 ELSE 0 END,
      holder = excluded.holder,
      expires_at = excluded.expires_at,
      claimed_at = excluded.claimed_at
    WHERE leases.expires_at <= ${now} OR leases.holder = ${holder}
    RETURNING token, taken_over`;
  return { compile: () => query.compile(db) };
});

/** Extend a held lease; false when it was lost (expired and taken by another instance). */
export async function renewLease(
  db: Db,
  lease: HeldLease,
  holder: string,
  ttlMs: number,
  now = Date.now(),
): Promise<boolean> {
  const r = await db
    .updateTable('leases')
    .set({ expires_at: now + ttlMs })
    .where('name', '=', lease.name)
    .where('holder', '=', holder)
    .where('token', '=', lease.token)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Give a lease up so another instance may claim it at once. A lost lease is left alone. */
export async function releaseLease(db: Db, lease: HeldLease, holder: string): Promise<void> {
  await releaseQuery(db, lease.name, holder, lease.token);
}

const releaseQuery = preparedWrite((db: Db, name: string, holder: string, token: number) =>
  db
    .updateTable('leases')
    .set({ expires_at: 0 })
    .where('name', '=', name)
    .where('holder', '=', holder)
    .where('token', '=', token),
);

/**
 * Give a conversation's lease up and say, in the same statement, whether the conversation has
 * queued messages and no unfinished turn: another instance may have queued them while this one
 * held the lease (its own claim failed), so they need a turn from someone. False when the lease
 * was lost meanwhile (its new holder runs the conversation).
 */
export async function releaseConversationLease(
  db: Db,
  lease: HeldLease,
  holder: string,
  conversationId: string,
): Promise<boolean> {
  const row = (await releaseCheckingQuery(db, lease.name, holder, lease.token, conversationId))[0];
  return Boolean(row?.waiting);
}

const releaseCheckingQuery = prepared((db: Db, name: string, holder: string, token: number, conversationId: string) => {
  const query = sql<{ waiting: number | boolean }>`
    UPDATE leases SET expires_at = 0
    WHERE name = ${name} AND holder = ${holder} AND token = ${token}
    RETURNING (
      EXISTS (SELECT 1 FROM inbox WHERE conversation_id = ${conversationId} AND consumed_at IS NULL)
      AND NOT EXISTS (SELECT 1 FROM turns WHERE conversation_id = ${conversationId} AND status IN ('running', 'waiting'))
    ) AS waiting`;
  return { compile: () => query.compile(db) };
});

/** Unexpired leases of one holder (for `/healthz`). */
export async function leasesOf(
  db: Db,
  holder: string,
  now = Date.now(),
): Promise<Array<{ name: string; token: number; expires_at: number }>> {
  return db
    .selectFrom('leases')
    .select(['name', 'token', 'expires_at'])
    .where('holder', '=', holder)
    .where('expires_at', '>', now)
    .orderBy('name')
    .execute();
}

/** The holders of the names among `names` that some instance holds right now (unexpired), by name. */
export async function leaseHolders(db: Db, names: string[], now = Date.now()): Promise<Map<string, string>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .selectFrom('leases')
    .select(['name', 'holder'])
    .where('name', 'in', names)
    .where('expires_at', '>', now)
    .execute();
  return new Map(rows.map((r) => [r.name, r.holder]));
}

/** The current row of a lease, if any. */
export async function getLease(
  db: Db,
  name: string,
): Promise<{ holder: string; token: number; expires_at: number } | undefined> {
  return db.selectFrom('leases').select(['holder', 'token', 'expires_at']).where('name', '=', name).executeTakeFirst();
}

/**
 * Take a lease from a holder known to be dead (same host, process gone) before it expires: only
 * if the row still names that holder and token, so a live claimant in between wins instead.
 */
export async function takeLeaseFrom(
  db: Db,
  name: string,
  holder: string,
  from: { holder: string; token: number },
  ttlMs: number,
  now = Date.now(),
): Promise<HeldLease | null> {
  const r = await db
    .updateTable('leases')
    .set({ holder, token: from.token + 1, expires_at: now + ttlMs, taken_over: 1, claimed_at: now })
    .where('name', '=', name)
    .where('holder', '=', from.holder)
    .where('token', '=', from.token)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0 ? { name, token: from.token + 1, takenOver: true } : null;
}
