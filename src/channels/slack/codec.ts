/**
 * Slack's button payloads. The value carries the shared compact action text with its row id
 * (`delivery/action-codec.ts`), so a click after a restart still finds its row; the action id only
 * routes (the app listens on `sb_`) and keeps one actions block's buttons distinct. Cards posted
 * by earlier versions still decode: their action id named the choice and the value was the row id.
 */
import { actionFromJson, decodeAction as decodeCompact, encodeAction as encodeCompact } from '../../kit/index.js';
import type { Action, ApprovalChoice, JobOp } from '../../kit/index.js';

/** Prefix of every action id; the Bolt app routes on it. */
const ACTION_PREFIX = 'sb_';

/** Action id of a button drawn now: `sb_<kind>_<position in its actions block>`. */
const CURRENT_ID = /^sb_(approval|question|job|pairing)_(\d{1,2})$/;

/** Earlier approval buttons (value = approval id). */
const LEGACY_CHOICE: Record<string, ApprovalChoice> = {
  sb_approve_once: 'once',
  sb_approve_session: 'session',
  sb_approve_always: 'always',
  sb_deny: 'deny',
  sb_deny_no_note: 'no_note',
};
/** Earlier job buttons: `sb_job_<op>`, value = job id. */
const LEGACY_JOB = /^sb_job_(pause|resume|run|delete)$/;
/** Earlier pairing button: value = the pairing code. */
const LEGACY_PAIR = 'sb_pair';
/** Earlier suggested answers: `sb_answer_<index>`, value = `{"id":…,"a":…}`. */
const LEGACY_ANSWER = /^sb_answer_(\d{1,2})$/;

/**
 * The action id and value of a button at `position` in its actions block.
 * @throws Error when the action cannot be encoded (see `encodeAction` in delivery/action-codec.ts).
 */
export function encodeAction(action: Action, position: number): { action_id: string; value: string } {
  return { action_id: `${ACTION_PREFIX}${action.kind}_${position}`, value: encodeCompact(action) };
}

/** Decode a click; null for anything this app did not produce. */
export function decodeAction(actionId: string, value: string | undefined): Action | null {
  const current = CURRENT_ID.exec(actionId);
  if (current) {
    const action = decodeCompact(value);
    // The action id's kind must agree with the value's: a mismatch is not a button we drew.
    return action?.kind === current[1] ? action : null;
  }
  return decodeLegacy(actionId, value ?? '');
}

/** The payloads of cards posted before the value carried the compact text. */
function decodeLegacy(actionId: string, value: string): Action | null {
  const choice = Object.hasOwn(LEGACY_CHOICE, actionId) ? LEGACY_CHOICE[actionId] : undefined;
  if (choice) return actionFromJson({ kind: 'approval', id: value, choice });
  const job = LEGACY_JOB.exec(actionId);
  if (job) return actionFromJson({ kind: 'job', id: value, op: job[1] as JobOp });
  if (actionId === LEGACY_PAIR) return actionFromJson({ kind: 'pairing', code: value });
  const answer = LEGACY_ANSWER.exec(actionId);
  if (!answer) return null;
  let parsed: { id?: unknown; a?: unknown };
  try {
    parsed = JSON.parse(value) as { id?: unknown; a?: unknown };
  } catch {
    return null;
  }
  // The answer's text (`a`) is not needed: the router looks the answer up by its index on the row.
  if (typeof parsed !== 'object' || parsed === null || typeof parsed.a !== 'string') return null;
  return actionFromJson({ kind: 'question', id: parsed.id, index: Number(answer[1]) });
}
