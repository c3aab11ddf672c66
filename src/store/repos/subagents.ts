/**
 * Sub-agent rows: a child agent is a conversation whose row names its parent conversation and the
 * parent's `task`/`plan` call. Its state moves `queued` → `running` → `finished` by conditional
 * updates, so two processes or a restart cannot start or finish a child twice.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db.js';
import { prepared } from '../prepared.js';
import type { Conversation } from '../schema.js';

/** What a new child needs. */
export interface NewChild {
  parent: Conversation;
  callId: string;
  kind: 'task' | 'plan';
  label: string;
  prompt: string;
  tools: string[] | null;
}

/** The child started by a call, if any. */
export async function childOfCall(db: Db, callId: string): Promise<Conversation | undefined> {
  return db.selectFrom('conversations').selectAll().where('parent_call_id', '=', callId).executeTakeFirst();
}

/** Create the child of a call (idempotent: a second call returns the first child), state `queued`. */
export async function createChild(db: Db, child: NewChild): Promise<Conversation> {
  const existing = await childOfCall(db, child.callId);
  if (existing) return existing;
  const now = Date.now();
  await db
    .insertInto('conversations')
    .values({
      id: randomUUID(),
      channel: child.parent.channel,
      chat_key: child.parent.chat_key,
      // Unique per call, and never a platform thread id, so no channel resolves a message to it.
      thread_key: `sub:${child.callId}`,
      owner_id: child.parent.owner_id,
      model: child.parent.model,
      scratchpad: null,
      archived: 0,
      created_at: now,
      updated_at: now,
      parent_id: child.parent.id,
      parent_call_id: child.callId,
      depth: child.parent.depth + 1,
      agent_kind: child.kind,
      agent_label: child.label,
      agent_prompt: child.prompt,
      agent_tools: child.tools ? JSON.stringify(child.tools) : null,
      agent_state: 'queued',
      agent_result: null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const created = await childOfCall(db, child.callId);
  if (!created) throw new Error(`sub-agent for call ${child.callId} could not be created`);
  return created;
}

/** Children of a conversation, in the order of the calls that started them. */
export async function childrenOf(db: Db, parentId: string): Promise<Conversation[]> {
  return db
    .selectFrom('conversations')
    .innerJoin('tool_calls', 'tool_calls.id', 'conversations.parent_call_id')
    .selectAll('conversations')
    .where('conversations.parent_id', '=', parentId)
    .orderBy('tool_calls.message_id')
    .orderBy('tool_calls.position')
    .execute();
}

/** Move a child's state; false when it was not in `from` (someone else moved it). */
export async function moveAgentState(
  db: Db,
  id: string,
  from: Array<'queued' | 'running' | 'finished'>,
  to: 'queued' | 'running' | 'finished',
  result?: string | null,
): Promise<boolean> {
  const r = await db
    .updateTable('conversations')
    .set({ agent_state: to, updated_at: Date.now(), ...(result !== undefined ? { agent_result: result } : {}) })
    .where('id', '=', id)
    .where('agent_state', 'in', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Every descendant of a conversation (children, their children, ...). */
export async function descendantsOf(db: Db, id: string): Promise<Conversation[]> {
  const out: Conversation[] = [];
  let level = [id];
  while (level.length) {
    const rows = await db.selectFrom('conversations').selectAll().where('parent_id', 'in', level).execute();
    out.push(...rows);
    level = rows.map((r) => r.id);
  }
  return out;
}

/** The newest turn of a conversation. */
export async function latestTurn(db: Db, conversationId: string) {
  return db
    .selectFrom('turns')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** The text of the newest assistant message with text (a child's summary or plan). */
export async function finalReply(db: Db, conversationId: string): Promise<string | null> {
  const row = await db
    .selectFrom('messages')
    .select('content')
    .where('conversation_id', '=', conversationId)
    .where('role', '=', 'assistant')
    .where('content', 'is not', null)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row?.content ?? null;
}

/** Whether a conversation still has queued inbox items. */
export async function hasInbox(db: Db, conversationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('inbox')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The chat a conversation's rows belong to: itself, or a sub-agent's root conversation, with the
 * label of the sub-agent (null for a chat).
 */
/** A conversation's parent and label: set when it is created, never changed (so kept once read). */
type Lineage = { parent_id: string | null; agent_label: string | null };
const lineages = new Map<string, Lineage>();
/** Bounds the memo; past it, it starts over (ids are random UUIDs, so entries never go stale). */
const MAX_LINEAGES = 10_000;

const lineageQuery = prepared((db: Db, id: string) =>
  db.selectFrom('conversations').select(['parent_id', 'agent_label']).where('id', '=', id),
);

async function lineageOf(db: Db, id: string): Promise<Lineage | undefined> {
  const known = lineages.get(id);
  if (known) return known;
  const row = (await lineageQuery(db, id))[0];
  if (row) {
    if (lineages.size >= MAX_LINEAGES) lineages.clear();
    lineages.set(id, row);
  }
  return row;
}

export async function chatRootOf(db: Db, conversationId: string): Promise<{ id: string; label: string | null }> {
  let id = conversationId;
  let label: string | null = null;
  // Bounded by the deepest nesting allowed (a few levels); the cap only guards a corrupt loop.
  for (let level = 0; level < 16; level++) {
    const row = await lineageOf(db, id);
    if (!row?.parent_id) break;
    label ??= row.agent_label ?? 'sub-agent';
    id = row.parent_id;
  }
  return { id, label };
}
