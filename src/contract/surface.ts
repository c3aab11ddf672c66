/**
 * What a platform supplies to the presenter: where a conversation's messages go, how to post,
 * edit and delete one, upload a file, show "typing", and its emitter (content → platform
 * messages). Everything that is policy — when to edit, where to split, what to resend after a
 * crash — lives in the presenter, written once.
 */
import type { Token } from 'marked';
import type { Conversation } from '../store/schema.js';
import type { Button } from './actions.js';
import type { ChatRef, OutboundFile, OutboundText } from './chat.js';
import type { ApprovalContent, NoticeContent, QuestionContent, ToolContent } from './content.js';
import type { CoreEvent } from './events.js';

/** One platform message: its body as the platform takes it, and its plain text (for look-ups). */
export interface Part {
  body: unknown;
  text: string;
}

/** The emitter of a platform: one method per kind of content; each returns the messages to show. */
export interface Emitter {
  /** Parsed Markdown (one parse for every platform), split at the platform's limits; `buttons` go under the last part. */
  markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[];
  notice(content: NoticeContent): Part[];
  /** An approval card; `content.wholeFile` says where its whole arguments are when the card cannot show them. */
  approval(content: ApprovalContent): Part[];
  /**
   * The approval's whole arguments as a text file, when this platform's card cannot show them
   * all (the presenter sends it before the card); undefined when the card shows everything.
   */
  approvalFile?(content: ApprovalContent): OutboundText | undefined;
  question(content: QuestionContent): Part[];
  /** `tail`: the last output of a running tool (live only, never stored). */
  tool(content: ToolContent, tail?: string): Part[];
}

/** How a failed platform call should be treated. */
export type FailureClass =
  /** The platform refused for good (bot blocked, chat gone): mark failed, never retry. */
  | { kind: 'permanent'; reason: string }
  /**
   * Try again later, not before `retryAfterMs` when the platform said so. `unanswered`: the
   * platform's answer never arrived (a transport failure), so a post may have landed after all.
   */
  | { kind: 'transient'; reason: string; retryAfterMs?: number; unanswered?: boolean }
  /** The message to edit is gone (deleted by the user, too old): post it anew. */
  | { kind: 'gone'; reason: string };

/**
 * A file as a surface sends it: the copy taken when a tool sent it (`delivery/sent-files.ts`),
 * never a path in the workspace, which may have changed since.
 */
export interface OutboundUpload {
  /** The name the chat shows. */
  name: string;
  /** Bytes. */
  size: number;
  caption?: string;
  kind: 'file' | 'photo' | 'voice';
  /** The copy's id (the web chat offers it for download under its message). */
  snapshot: string;
  /** The whole content. */
  bytes(): Promise<Buffer>;
  /** The content in chunks, for a stream. */
  chunks(): AsyncIterable<Buffer>;
}

/**
 * Confirms that this instance may still send what it is about to (its delivery claim holds, and is
 * extended), right before a platform call that shows something; throws to stop the call. The
 * presenter confirms before it hands a post, an edit or an upload to a surface and passes this
 * along: a surface that waits before its call (a pacing slot, a short 429) confirms again after
 * the wait, since the claim may have been taken over meanwhile.
 */
export type ConfirmSend = () => Promise<void>;

/**
 * A platform's own streamed message (Slack's `chat.startStream`): the message exists from the
 * first chunk, text is appended to it, and it is stopped when the reply ends. Platforms expire
 * open streams, so the presenter rolls a long one over to a new message before `rolloverMs`.
 * Without it (or where {@link NativeStreams.available} says no) replies stream by post-then-edit.
 */
export interface NativeStreams<A = unknown> {
  /** Whether a new reply to this address may stream natively now (setting on, place allows, not refused). */
  available(address: A): boolean;
  /** Most characters one streamed message takes; the rest goes on in a new one. */
  readonly maxChars: number;
  /** Longest time a stream is kept open before the rest goes on in a new message, ms. */
  readonly rolloverMs: number;
  /**
   * Start a streamed message with `markdown`, calling `confirm` right before the platform call
   * that creates it (after anything the start waits for first, and again after a short 429).
   * @returns its reference, or null when the platform refuses streams.
   */
  start(address: A, markdown: string, confirm?: ConfirmSend): Promise<string | null>;
  /** Append to an open stream. @returns false when the message no longer streams (expired or refused). */
  append(address: A, ref: string, markdown: string): Promise<boolean>;
  /** Stop a stream, `markdown` appended last. @returns false when the message no longer streamed. */
  stop(address: A, ref: string, markdown?: string): Promise<boolean>;
}

/**
 * A platform's transient lane for a reply being written (Telegram's message drafts): a preview
 * that vanishes by itself and is never a message of the chat, so it is no ledger row. The row is
 * the final message alone, posted once the answer is complete: a crash mid-answer leaves nothing
 * half-written behind.
 */
