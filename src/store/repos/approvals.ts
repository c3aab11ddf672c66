/** Approvals, approval rules and questions: decisions are rows, never promises in memory. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db.js';
import type { Approval, ApprovalRule, ApprovalScope, ApprovalStatus, Question, QuestionStatus } from '../schema.js';

export async function createApproval(
  db: Db,
  a: Pick<Approval, 'conversation_id' | 'tool_call_id' | 'attempt' | 'tool_name' | 'label' | 'preview' | 'requester' | 'expires_at'>,
): Promise<Approval> {
  const row: Approval = {
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


/** Rules that apply in a conversation: global ones and this conversation's session grants. */
export async function listRules(db: Db, conversationId: string): Promise<ApprovalRule[]> {
  return db
    .selectFrom('approval_rules')
    .selectAll()
    .where((eb) => eb.or([eb('conversation_id', 'is', null), eb('conversation_id', '=', conversationId)]))
    .orderBy('priority', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function insertRule(
  db: Db,
  rule: Pick<ApprovalRule, 'tool_glob' | 'path_glob' | 'action' | 'priority' | 'conversation_id' | 'created_by'>,
): Promise<void> {
  await db
    .insertInto('approval_rules')
    .values({ ...rule, created_at: Date.now() })
    .execute();
}

export async function createQuestion(
  db: Db,
  q: Pick<Question, 'conversation_id' | 'tool_call_id' | 'question'> & { suggested: string[] },
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

