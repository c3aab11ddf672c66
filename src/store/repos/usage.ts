/** Token usage per model request (`model_usage`): written with the round, summed for `/usage` and the daily limit. */
import type { Db } from '../db.js';
import type { Insertable } from 'kysely';
import type { ModelUsageTable } from '../schema.js';
import { preparedWrite } from '../prepared.js';

const insertUsageQuery = preparedWrite(
  (
    db: Db,
    conversationId: string,
    turnId: string | null,
    requesterId: string,
    model: string,
    kind: ModelUsageTable['kind'],
    promptTokens: number,
    completionTokens: number,
    createdAt: number,
  ) =>
    db.insertInto('model_usage').values({
      conversation_id: conversationId,
      turn_id: turnId,
      requester_id: requesterId,
      model,
      kind,
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      created_at: createdAt,
    }),
);

/**
 * Record one request's usage (inside the round's transaction when there is one). Written with
 * every model round, so the insert is compiled once ({@link preparedWrite}), not per call.
 */
export async function recordUsage(
  db: Db,
  row: Omit<Insertable<ModelUsageTable>, 'created_at'> & { created_at?: number },
): Promise<void> {
  await insertUsageQuery(
    db,
    row.conversation_id,
    row.turn_id ?? null,
    row.requester_id,
    row.model,
    row.kind,
    row.prompt_tokens,
    row.completion_tokens,
    row.created_at ?? Date.now(),
  );
}

/** Tokens (prompt + completion) a requester used since `since` (epoch ms). */
export async function tokensSince(
  db: Db,
  requesterId: string,
  since: number,
): Promise<{ prompt: number; completion: number }> {
  const row = await db
    .selectFrom('model_usage')
    .select((eb) => [
      eb.fn.sum<number | string | null>('prompt_tokens').as('prompt'),
      eb.fn.sum<number | string | null>('completion_tokens').as('completion'),
    ])
    .where('requester_id', '=', requesterId)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return { prompt: Number(row?.prompt ?? 0), completion: Number(row?.completion ?? 0) };
}
