/**
 * The inbound journal: platform updates fetched but not yet handled, one row each, so a crash
 * between "the platform considers it delivered" and "handled" loses nothing (replayed at start).
 */
import type { JournaledUpdate } from '../schema.js';
import type { Db } from '../db.js';

export type { JournaledUpdate };

/** Record fetched updates (one transaction; an update already recorded is left as it is). */
export async function journalUpdates(db: Db, source: string, updates: JournaledUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const now = Date.now();
  await db
    .insertInto('inbound_journal')
    .values(updates.map((u) => ({ source, update_id: u.id, payload: u.payload, created_at: now })))
    .onConflict((oc) => oc.columns(['source', 'update_id']).doNothing())
    .execute();
}

/** Drop handled updates (one statement for the whole batch). */
export async function forgetUpdates(db: Db, source: string, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('inbound_journal').where('source', '=', source).where('update_id', 'in', ids).execute();
}

/** Updates still journaled for a source, oldest first. */
export async function journaledUpdates(db: Db, source: string): Promise<JournaledUpdate[]> {
  const rows = await db
    .selectFrom('inbound_journal')
    .select(['update_id', 'payload'])
    .where('source', '=', source)
    .orderBy('update_id')
    .execute();
  return rows.map((r) => ({ id: r.update_id, payload: r.payload }));
}
