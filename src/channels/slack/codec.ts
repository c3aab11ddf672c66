/**
 * Slack's button payloads: a neutral action ↔ an action id and a value. The value carries the row
 * id, so a click after a restart still finds its approval, question or job.
 */
import type { Action, ApprovalChoice } from '../../contract/actions.js';
import type { JobOp } from '../../contract/core.js';

/** Action ids of the card buttons; the Bolt app routes on the `sb_` prefix. */
export const ACTION = {
  approveOnce: 'sb_approve_once',
  approveSession: 'sb_approve_session',
  approveAlways: 'sb_approve_always',
  deny: 'sb_deny',
  denyNoNote: 'sb_deny_no_note',
  answer: 'sb_answer',
} as const;

/** Action id prefix of job buttons (`sb_job_<op>`, value = job id). */
export const JOB_ACTION_PREFIX = 'sb_job_';
const PAIR_ACTION = 'sb_pair';

const CHOICE_ACTION: Record<ApprovalChoice, string> = {
  once: ACTION.approveOnce,
  session: ACTION.approveSession,
  always: ACTION.approveAlways,
  deny: ACTION.deny,
  no_note: ACTION.denyNoNote,
};
const ACTION_CHOICE = Object.fromEntries(Object.entries(CHOICE_ACTION).map(([k, v]) => [v, k])) as Record<string, ApprovalChoice>;
const JOB_OPS: readonly JobOp[] = ['pause', 'resume', 'run', 'delete'];

/** The action id and value of a button. */
export function encodeAction(action: Action): { action_id: string; value: string } {
  switch (action.kind) {
    case 'approval':
      return { action_id: CHOICE_ACTION[action.choice], value: action.id };
    case 'question':
      return { action_id: `${ACTION.answer}_${action.index}`, value: JSON.stringify({ id: action.id, a: (action.text ?? '').slice(0, 1900) }) };
    case 'pairing':
      return { action_id: PAIR_ACTION, value: action.code };
    case 'job':
      return { action_id: `${JOB_ACTION_PREFIX}${action.op}`, value: action.id };
  }
}

/** Decode a click; null for anything this app did not produce. */
export function decodeAction(actionId: string, value: string | undefined): Action | null {
  const v = value ?? '';
  const choice = ACTION_CHOICE[actionId];
  if (choice) return v ? { kind: 'approval', id: v, choice } : null;
  if (actionId.startsWith(JOB_ACTION_PREFIX)) {
    const op = actionId.slice(JOB_ACTION_PREFIX.length) as JobOp;
    return JOB_OPS.includes(op) && v ? { kind: 'job', id: v, op } : null;
  }
  if (actionId === PAIR_ACTION) return v ? { kind: 'pairing', code: v } : null;
  const answer = new RegExp(`^${ACTION.answer}_(\\d{1,2})$`).exec(actionId);
  if (answer) {
    try {
      const parsed = JSON.parse(v) as { id?: unknown; a?: unknown };
      if (typeof parsed.id === 'string' && parsed.id && typeof parsed.a === 'string') return { kind: 'question', id: parsed.id, index: Number(answer[1]), text: parsed.a };
    } catch {
      return null;
    }
  }
  return null;
}
