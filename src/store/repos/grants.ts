/** Lazy tool groups granted per conversation (`activate_tools`). */
import type { Db } from '../db.js';

/** Groups granted in a conversation. */
export async function grantedGroups(db: Db, conversationId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('tool_grants').select('tool_group').where('conversation_id', '=', conversationId).execute();
  return new Set(rows.map((r) => r.tool_group));
}

/** Grant groups (idempotent). */
export async function grantGroups(db: Db, conversationId: string, groups: string[], by: string | null): Promise<void> {
  const now = Date.now();
  for (const group of groups) {
    await db
      .insertInto('tool_grants')
      .values({ conversation_id: conversationId, tool_group: group, granted_by: by, granted_at: now })
      .onConflict((oc) => oc.columns(['conversation_id', 'tool_group']).doNothing())
      .execute();
  }
}
