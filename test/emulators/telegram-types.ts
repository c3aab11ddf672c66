// biome-ignore-all lint/suspicious/noExplicitAny: the emulator handles free-form Bot API JSON
/** Types of the Telegram Bot API emulator (`telegram.ts`). */

/** A message the bot sent (or edited), as the emulator stores it. */
export interface SentMessage {
  message_id: number;
  chat_id: number;
  message_thread_id?: number;
  kind: 'text' | 'document' | 'photo' | 'voice';
  /** Raw text as sent (HTML source when parse_mode is HTML). */
  text: string;
  /** Visible text after entity parsing. */
  plain: string;
  parse_mode?: string;
  /** A rich message's `rich_message.markdown` (sendRichMessage, or an edit with `rich_message`). */
  rich?: string;
  reply_markup?: any;
  caption?: string;
  file?: { name: string; bytes: Buffer };
  /** Every text this message has had, oldest first. */
  history: string[];
  deleted?: boolean;
}

/** A draft the bot showed (`sendMessageDraft`). */
export interface Draft {
  chat_id: number;
  message_thread_id?: number;
  draft_id: number;
  /** Raw text as sent; empty: Telegram's "Thinking…" placeholder. */
  text: string;
  plain: string;
  /** A rich draft's `rich_message.markdown` (sendRichMessageDraft). */
  rich?: string;
  can_stop: boolean;
  /** When it was shown (epoch ms); it expires `draftTtlMs` later unless shown again. */
  at: number;
}

/** An ephemeral message the bot sent (`ephemeral_message_parameters`): only its receiver sees it. */
export interface EphemeralMessage {
  chat_id: number;
  message_thread_id?: number;
  /** The one person who may see it. */
  receiver_user_id: number;
  /** The tap that caused it, when one did. */
  callback_query_id?: string;
  ephemeral_message_id: number;
  /** Raw text as sent (HTML source when parse_mode is HTML). */
  text: string;
  /** Visible text after entity parsing. */
  plain: string;
  parse_mode?: string;
}

/** A recorded API call. */
export interface ApiCall {
  method: string;
  params: Record<string, any>;
  /** HTTP-level outcome returned. */
  ok: boolean;
  /** When the emulator answered (epoch ms). */
  at: number;
}

export type Failure = { status: number; retryAfter?: number; description?: string };

/** A user as seen by the emulator. */
export interface EmuUser {
  id: number;
  first_name?: string;
  username?: string;
}

/** Options for injected messages. */
export interface InjectOptions {
  chatId?: number;
  chatType?: 'private' | 'group' | 'supergroup';
  threadId?: number;
  replyTo?: number;
  entities?: any[];
}

/** Handle on a running emulator. */
export interface TelegramEmulator {
  /** Value for `TELEGRAM_API_ROOT`. */
  apiRoot: string;
  token: string;
  botUser: { id: number; username: string; first_name: string };
  calls: ApiCall[];
  callbackAnswers: Array<{ callback_query_id: string; text?: string; show_alert?: boolean }>;
  chatActions: Array<{ chat_id: number; action: string }>;
  commands: any[];
  /** getUpdates calls that overlapped another one (two pollers on one token; Telegram's 409). */
  readonly getUpdatesConflicts: number;
  /** Every `deleteWebhook` call's `drop_pending_updates` value. */
  dropPendingCalls: boolean[];
  webhook: { url: string; secret?: string } | null;
  /** Updates not yet confirmed by a getUpdates offset. */
  pendingUpdates(): any[];
  /** Messages the bot sent into a chat, in order (deleted ones excluded). */
  messages(chatId: number): SentMessage[];
  /** The draft a chat (topic) shows now: undefined when none, expired, or replaced by a message. */
  draft(chatId: number, threadId?: number): Draft | undefined;
  /** Every draft shown in a chat, oldest first. */
  drafts(chatId: number): Draft[];
  /**
   * The person presses Stop on the chat's draft: it vanishes and `stopped_message_generation`
   * is delivered (if the bot asked for it). Throws when no draft with a Stop button shows.
   * @returns the update id
   */
  pressStop(chatId: number, threadId?: number): number;
  /** From now on the server does not know `method` (404 "Not Found", as an older Bot API server). */
  forget(method: string): void;
  /** Ephemeral messages sent into a group, oldest first, each with the one person who sees it. */
  ephemerals(chatId: number): EphemeralMessage[];
  /**
   * How the server takes `ephemeral_message_parameters` from now on: `on` (default, by the
   * documented rules), `refuse` (400 "ephemeral messages are not supported") or `ignore` (the
   * field dropped, as a server that does not know it: the message goes to everyone).
   */
  ephemeralSupport(mode: 'on' | 'refuse' | 'ignore'): void;
  /** `user` is a member of group `chatId` (anyone who wrote or tapped there already is). */
  join(chatId: number, user: EmuUser): void;
  /** Inject a text message from a user; returns its update id. */
  sendText(from: EmuUser, text: string, opts?: InjectOptions): number;
  /** Inject a document (optionally a photo or voice note) from a user. */
  sendFile(
    from: EmuUser,
    file: {
      name: string;
      bytes: Buffer;
      kind: 'document' | 'photo' | 'voice';
      caption?: string;
      declaredSize?: number;
    },
    opts?: InjectOptions,
  ): number;
  /** Inject a button tap on a message the bot sent; returns the callback query id. */
  tap(from: EmuUser, chatId: number, messageId: number, data: string): string;
  /** Make the next `count` calls of `method` fail. */
  fail(method: string, count: number, failure: Failure): void;
  /**
   * Hold the next request of `method` (matching `match`): `before` it is processed (a client that
   * dies meanwhile never reached Telegram), or `after` it was processed with its answer withheld
   * (Telegram has the message; the client never learns its id). `arrived` resolves when it is held.
   */
  hold(
    method: string,
    options?: { match?: (params: Record<string, any>) => boolean; phase?: 'before' | 'after' },
  ): { arrived: Promise<void>; release(): void };
  /** The user blocked the bot: every call into this chat answers 403 from now on. */
  block(chatId: number): void;
  /** Fail a share of the calls of `method` (0 turns it off); `random` makes it deterministic. */
  failRate(method: string, rate: number, failure: Failure, random?: () => number): void;
  /** Reject the next `count` HTML messages with "can't parse entities". */
  rejectEntities(count: number): void;
  /** Register a file that getFile / download can serve; returns its file_id. */
  addFile(bytes: Buffer, declaredSize?: number): string;
  close(): Promise<void>;
}
