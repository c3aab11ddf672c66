/** Turns and their tool calls. Status changes are conditional so a call can never run twice. */
import { randomUUID } from 'node:crypto';
import { type ExpressionBuilder, sql } from 'kysely';
import type { Db } from '../db.js';
import type { Database, ToolCallRow, ToolCallStatus, Turn, TurnStatus } from '../schema.js';
import { literalList } from '../literal-list.js';
import { prepared, preparedWrite } from '../prepared.js';

/** Statuses of a turn not yet finished, as literals (the partial index `turns_active` names them). */
const UNFINISHED = literalList<TurnStatus>(['running', 'waiting']);

/** A turn that has just started: running, no rounds yet. */
function runningTurn(id: string, conversationId: string, requesterId: string, startedAt: number): Turn {
  return {
    id,
    conversation_id: conversationId,
    requester_id: requesterId,
    status: 'running',
    rounds: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    error: null,
    started_at: startedAt,
    finished_at: null,
  };
}

const insertTurnQuery = preparedWrite(
  (db: Db, id: string, conversationId: string, requesterId: string, startedAt: number) =>
    db.insertInto('turns').values(runningTurn(id, conversationId, requesterId, startedAt)),
);

export async function createTurn(db: Db, conversationId: string, requesterId: string): Promise<Turn> {
  const turn = runningTurn(randomUUID(), conversationId, requesterId, Date.now());
  await insertTurnQuery(db, turn.id, conversationId, requesterId, turn.started_at);
  return turn;
}

/** The unfinished turn of a conversation (running or waiting), if any. */
const activeTurnQuery = prepared((db: Db, conversationId: string) =>
  db
    .selectFrom('turns')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', UNFINISHED)
    .orderBy('started_at', 'desc')
    // A literal: with `LIMIT ?` SQLite plans for any count and the look-up costs five times more.
    .limit(sql.lit(1)),
);

export async function activeTurn(db: Db, conversationId: string): Promise<Turn | undefined> {
  return (await activeTurnQuery(db, conversationId))[0];
}

const getTurnQuery = prepared((db: Db, id: string) => db.selectFrom('turns').selectAll().where('id', '=', id));

export async function getTurn(db: Db, id: string): Promise<Turn | undefined> {
  return (await getTurnQuery(db, id))[0];
}

/** Conversations with an unfinished turn (recovery). */
export async function conversationsWithActiveTurns(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('turns')
    .select('conversation_id')
    .where('status', 'in', UNFINISHED)
    .distinct()
    .execute();
  return rows.map((r) => r.conversation_id);
}

export async function setTurnStatus(db: Db, id: string, status: TurnStatus): Promise<void> {
  await db.updateTable('turns').set({ status }).where('id', '=', id).where('status', 'in', UNFINISHED).execute();
}

/** Finish a turn; a no-op when it already finished (e.g. cancelled meanwhile). Returns whether it changed. */
export async function finishTurn(
  db: Db,
  id: string,
  status: 'done' | 'failed' | 'cancelled',
  error: string | null = null,
): Promise<boolean> {
  const r = await finishTurnQuery(db, id, status, error, Date.now());
  return Number(r.numAffectedRows ?? 0n) > 0;
}

const finishTurnQuery = preparedWrite(
  (db: Db, id: string, status: 'done' | 'failed' | 'cancelled', error: string | null, finishedAt: number) =>
    db
      .updateTable('turns')
      .set({ status, error, finished_at: finishedAt })
      .where('id', '=', id)
      .where('status', 'in', UNFINISHED),
);

/**
 * Count a model round and add its token usage, unless the turn has ended meanwhile (stopped from a
 * chat or another process). Returns whether it counted: the check and the write are one statement.
 */
export async function addRound(db: Db, id: string, promptTokens: number, completionTokens: number): Promise<boolean> {
  const r = await addRoundQuery(db, id, promptTokens, completionTokens);
  return Number(r.numAffectedRows ?? 0n) > 0;
}

const addRoundQuery = preparedWrite((db: Db, id: string, promptTokens: number, completionTokens: number) =>
  db
    .updateTable('turns')
    .set((eb) => ({
      rounds: eb('rounds', '+', 1),
      prompt_tokens: eb('prompt_tokens', '+', promptTokens),
      completion_tokens: eb('completion_tokens', '+', completionTokens),
    }))
    .where('id', '=', id)
    .where('status', 'in', UNFINISHED),
);

