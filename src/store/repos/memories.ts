/**
 * Saved memories. Each belongs to a person (`owner` is their principal, `telegram:42`), or to
 * everyone: the shared memory (`owner` {@link SHARED_MEMORY}), written by admins only (the tools
 * decide who may). Keys are unique per owner. Every write bumps the `memories` change counter in
 * the same transaction, so processes holding lists in memory see it at their next turn step.
 * Full-text recall is in `search.ts`.
 */
import type { Db } from '../db.js';
import type { Memory } from './search.js';
import { withBump } from './versions.js';

/** The owner of the shared memory (every prompt shows it, labelled as shared). */
export const SHARED_MEMORY = '';

/** How a save went: a new key, an overwritten one, or refused because `max` keys exist. */
export type SaveOutcome = 'saved' | 'replaced' | 'full';

/**
 * Save (or overwrite) a memory of `owner`, refusing a new key once `owner` has `max` memories.
 * One transaction, so two saves at once cannot both take the last free place.
 */
export async function saveMemory(
  db: Db,
  owner: string,
  key: string,
  value: string,
  by: string | null,
  max = Number.POSITIVE_INFINITY,
): Promise<SaveOutcome> {
  return withBump(
    db,
    'memories',
    async (trx): Promise<SaveOutcome> => {
      const existed = await trx
        .selectFrom('memories')
        .select('id')
        .where('owner', '=', owner)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!existed && Number.isFinite(max)) {
        const count = await trx
          .selectFrom('memories')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('owner', '=', owner)
          .executeTakeFirstOrThrow();
        if (Number(count.n) >= max) return 'full';
      }
      const now = Date.now();
      await trx
        .insertInto('memories')
        .values({ owner, key, value, created_by: by, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['owner', 'key']).doUpdateSet({ value, updated_at: now }))
        .execute();
      return existed ? 'replaced' : 'saved';
    },
    (outcome) => outcome !== 'full',
  );
}

/** Delete a memory of `owner`; false when there was none. */
export async function deleteMemory(db: Db, owner: string, key: string): Promise<boolean> {
  return withBump(
    db,
    'memories',
    async (trx) =>
      Number(
        (await trx.deleteFrom('memories').where('owner', '=', owner).where('key', '=', key).executeTakeFirst())
          .numDeletedRows,
      ) > 0,
    (gone) => gone,
  );
}

/** The memories of `owner`, most recently updated first. */
export async function listMemories(db: Db, owner: string, limit: number): Promise<Memory[]> {
  return db
    .selectFrom('memories')
    .select(['owner', 'key', 'value', 'updated_at'])
    .where('owner', '=', owner)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
