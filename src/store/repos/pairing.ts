/** Pairing codes and paired users. */
import type { Db } from '../db.js';
import type { NewPairingCode, PairingCode } from '../schema.js';

export async function isPaired(db: Db, channel: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('paired_users')
    .select('user_id')
    .where('channel', '=', channel)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The live pending code of a user, if any. */
export async function activeCodeFor(
  db: Db,
  channel: string,
  userId: string,
  now: number,
): Promise<PairingCode | undefined> {
  return db
    .selectFrom('pairing_codes')
    .selectAll()
    .where('channel', '=', channel)
    .where('user_id', '=', userId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function insertCode(db: Db, code: NewPairingCode): Promise<boolean> {
  const r = await db
    .insertInto('pairing_codes')
    .values(code)
    .onConflict((oc) => oc.column('code').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function getCode(db: Db, code: string): Promise<PairingCode | undefined> {
  return db.selectFrom('pairing_codes').selectAll().where('code', '=', code).executeTakeFirst();
}

/** Pending, unexpired codes, oldest first (`switchboard pair list`). */
export async function listPendingCodes(db: Db, now: number): Promise<PairingCode[]> {
  return db
    .selectFrom('pairing_codes')
    .selectAll()
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .orderBy('created_at')
    .execute();
}

/** Mark the code approved and pair its user, atomically. False when not pending or expired. */
export async function approveCode(db: Db, code: string, by: string, now: number): Promise<PairingCode | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('pairing_codes')
      .selectAll()
      .where('code', '=', code)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!row) return undefined;
    await trx.updateTable('pairing_codes').set({ status: 'approved' }).where('code', '=', code).execute();
    await trx
      .insertInto('paired_users')
      .values({ channel: row.channel, user_id: row.user_id, approved_by: by, created_at: now })
      .onConflict((oc) => oc.columns(['channel', 'user_id']).doNothing())
      .execute();
    return row;
  });
}

/** Delete pending codes that have expired. */
export async function pruneExpiredCodes(db: Db, now: number): Promise<void> {
  await db.deleteFrom('pairing_codes').where('status', '=', 'pending').where('expires_at', '<=', now).execute();
}

/** Approved codes whose user was not yet told they were let in. */
export async function unwelcomedCodes(db: Db): Promise<PairingCode[]> {
  return db
    .selectFrom('pairing_codes')
    .selectAll()
    .where('status', '=', 'approved')
    .where('welcomed_at', 'is', null)
    .execute();
}

/** Claim the welcome of a code; false when another process (or an earlier sweep) already did. */
export async function claimWelcome(db: Db, code: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('pairing_codes')
    .set({ welcomed_at: now })
    .where('code', '=', code)
    .where('welcomed_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
