/**
 * `callback_data` of inline buttons: at most 64 bytes, carrying the row id and the choice, so a
 * button keeps working after a restart (the database row is the state, not process memory).
 *
 * Formats: `a:<approvalId>:<choice>` (approval), `q:<questionId>:<index>` (suggested answer),
 * `p:<code>` (admin approves a pairing code), `j:<jobId>:<op>` (a `/jobs` button).
 */

import type { Action, ApprovalChoice } from '../../contract/actions.js';
import type { JobOp } from '../../contract/core.js';

export type { ApprovalChoice };

/** Telegram's limit on `callback_data`, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;


const CHOICE_CODE: Record<ApprovalChoice, string> = { once: 'y', deny: 'n', session: 's', always: 'A', no_note: 'x' };
const CODE_CHOICE = Object.fromEntries(Object.entries(CHOICE_CODE).map(([k, v]) => [v, k])) as Record<string, ApprovalChoice>;

const JOB_OP_CODE: Record<JobOp, string> = { pause: 'p', resume: 'r', run: 'n', delete: 'd' };
const CODE_JOB_OP = Object.fromEntries(Object.entries(JOB_OP_CODE).map(([k, v]) => [v, k])) as Record<string, JobOp>;

/** A decoded button: a neutral action. */
export type CallbackAction = Action;

function checked(data: string): string {
  const bytes = Buffer.byteLength(data, 'utf8');
  if (bytes > CALLBACK_DATA_LIMIT) {
    throw new Error(`callback_data is ${bytes} bytes, over Telegram's ${CALLBACK_DATA_LIMIT}: ${data}`);
  }
  return data;
}

function checkId(id: string): string {
  if (!id || id.includes(':')) throw new Error(`callback id must be non-empty and contain no ':' (got ${JSON.stringify(id)})`);
  return id;
}

/**
 * Encode a button.
 * @throws Error when the result would exceed 64 bytes or an id contains `:`.
 */
export function encodeCallback(action: CallbackAction): string {
  switch (action.kind) {
    case 'approval':
      return checked(`a:${checkId(action.id)}:${CHOICE_CODE[action.choice]}`);
    case 'question':
      return checked(`q:${checkId(action.id)}:${action.index}`);
    case 'pairing':
      return checked(`p:${checkId(action.code)}`);
    case 'job':
      return checked(`j:${checkId(action.id)}:${JOB_OP_CODE[action.op]}`);
  }
}

/** Decode `callback_data`; null for anything this bot did not produce. */
export function decodeCallback(data: string | undefined): CallbackAction | null {
  if (!data) return null;
  const parts = data.split(':');
  if (parts[0] === 'a' && parts.length === 3 && parts[1]) {
    const choice = CODE_CHOICE[parts[2] as string];
    return choice ? { kind: 'approval', id: parts[1], choice } : null;
  }
  if (parts[0] === 'q' && parts.length === 3 && parts[1] && /^\d{1,2}$/.test(parts[2] as string)) {
    return { kind: 'question', id: parts[1], index: Number(parts[2]) };
  }
  if (parts[0] === 'p' && parts.length === 2 && parts[1]) return { kind: 'pairing', code: parts[1] };
  if (parts[0] === 'j' && parts.length === 3 && parts[1]) {
    const op = CODE_JOB_OP[parts[2] as string];
    return op ? { kind: 'job', id: parts[1], op } : null;
  }
  return null;
}
