/**
 * Delivery content built from the rows it describes (the kinds are in `contract/content.ts`):
 * the core builds a card's content once, here, and every platform's emitter shows it.
 */
import type { ApprovalContent, DeliveryContent, QuestionContent } from '../contract/content.js';
import { alwaysScopeText } from './grant-words.js';
import type { Approval, Question } from '../store/schema.js';

/**
 * The approval state shown for a stored approval status: the one place where a row's `rejected`
 * becomes the `denied` that content, events and cards speak of (a tool call stays `rejected`).
 */
export function approvalState<S extends Approval['status']>(status: S): S extends 'rejected' ? 'denied' : S {
  return (status === 'rejected' ? 'denied' : status) as S extends 'rejected' ? 'denied' : S;
}

/** The card of an approval row as it stands. */
export function approvalContent(
  a: Approval,
  override: Partial<Pick<ApprovalContent, 'state' | 'scope' | 'by' | 'note'>> = {},
): ApprovalContent {
  return {
    type: 'approval',
    id: a.id,
    label: a.label,
    preview: a.preview,
    requester: a.requester,
    alwaysCovers: alwaysScopeText(a.tool_name, a.target_path, a.grant_args),
    state: override.state ?? approvalState(a.status),
    scope: override.scope !== undefined ? override.scope : a.scope,
    by: override.by !== undefined ? override.by : a.decided_by,
    note: override.note !== undefined ? override.note : a.note,
  };
}

/** The card of a question row as it stands. */
export function questionContent(
  q: Question,
  override: Partial<Pick<QuestionContent, 'state' | 'answer' | 'by'>> = {},
): QuestionContent {
  let answers: string[] = [];
  try {
    const parsed = JSON.parse(q.suggested_answers) as unknown;
    if (Array.isArray(parsed)) answers = parsed.filter((a): a is string => typeof a === 'string');
  } catch {
    answers = [];
  }
  return {
    type: 'question',
    id: q.id,
    question: q.question,
    answers,
    state: override.state ?? q.status,
    answer: override.answer !== undefined ? override.answer : q.answer,
    by: override.by !== undefined ? override.by : q.answered_by,
  };
}

/** Parse a stored content column; null when absent or unreadable. */
export function parseContent(raw: string | null): DeliveryContent | null {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as DeliveryContent;
  } catch {
    return null;
  }
}
