/**
 * A button tap as a neutral action: what it asks for, not how the platform carried it. Each
 * channel keeps only its payload codec (Telegram's 64-byte `callback_data`, Slack's action id and
 * value); the core's action router (`core/actions.ts`) authorises and executes it.
 */

/** An action on a job from a list button or command. */
export type JobOp = 'pause' | 'resume' | 'run' | 'delete';

/** A choice on an approval card: approve once, for the session, always; deny (then a note); deny without a note. */
export type ApprovalChoice = 'once' | 'session' | 'always' | 'deny' | 'no_note';

/** What a tapped button asks for. Ids are row ids, so a button still works after a restart. */
export type Action =
  | { kind: 'approval'; id: string; choice: ApprovalChoice }
  /** A suggested answer, by its position on the card; the router reads its text from the row. */
  | { kind: 'question'; id: string; index: number }
  | { kind: 'pairing'; code: string }
  | { kind: 'job'; id: string; op: JobOp };

/**
 * A decision typed rather than tapped (the terminal chat, JSONL): it carries the person's own
 * words, which no button does, so no codec draws or decodes one. `core.act` takes it as it takes a
 * tap, by the same rules.
 */
export type TypedDecision =
  /** Deny an approval with the note typed with the denial (no note: the `no_note` choice of an {@link Action}). */
  | { kind: 'denial'; id: string; note: string }
  /** Answer a question in the person's own words (a suggested answer: the `question` {@link Action}). */
  | { kind: 'answer'; id: string; text: string };

/** A button as neutral data; each channel's formatter draws it and encodes its action. */
export interface Button {
  label: string;
  action: Action;
  /** `danger` for destructive buttons (delete), where the platform can show it. */
  style?: 'primary' | 'danger';
}
