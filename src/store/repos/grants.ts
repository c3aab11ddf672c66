/**
 * Lazy tool groups granted per conversation (`activate_tools`). Grants bump the `grants` change
 * counter in the same transaction (processes hold granted groups in memory).
 */
import type { Db } from '../db.js';
import { withBump } from './versions.js';

/** Groups granted in a conversation. */
export async function grantedGroups(db: Db, conversationId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('tool_grants')
    .select('tool_group')
    .where('conversation_id', '=', conversationId)
    .execute();
  return new Set(rows.map((r) => r.tool_group));
}

/** Grant groups (idempotent). */
export async function grantGroups(db: Db, conversationId: string, groups: string[], by: string | null): Promise<void> {
  const now = Date.now();
  await withBump(db, 'grants', async (trx) => {
    for (const group of groups) {
      await trx
        .insertInto('tool_grants')
        .values({ conversation_id: conversationId, tool_group: group, granted_by: by, granted_at: now })
        .onConflict((oc) => oc.columns(['conversation_id', 'tool_group']).doNothing())
        .execute();
    }
  });
}