/** Nothing is queued in the inbox of the turn's conversation (`turns` in scope). */
function nothingQueued(eb: ExpressionBuilder<Database, 'turns'>) {
  return eb.not(
    eb.exists(
      eb
        .selectFrom('inbox')
        .select('inbox.id')
        .whereRef('inbox.conversation_id', '=', 'turns.conversation_id')
        .where('inbox.consumed_at', 'is', null),
    ),
  );
}

const finalRoundQuery = prepared(
  (db: Db, id: string, promptTokens: number, completionTokens: number, finishedAt: number) =>
    db
      .updateTable('turns')
      .set((eb) => ({
        rounds: eb('rounds', '+', 1),
        prompt_tokens: eb('prompt_tokens', '+', promptTokens),
        completion_tokens: eb('completion_tokens', '+', completionTokens),
        status: eb.case().when(nothingQueued(eb)).then(sql.lit<TurnStatus>('done')).else(eb.ref('status')).end(),
        error: eb.case().when(nothingQueued(eb)).then(null).else(eb.ref('error')).end(),
        finished_at: eb.case().when(nothingQueued(eb)).then(finishedAt).else(eb.ref('finished_at')).end(),
      }))
      .where('id', '=', id)
      .where('status', 'in', UNFINISHED)
      .returning('status'),
);

/**
 * {@link addRound} for a round that made no tool call, ending the turn as done in the same
 * statement unless a message is queued for its conversation: one statement where a final answer
 * took two. `counted` is false (nothing written) when the turn had ended meanwhile.
 */
export async function addFinalRound(
  db: Db,
  id: string,
  promptTokens: number,
  completionTokens: number,
): Promise<{ counted: boolean; finished: boolean }> {
  const row = (await finalRoundQuery(db, id, promptTokens, completionTokens, Date.now()))[0];
  return { counted: row !== undefined, finished: row?.status === 'done' };
}

export async function insertToolCalls(
  db: Db,
  rows: Array<Pick<ToolCallRow, 'id' | 'conversation_id' | 'turn_id' | 'message_id' | 'position' | 'name' | 'args'>>,
): Promise<void> {
  if (rows.length === 0) return;
  const now = Date.now();
  await db
    .insertInto('tool_calls')
    .values(
      rows.map((r) => ({
        ...r,
        status: 'pending' as const,
        result: null,
        summary: null,
        created_at: now,
        started_at: null,
        finished_at: null,
      })),
    )
    .execute();
}

/** Tool calls of one assistant message, in the model's order. */
export async function toolCallsOfMessage(db: Db, messageId: number): Promise<ToolCallRow[]> {
  return db.selectFrom('tool_calls').selectAll().where('message_id', '=', messageId).orderBy('position').execute();
}

export async function getToolCall(db: Db, id: string): Promise<ToolCallRow | undefined> {
  return db.selectFrom('tool_calls').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Move a call from one of `from` to `to`, optionally setting result fields.
 * Returns false when the call was not in `from` (someone else moved it first).
 */
export async function transitionToolCall(
  db: Db,
  id: string,
  from: ToolCallStatus[],
  to: ToolCallStatus,
  fields: {
    result?: string | null;
    summary?: string | null;
    started_at?: number;
    finished_at?: number;
    attempt?: number;
  } = {},
): Promise<boolean> {
  const r = await db
    .updateTable('tool_calls')
    .set({ status: to, ...fields })
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Unfinished calls of a conversation (pending, awaiting approval or running). */
export async function openToolCalls(db: Db, conversationId: string): Promise<ToolCallRow[]> {
  return db
    .selectFrom('tool_calls')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', ['pending', 'awaiting_approval', 'running'])
    .orderBy('created_at')
    .execute();
}

/**
 * Conversations whose work no runner may be doing: a turn marked running, or queued messages with
 * no turn waiting for a person. Their lease says whether an instance is on them; the sweep claims
 * the rest (after a crash of the instance that ran them).
 */
export async function conversationsNeedingRunner(db: Db): Promise<string[]> {
  const running = await db
    .selectFrom('turns')
    .select('conversation_id')
    .where('status', '=', 'running')
    .distinct()
    .execute();
  const queued = await db
    .selectFrom('inbox as i')
    .select('i.conversation_id')
    .where('i.consumed_at', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('turns as w')
            .select('w.id')
            .whereRef('w.conversation_id', '=', 'i.conversation_id')
            .where('w.status', '=', 'waiting'),
        ),
      ),
    )
    .distinct()
    .execute();
  return [...new Set([...running, ...queued].map((r) => r.conversation_id))];
}
