/** Token usage per model request (`model_usage`): written with the round, summed for `/usage` and the daily limit. */
import type { Db } from '../db.js';
import type { Insertable } from 'kysely';
import type { ModelUsageTable } from '../schema.js';

/** Record one request's usage (inside the round's transaction when there is one). */
export async function recordUsage(db: Db, row: Omit<Insertable<ModelUsageTable>, 'created_at'> & { created_at?: number }): Promise<void> {
  await db
    .insertInto('model_usage')
    .values({ ...row, created_at: row.created_at ?? Date.now() })
    .execute();
}

/** Tokens (prompt + completion) a requester used since `since` (epoch ms). */
export async function tokensSince(db: Db, requesterId: string, since: number): Promise<{ prompt: number; completion: number }> {
  const row = await db
    .selectFrom('model_usage')
    .select((eb) => [eb.fn.sum<number | string | null>('prompt_tokens').as('prompt'), eb.fn.sum<number | string | null>('completion_tokens').as('completion')])
    .where('requester_id', '=', requesterId)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return { prompt: Number(row?.prompt ?? 0), completion: Number(row?.completion ?? 0) };
}
