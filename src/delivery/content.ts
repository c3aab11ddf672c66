/**
 * What a delivery shows, channel-neutral. Each platform's emitter turns one of these into its
 * messages; the core builds them once, here, from the rows they describe.
 */
import type { ToolFinishStatus } from '../core/events.js';
import { alwaysScopeText } from '../core/rules.js';
import type { Approval, Question } from '../store/schema.js';

/** Where an approval card stands. */
export type ApprovalState = 'pending' | 'approved' | 'denied' | 'awaiting_note' | 'expired' | 'cancelled';

/** Where a question card stands. */
export type QuestionState = 'pending' | 'answered' | 'superseded' | 'cancelled';

/** Model text (a reply, a notification): Markdown, with an optional title line. */
export interface TextContent {
  type: 'text';
  markdown: string;
  /** A visible first line (notifications), rendered bold after a bell. */
  title?: string;
  /** True while a reply is still streaming (the stored partial text). */
  partial?: boolean;
}

/** A line of plain text from the system (errors, notices); never parsed as Markdown. */
export interface NoticeContent {
  type: 'notice';
  level: 'error' | 'info';
  text: string;
}

/** An approval card, before and after its decision. */
export interface ApprovalContent {
  type: 'approval';
  id: string;
  label: string;
  preview: string;
  requester: string;
  /** What "always" would allow, in words (the tool, and the path for file tools); shown on the button. */
  alwaysCovers?: string;
  state: ApprovalState;
  scope: 'once' | 'session' | 'always' | null;
  by: string | null;
  note: string | null;
}

/** A question card, before and after its answer. */
export interface QuestionContent {
  type: 'question';
  id: string;
  question: string;
  answers: string[];
  state: QuestionState;
  answer: string | null;
  by: string | null;
}

/** A tool's status line. */
export interface ToolContent {
  type: 'tool';
  name: string;
  label: string;
  state: 'running' | ToolFinishStatus;
  summary: string;
}

/** A file a tool sends into the chat. */
export interface AttachmentContent {
  type: 'attachment';
  path: string;
  caption: string | null;
  kind: 'file' | 'photo' | 'voice';
}

/** Everything a delivery can show. */
export type DeliveryContent = TextContent | NoticeContent | ApprovalContent | QuestionContent | ToolContent | AttachmentContent;

/** The approval state shown for a stored approval status. */
export function approvalState(status: Approval['status']): ApprovalState {
  return status === 'rejected' ? 'denied' : status;
}

/** The card of an approval row as it stands. */
export function approvalContent(a: Approval, override: Partial<Pick<ApprovalContent, 'state' | 'scope' | 'by' | 'note'>> = {}): ApprovalContent {
  return {
    type: 'approval',
    id: a.id,
    label: a.label,
    preview: a.preview,
    requester: a.requester,
    alwaysCovers: alwaysScopeText(a.tool_name, a.target_path),
    state: override.state ?? approvalState(a.status),
    scope: override.scope !== undefined ? override.scope : a.scope,
    by: override.by !== undefined ? override.by : a.decided_by,
    note: override.note !== undefined ? override.note : a.note,
  };
}

/** The card of a question row as it stands. */
export function questionContent(q: Question, override: Partial<Pick<QuestionContent, 'state' | 'answer' | 'by'>> = {}): QuestionContent {
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