export interface Drafts<A = unknown> {
  /** Whether live text of this address goes to drafts now (else the presenter streams by edits). */
  usable(address: A): boolean;
  /**
   * Show `part` as draft `id` (non-zero; one per turn), or the platform's "thinking" placeholder
   * when `part` is null.
   * @returns false when the platform refused drafts as unknown or unsupported: the surface has
   * fallen back for the rest of the run (`usable` answers false from now on).
   */
  show(address: A, id: number, part: Part | null): Promise<boolean>;
  /** How often a draft must be shown again while it stays, ms (the platform lets an untouched one expire). */
  readonly refreshMs: number;
}

/** A platform as the presenter drives it. `A` is the platform's address of a conversation. */
export interface Surface<A = unknown> {
  /** Shortest time between two updates of a live message, ms. */
  readonly streamIntervalMs: number;
  /** Native streamed messages for replies, where the platform has them. */
  readonly streams?: NativeStreams<A>;
  readonly emitter: Emitter;
  /** Where a conversation's messages go (chat, thread). */
  address(conversation: Conversation): A | Promise<A>;
  /**
   * Post one message; `confirm` (see {@link ConfirmSend}), confirmed just before, is called again
   * after any wait of the surface's own. @returns the platform's reference to it.
   */
  post(address: A, part: Part, confirm?: ConfirmSend): Promise<string>;
  /** Replace a message's content; `confirm` as for {@link post}. */
  edit(address: A, ref: string, part: Part, confirm?: ConfirmSend): Promise<void>;
  /** Delete a message; may throw (the presenter logs and carries on). */
  delete(address: A, ref: string): Promise<void>;
  /**
   * Send a file (the copy taken when it was sent); `confirm` as for {@link post}.
   * @returns a reference to the message carrying it.
   */
  upload(address: A, file: OutboundUpload, confirm?: ConfirmSend): Promise<string>;
  /**
   * Send a text file made from `file.text` (an approval's whole arguments). A platform without
   * it cannot carry arguments too long for its cards, and such a card offers no Approve there.
   * `confirm` as for {@link post}. @returns a reference to the message carrying it.
   */
  uploadText?(address: A, file: OutboundText, confirm?: ConfirmSend): Promise<string>;
  /**
   * Show or stop the "typing" indicator of a conversation (cosmetic; never throws). When it is
   * shown and when it is turned off is the presenter's (`delivery/typing.ts`).
   */
  typing(address: A, on: boolean): void;
  /**
   * How often "typing" must be shown again while it is on, ms, where the platform's indicator
   * fades by itself (Telegram's chat action lasts about 5 s); left out, one call lasts until off.
   */
  readonly typingRefreshMs?: number;
  classify(err: unknown): FailureClass;
  /** The transient lane for a reply being written, where the platform has one (see {@link Drafts}). */
  readonly drafts?: Drafts<A>;
  /**
   * Find a message with this part's text posted after `after` (a reference), for sends a crash
   * or a lost answer left ambiguous. Platforms without a way to look (Telegram) leave it out and send again.
   */
  findPosted?(address: A, part: Part, after: string | undefined): Promise<string | undefined>;
  /**
   * Show a message to one person only, which the platform keeps for no one else (Slack's
   * ephemeral messages): a refusal of a click or a command in a shared channel. Not durable by
   * nature, so it is never a ledger row; it goes through `delivery/transient.ts`.
   * @returns false when it was not shown because the platform cannot whisper here (now): a
   *   private chat, or a server that refused it (Telegram's ephemeral messages); the caller then
   *   says it the way it would without whispers.
   */
  whisper?(address: A, userId: string, part: Part): Promise<boolean>;
  /**
   * The address of a chat that may have no conversation yet, for a whisper there (the core tells
   * a stranger in a shared channel their pairing code). Needed beside {@link whisper}.
   */
  addressOf?(ref: ChatRef): A;
}

/**
 * A surface that shows the core's event stream itself instead of messages: the terminal chat and
 * JSONL (which print it) and the job channel (which hands it to the job service). The presenter
 * drives it as it drives a {@link Surface} (`Presenter.present`): it is handed every event in order
 * and its ledger rows are settled once the events standing for them were shown.
 *
 * Why not a {@link Surface}: JSONL's protocol (CONTRACT.md) is the event stream — deltas,
 * `tool_output`, `approval_resolved`, `question_resolved` and `turn_done` lines with fields no
 * ledger row or rendered part carries — and a terminal cannot edit what it printed, so posting,
 * editing and redrawing messages would have nothing to act on.
 */
export interface EventSurface {
  /** Show one event; called in event order per conversation, each after the last resolved; should not throw. */
  show(conversation: Conversation, event: CoreEvent): Promise<void>;
  /** Put a file a tool sent into the conversation (the copy taken when it was sent); throws with a clear message. */
  sendFile(conversation: Conversation, file: OutboundFile): Promise<void>;
}
