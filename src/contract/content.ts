/**
 * What a delivery shows, channel-neutral: the content kinds of the delivery ledger. Each
 * platform's emitter turns one of these into its messages.
 */
import type { Button } from './actions.js';
import type { ToolFinishStatus } from './events.js';

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
  /** Rows of buttons under the text (a `/jobs` list); drawn by channels that have buttons. */
  buttons?: Button[][];
}

/** A line of plain text from the system (errors, notices); never parsed as Markdown. */
export interface NoticeContent {
  type: 'notice';
  level: 'error' | 'info';
  text: string;
}

/**
 * The file that carries an approval's whole arguments where its card cannot show them all: set by
 * the presenter for the one platform it draws the card on, never stored in the content.
 */
export interface WholeArgumentsFile {
  /** The file's name in the chat. */
  name: string;
  /** True once the platform has the file; false when it could not be sent there (`reason`). */
  sent: boolean;
  reason?: string;
}

/** An approval card, before and after its decision. */
export interface ApprovalContent {
  type: 'approval';
  id: string;
  label: string;
  /** The tool's whole preview of the arguments (never cut: the card shows it, or says where it is). */
  preview: string;
  requester: string;
  /** What "always" would allow, in words (the tool, and the path for file tools); shown on the button. */
  alwaysCovers?: string;
  state: ApprovalState;
  scope: 'once' | 'session' | 'always' | null;
  by: string | null;
  note: string | null;
  /** Where the whole arguments are when the card cannot show them (see {@link WholeArgumentsFile}). */
  wholeFile?: WholeArgumentsFile;
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
  /**
   * What the finished call returned (as the model read it, secrets redacted), its middle cut
   * when long; for channels that show it on the line (Telegram's expandable block). Absent while
   * it runs, on calls that never ran, and on lines queued before it was kept.
   */
  output?: string;
}

/** A file a tool sends into the chat. */
export interface AttachmentContent {
  type: 'attachment';
  /** Where it was in the workspace when it was sent. */
  path: string;
  caption: string | null;
  kind: 'file' | 'photo' | 'voice';
  /** The copy taken then, which is what is uploaded (absent on rows queued before copies were kept). */
  snapshot?: string;
}

/** Everything a delivery can show. */
export type DeliveryContent =
  | TextContent
  | NoticeContent
  | ApprovalContent
  | QuestionContent
  | ToolContent
  | AttachmentContent;
