/** The audit trail: one row per notable step of a tool call (started, finished, tool-specific events). */
import type { Db } from '../db.js';

/** Append one audit row; `data` is stored as JSON. */
export async function recordAudit(
  db: Db,
  conversationId: string,
  toolCallId: string | null,
  kind: string,
  data: Record<string, unknown>,
): Promise<void> {
  await db
    .insertInto('audit')
    .values({
      conversation_id: conversationId,
      tool_call_id: toolCallId,
      kind,
      data: JSON.stringify(data),
      created_at: Date.now(),
    })
    .execute();
}
