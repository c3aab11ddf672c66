/**
 * The JSONL protocol of `switchboard chat --jsonl` (CONTRACT.md): input lines validated with zod,
 * and the mapping from core events to output lines.
 */
import { z } from 'zod';
import type { SubmitResult, CoreEvent, ToolFinishStatus, TurnOutcome } from '../../kit/index.js';

/** One input line. Unknown fields are ignored. */
export const inputLine = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message'), text: z.string().min(1) }),
  z.object({
    type: z.literal('approve'),
    id: z.string().min(1),
    scope: z.enum(['once', 'session', 'always']).default('once'),
  }),
  z.object({ type: z.literal('deny'), id: z.string().min(1), note: z.string().optional() }),
  z.object({ type: z.literal('answer'), id: z.string().min(1), text: z.string().min(1) }),
  z.object({ type: z.literal('stop') }),
  /** A chat command of the core's table (`status`, `model`, `rules`, …); answered by a `command` line. */
  z.object({
    type: z.literal('command'),
    name: z.string().regex(/^\/?[A-Za-z0-9_]{1,32}$/),
    args: z.string().default(''),
  }),
]);

/** A decoded input line. */
export type InputLine = z.infer<typeof inputLine>;

/** Decode one line, or explain why it is not a valid input line. */
export function parseInputLine(line: string): { ok: true; value: InputLine } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, error: 'input is not JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, error: 'input must be a JSON object' };
  const type = (raw as { type?: unknown }).type;
  if (!['message', 'approve', 'deny', 'answer', 'stop', 'command'].includes(String(type))) {
    return { ok: false, error: `unknown input type ${JSON.stringify(type ?? null)}` };
  }
  const r = inputLine.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    return {
      ok: false,
      error: `invalid ${String(type)}: ${issue?.path.join('.') || 'line'}: ${issue?.message ?? 'invalid'}`,
    };
  }
  return { ok: true, value: r.data };
}

/**
 * What a terminal prints for an event: the JSONL protocol's output line. The terminal chat prints
 * the same lines as text (`console/render.ts`), so both terminals show one event stream.
 */
export type PrintedLine =
  | { type: 'delta'; text: string }
  | { type: 'reply'; text: string }
  | { type: 'tool_started'; call_id: string; name: string; label: string }
  | { type: 'tool_output'; call_id: string; text: string }
  | { type: 'tool_finished'; call_id: string; name: string; status: ToolFinishStatus; summary: string }
  | {
      type: 'approval_requested';
      id: string;
      call_id: string;
      tool: string;
      label: string;
      preview: string;
      always: string;
    }
  | {
      type: 'approval_resolved';
      id: string;
      decision: ApprovalDecision;
      scope: EventOf<'approval_resolved'>['scope'];
      by: EventOf<'approval_resolved'>['by'];
    }
  | { type: 'question'; id: string; question: string; suggested_answers: string[] }
  | {
      type: 'question_resolved';
      id: string;
      status: QuestionResolution;
      answer: EventOf<'question_resolved'>['answer'];
    }
  | { type: 'notification'; text: string; source: string; title?: string }
  | { type: 'attachment'; path: string; caption: string | null | undefined }
  | { type: 'error'; message: string }
  | { type: 'turn_done'; status: TurnOutcome };

type EventOf<T extends CoreEvent['type']> = Extract<CoreEvent, { type: T }>;
type ApprovalDecision = EventOf<'approval_resolved'>['decision'];
type QuestionResolution = EventOf<'question_resolved'>['status'];

/** The one printer of both terminals: the line an event shows as, or null for events not shown. */
export function eventToLine(event: CoreEvent): PrintedLine | null {
  switch (event.type) {
    case 'delta':
      return { type: 'delta', text: event.text };
    case 'reply':
      return { type: 'reply', text: event.text };
    case 'tool_started':
      return { type: 'tool_started', call_id: event.callId, name: event.name, label: event.label };
    case 'tool_output':
      return { type: 'tool_output', call_id: event.callId, text: event.text };
    case 'tool_finished':
      return {
        type: 'tool_finished',
        call_id: event.callId,
        name: event.name,
        status: event.status,
        summary: event.summary,
      };
    case 'approval_requested':
      return {
        type: 'approval_requested',
        id: event.id,
        call_id: event.callId,
        tool: event.tool,
        label: event.label,
        preview: event.preview,
        always: event.alwaysCovers ?? event.tool,
      };
    case 'approval_resolved':
      return { type: 'approval_resolved', id: event.id, decision: event.decision, scope: event.scope, by: event.by };
    case 'question':
      return { type: 'question', id: event.id, question: event.question, suggested_answers: event.suggestedAnswers };
    case 'question_resolved':
      return { type: 'question_resolved', id: event.id, status: event.status, answer: event.answer };
    case 'notification':
      return {
        type: 'notification',
        text: event.text,
        source: event.source,
        ...(event.title ? { title: event.title } : {}),
      };
    case 'attachment':
      return { type: 'attachment', path: event.path, caption: event.caption };
    case 'error':
      return { type: 'error', message: event.message };
    case 'turn_done':
      return { type: 'turn_done', status: event.status };
    case 'turn_started':
      return null;
  }
}

/** Human text for a refused decision. */
export function refusalText(reason: string): string {
  switch (reason) {
    case 'unknown':
      return 'no such approval or question';
    case 'not_allowed':
      return 'you may not decide this';
    case 'already_decided':
      return 'already decided';
    case 'expired':
      return 'expired';
    default:
      return reason;
  }
}

/**
 * Why a submitted message will get no turn, or null when its outcome shows up as events
 * (`queued` ends in `turn_done`, an answer or a note in `question_resolved` / `approval_resolved`).
 */
export function submitRefusal(result: SubmitResult | null): string | null {
  // Not taken (nothing to read): nothing will come of it.
  if (!result) return 'message dropped: nothing to read';
  switch (result.status) {
    case 'queued':
    case 'answered_question':
    case 'note_recorded':
      return null;
    case 'duplicate':
      return 'message dropped: already received';
    case 'pairing_required':
      return `message dropped: not paired (code ${result.code})`;
    case 'rate_limited':
      return 'message dropped: too many messages this minute';
  }
}
