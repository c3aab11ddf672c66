/**
 * Approvals, approval rules and questions: decisions are rows, never promises in memory. Rule
 * writes bump the `rules` change counter in the same transaction (processes hold rules in memory).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db.js';
import { withBump } from './versions.js';
import type { Approval, ApprovalRule, ApprovalScope, ApprovalStatus, Question, QuestionStatus } from '../schema.js';

export async function createApproval(
  db: Db,
  a: Pick<
    Approval,
    'conversation_id' | 'tool_call_id' | 'attempt' | 'tool_name' | 'label' | 'preview' | 'requester' | 'expires_at'
  > &
    Partial<Pick<Approval, 'target_path' | 'grant_args' | 'grant_version' | 'args_sha256'>>,
): Promise<Approval> {
  const row: Approval = {
    target_path: null,
    grant_args: null,
    grant_version: 1,
    args_sha256: null,
    ...a,
    id: randomUUID(),
    status: 'pending',
    scope: null,
    decided_by: null,
    note: null,
    card_ref: null,
    created_at: Date.now(),
    decided_at: null,
  };
  await db.insertInto('approvals').values(row).execute();
  return row;
}

export async function getApproval(db: Db, id: string): Promise<Approval | undefined> {
  return db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The approval asked for a call's current attempt. */
