/**
 * One payload codec for a tapped button's neutral action, shared by every channel: the compact
 * text a button carries (Telegram's `callback_data`, Slack's button `value`, the web chat's
 * `action` field) and the shape check of an action given as JSON. The payload holds the row id and
 * the choice, so a button keeps working after a restart (the database row is the state, not
 * process memory).
 *
 * Compact forms: `a:<approvalId>:<choice code>` (approval), `q:<questionId>:<index>` (suggested
 * answer), `p:<code>` (admin approves a pairing code), `j:<jobId>:<op code>` (a `/jobs` button).
 * Ids are non-empty and contain no `:`. A channel adds only its own limits (Telegram's 64 bytes,
 * Discord's 100 characters behind a prefix), through {@link payloadCodec}.
 */

import type { Action, ApprovalChoice, JobOp } from '../contract/actions.js';

/** One letter per approval choice; these letters are in buttons already posted, so they never change. */
const CHOICE_CODE: Record<ApprovalChoice, string> = { once: 'y', deny: 'n', session: 's', always: 'A', no_note: 'x' };
const CODE_CHOICE = invert(CHOICE_CODE);

/** One letter per job operation; like the choice codes, fixed for buttons already posted. */
const JOB_OP_CODE: Record<JobOp, string> = { pause: 'p', resume: 'r', run: 'n', delete: 'd' };
const CODE_JOB_OP = invert(JOB_OP_CODE);

/** The largest suggested-answer index a button carries (two digits, like the cards draw). */
const MAX_INDEX = 99;

function invert<K extends string>(table: Record<K, string>): ReadonlyMap<string, K> {
  return new Map(Object.entries(table).map(([k, v]) => [v as string, k as K]));
}

function validId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && !id.includes(':');
}

function checkId(id: string): string {
  if (!validId(id)) throw new Error(`action id must be non-empty and contain no ':' (got ${JSON.stringify(id)})`);
  return id;
}

function validIndex(index: unknown): index is number {
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index <= MAX_INDEX;
}

/**
 * The compact text form of an action.
 * @throws Error when an id is empty or contains `:`, or a question index is outside 0–99 — a
 * button we could not decode again must not be drawn.
 */
export function encodeAction(action: Action): string {
  switch (action.kind) {
    case 'approval':
      return `a:${checkId(action.id)}:${CHOICE_CODE[action.choice]}`;
    case 'question':
      if (!validIndex(action.index)) throw new Error(`answer index must be 0–${MAX_INDEX} (got ${action.index})`);
      return `q:${checkId(action.id)}:${action.index}`;
    case 'pairing':
      return `p:${checkId(action.code)}`;
    case 'job':
      return `j:${checkId(action.id)}:${JOB_OP_CODE[action.op]}`;
  }
}

/** Decode the compact text form; null for anything we did not produce (unknown kind or code, bad index, empty id). */
export function decodeAction(text: string | undefined | null): Action | null {
  if (typeof text !== 'string' || !text) return null;
  const [kind, id, code, ...rest] = text.split(':');
  if (rest.length || !validId(id)) return null;
  if (kind === 'p') return code === undefined ? { kind: 'pairing', code: id } : null;
  if (code === undefined) return null;
  if (kind === 'a') {
    const choice = CODE_CHOICE.get(code);
    return choice ? { kind: 'approval', id, choice } : null;
  }
  if (kind === 'q') {
    // Digits only, no leading zero: one text per index, so a forged variant is not another button.
    return /^(0|[1-9]\d?)$/.test(code) ? { kind: 'question', id, index: Number(code) } : null;
  }
  if (kind === 'j') {
    const op = CODE_JOB_OP.get(code);
    return op ? { kind: 'job', id, op } : null;
  }
  return null;
}

/**
 * The shape check of an action given as JSON (`{kind, id, choice}`, `{kind, id, index}`,
 * `{kind, id, op}`, `{kind, code}`): the same rules as the compact form. Null when it is not one.
 */
export function actionFromJson(raw: unknown): Action | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const a = raw as Record<string, unknown>;
  if (a.kind === 'pairing') return validId(a.code) ? { kind: 'pairing', code: a.code } : null;
  if (!validId(a.id)) return null;
  if (a.kind === 'approval' && typeof a.choice === 'string' && Object.hasOwn(CHOICE_CODE, a.choice)) {
    return { kind: 'approval', id: a.id, choice: a.choice as ApprovalChoice };
  }
  if (a.kind === 'question' && validIndex(a.index)) return { kind: 'question', id: a.id, index: a.index };
  if (a.kind === 'job' && typeof a.op === 'string' && Object.hasOwn(JOB_OP_CODE, a.op))
    return { kind: 'job', id: a.id, op: a.op as JobOp };
  return null;
}

/** A platform's limit on a button's payload field. */
export interface PayloadLimit {
  /** The field's name and the platform's, for the error (`callback_data`, `Telegram`). */
  field: string;
  platform: string;
  /** At most this many units, counted as UTF-8 bytes or as characters (UTF-16 units). */
  max: number;
  unit: 'bytes' | 'characters';
  /** Put before the compact text, marking a payload as ours (decoding refuses one without it). */
  prefix?: string;
}

/** The compact action text as one platform's button payload: behind its prefix, held to its limit. */
export function payloadCodec(limit: PayloadLimit): {
  /** @throws Error when the payload would be over the limit, or as {@link encodeAction} does. */
  encode(action: Action): string;
  /** The action of a payload; null for anything this bot did not produce. */
  decode(data: string | undefined): Action | null;
} {
  const { field, platform, max, unit, prefix = '' } = limit;
  const size = (text: string) => (unit === 'bytes' ? Buffer.byteLength(text, 'utf8') : text.length);
  return {
    encode(action) {
      const data = prefix + encodeAction(action);
      const n = size(data);
      if (n > max) throw new Error(`${field} is ${n} ${unit}, over ${platform}'s ${max}: ${data}`);
      return data;
    },
    decode(data) {
      // The platform never sends more than its limit: longer text, or text without the prefix, is not ours.
      if (!data || size(data) > max || !data.startsWith(prefix)) return null;
      return decodeAction(data.slice(prefix.length));
    },
  };
}
