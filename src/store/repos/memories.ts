/**
 * Saved memories (global to this switchboard). Every write bumps the `memories` change counter in
 * the same transaction, so processes holding the list in memory see it at their next turn step.
 * Full-text recall is in `search.ts`.
 */
import type { Db } from '../db.js';
import type { Memory } from './search.js';
import { withBump } from './versions.js';

/** How a save went: a new key, an overwritten one, or refused because `max` keys exist. */
export type SaveOutcome = 'saved' | 'replaced' | 'full';

/**
 * Save (or overwrite) a memory, refusing a new key once `max` memories exist. One transaction,
 * so two saves at once cannot both take the last free place.
 */
export async function saveMemory(
  db: Db,
  key: string,
  value: string,
  by: string | null,
  max = Number.POSITIVE_INFINITY,
): Promise<SaveOutcome> {
  return withBump(
    db,
    'memories',
    async (trx): Promise<SaveOutcome> => {
      const existed = await trx.selectFrom('memories').select('id').where('key', '=', key).executeTakeFirst();
      if (!existed && Number.isFinite(max)) {
        const count = await trx
          .selectFrom('memories')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        if (Number(count.n) >= max) return 'full';
      }
      const now = Date.now();
      await trx
        .insertInto('memories')
        .values({ key, value, created_by: by, created_at: now, updated_at: now })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
        .execute();
      return existed ? 'replaced' : 'saved';
    },
    (outcome) => outcome !== 'full',
  );
}

/** Delete a memory; false when there was none. */
export async function deleteMemory(db: Db, key: string): Promise<boolean> {
  return withBump(
    db,
    'memories',
    async (trx) =>
      Number((await trx.deleteFrom('memories').where('key', '=', key).executeTakeFirst()).numDeletedRows) > 0,
    (gone) => gone,
  );
}

/** Memories, most recently updated first. */
export async function listMemories(db: Db, limit: number): Promise<Memory[]> {
  return db
    .selectFrom('memories')
    .select(['key', 'value', 'updated_at'])
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