export async function approvalForCall(db: Db, toolCallId: string, attempt: number): Promise<Approval | undefined> {
  return db
    .selectFrom('approvals')
    .selectAll()
    .where('tool_call_id', '=', toolCallId)
    .where('attempt', '=', attempt)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Decide an approval if it is still in one of `from`. Returns false when another decision won.
 */
export async function decideApprovalRow(
  db: Db,
  id: string,
  from: ApprovalStatus[],
  to: ApprovalStatus,
  fields: { scope?: ApprovalScope | null; decided_by?: string | null; note?: string | null },
): Promise<boolean> {
  const r = await db
    .updateTable('approvals')
    .set({ status: to, decided_at: Date.now(), ...fields })
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Undecided approvals of a conversation (pending or waiting for a denial note). */
export async function openApprovals(db: Db, conversationId: string): Promise<Approval[]> {
  return db
    .selectFrom('approvals')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', ['pending', 'awaiting_note'])
    .orderBy('created_at')
    .execute();
}

/** Pending approvals past their deadline. */
export async function expiredApprovals(db: Db, now: number): Promise<Approval[]> {
  return db
    .selectFrom('approvals')
    .selectAll()
    .where('status', 'in', ['pending', 'awaiting_note'])
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
    .execute();
}

/**
 * Conversations whose waiting calls were decided by some process (this one or another):
 * the approval is final but the call still waits.
 */
export async function conversationsWithDecidedWaits(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('approvals')
    .innerJoin('tool_calls', (j) =>
      j.onRef('tool_calls.id', '=', 'approvals.tool_call_id').onRef('tool_calls.attempt', '=', 'approvals.attempt'),
    )
    .select('approvals.conversation_id')
    .where('tool_calls.status', '=', 'awaiting_approval')
    .where('approvals.status', 'not in', ['pending', 'awaiting_note'])
    .distinct()
    .execute();
  return rows.map((r) => r.conversation_id);
}

/**
 * Rules that apply in a conversation to a requester's turn: global ones, this conversation's
 * session grants, and grants made for that requester.
 */
export async function listRules(db: Db, conversationId: string, requester: string): Promise<ApprovalRule[]> {
  return db
    .selectFrom('approval_rules')
    .selectAll()
    .where((eb) => eb.or([eb('conversation_id', 'is', null), eb('conversation_id', '=', conversationId)]))
    .where((eb) => eb.or([eb('user_id', 'is', null), eb('user_id', '=', requester)]))
    .orderBy('priority', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Every stored rule (or only those granted for `userId`), oldest first. */
export async function allRules(db: Db, userId?: string): Promise<ApprovalRule[]> {
  let q = db.selectFrom('approval_rules').selectAll();
  if (userId !== undefined) q = q.where('user_id', '=', userId);
  return q.orderBy('id').execute();
}

export async function getRule(db: Db, id: number): Promise<ApprovalRule | undefined> {
  return db.selectFrom('approval_rules').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Delete a stored rule; false when there was none. */
export async function deleteRule(db: Db, id: number): Promise<boolean> {
  return withBump(
    db,
    'rules',
    async (trx) =>
      Number((await trx.deleteFrom('approval_rules').where('id', '=', id).executeTakeFirst()).numDeletedRows) > 0,
    (gone) => gone,
  );
}

export async function insertRule(
  db: Db,
  rule: Pick<ApprovalRule, 'tool_glob' | 'path_glob' | 'action' | 'priority' | 'conversation_id' | 'created_by'> &
    Partial<Pick<ApprovalRule, 'user_id' | 'args_exact' | 'grant_version'>>,
): Promise<void> {
  await withBump(db, 'rules', (trx) =>
    trx
      .insertInto('approval_rules')
      .values({ ...rule, created_at: Date.now() })
      .execute(),
  );
}

export async function createQuestion(
  db: Db,
  q: Pick<Question, 'conversation_id' | 'tool_call_id' | 'question'> & { suggested: string[]; waiter?: string },
): Promise<Question> {
  const row: Question = {
    id: randomUUID(),
    conversation_id: q.conversation_id,
    tool_call_id: q.tool_call_id,
    question: q.question,
    suggested_answers: JSON.stringify(q.suggested),
    status: 'pending',
    answer: null,
    answered_by: null,
    card_ref: null,
    created_at: Date.now(),
    answered_at: null,
    waiter: q.waiter ?? null,
  };
  await db.insertInto('questions').values(row).execute();
  return row;
}

export async function getQuestion(db: Db, id: string): Promise<Question | undefined> {
  return db.selectFrom('questions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function questionForCall(db: Db, toolCallId: string): Promise<Question | undefined> {
  return db
    .selectFrom('questions')
    .selectAll()
    .where('tool_call_id', '=', toolCallId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function pendingQuestions(db: Db, conversationId: string): Promise<Question[]> {
  return db
    .selectFrom('questions')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .execute();
}

/** Close a pending question; false when it was no longer pending. */
export async function closeQuestion(
  db: Db,
  id: string,
  status: Exclude<QuestionStatus, 'pending'>,
  answer: string | null,
  by: string | null,
): Promise<boolean> {
  const r = await db
    .updateTable('questions')
    .set({ status, answer, answered_by: by, answered_at: Date.now() })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * Chat keys of a channel's active conversations, other than `exceptConversationId`, with an
 * undecided approval or an open question (the terminal's `/status`: "pending elsewhere").
 */
export async function chatsWithPendingDecisions(
  db: Db,
  channel: string,
  exceptConversationId: string | null,
): Promise<string[]> {
  const withApprovals = db
    .selectFrom('approvals')
    .innerJoin('conversations', 'conversations.id', 'approvals.conversation_id')
    .select('conversations.chat_key')
    .where('conversations.channel', '=', channel)
    .where('conversations.archived', '=', 0)
    .where('approvals.status', 'in', ['pending', 'awaiting_note'])
    .where('conversations.id', '!=', exceptConversationId ?? '');
  const withQuestions = db
    .selectFrom('questions')
    .innerJoin('conversations', 'conversations.id', 'questions.conversation_id')
    .select('conversations.chat_key')
    .where('conversations.channel', '=', channel)
    .where('conversations.archived', '=', 0)
    .where('questions.status', '=', 'pending')
    .where('conversations.id', '!=', exceptConversationId ?? '');
  const rows = await withApprovals.union(withQuestions).execute();
  return [...new Set(rows.map((r) => r.chat_key))].sort();
}

/** Pending questions a running tool waits for, of every process (to expire those whose process is gone). */
export async function waitedQuestions(db: Db): Promise<Question[]> {
  return db
    .selectFrom('questions')
    .selectAll()
    .where('status', '=', 'pending')
    .where('waiter', 'is not', null)
    .execute();
}
