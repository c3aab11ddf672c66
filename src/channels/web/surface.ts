/**
 * The web chat as a presenter surface. The "platform" is the `web_messages` table: posting is
 * inserting a row, editing is replacing it (under a newer id, so streams resume by id), and the
 * page's streams are woken through an in-process bus, which other instances reach through the
 * relay (`relay.ts`; streams also poll, for a hint that was lost).
 * The emitter turns content into the JSON bodies the page renders; Markdown becomes sanitised
 * HTML here, on the server.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Token } from 'marked';
import {
  cardEmitter,
  checkOutboundFile,
  TITLE_ICON,
  SwitchboardError,
  holdForWebMessage,
  findMessage,
  messageByRef,
  writeMessage,
} from '../../kit/index.js';
import type {
  Button,
  OutboundText,
  ToolContent,
  Emitter,
  FailureClass,
  OutboundUpload,
  Part,
  Surface,
  CardLimits,
  CardView,
  Db,
  Conversation,
} from '../../kit/index.js';
import { markdownHtml } from './html.js';

/** Where a conversation's messages go: the user's chat and the conversation's thread. */
export interface WebAddress {
  chatKey: string;
  threadKey: string;
}

/** A transient signal to a user's open pages (never stored): a turn is running or not. */
export interface WebSignal {
  thread: string;
  running: boolean;
}

/** What one instance tells the others (`relay.ts`): a user's rows changed (`signal` absent), or a signal for their pages. */
export interface WebNotice {
  chat: string;
  signal?: WebSignal;
}

/**
 * What the page gets for one message (`path` of files and `snapshot` stay on the server). A file
 * the bot sent names its copy (`snapshot`, see `delivery/sent-files.ts`); one sent before copies
 * were kept names its `path` only.
 */
export type WebBody =
  | { kind: 'user'; text: string; by: string; files: Array<{ name: string; path: string }> }
  | { kind: 'text'; html: string; buttons?: Button[][] }
  /**
   * An approval or question card, a tool line or a notice, drawn by the page (people named by
   * principal). `output`: a finished tool call's line, whose output the page may fetch.
   */
  | { kind: 'card'; view: CardView; output?: true }
  | { kind: 'file'; name: string; caption: string | null; snapshot?: string; path?: string }
  /** A text file switchboard wrote (an approval's whole arguments): its text is the file (kept on the server). */
  | { kind: 'document'; name: string; caption: string | null; text: string }
  /**
   * Not a message: what the user made of the conversation (`conversations.ts`), one row per
   * thread, streamed like the messages so every open tab follows.
   */
  | { kind: 'thread'; title: string | null; deleted: boolean };

/** The message to edit is gone. */
class GoneError extends Error {}

const part = (body: WebBody, text: string): Part => ({ body, text });

/** The page scrolls and wraps: cards keep the whole preview and question, and more of a tool's output. */
export const WEB_CARD_LIMITS: CardLimits = {
  labelChars: 500,
  textChars: 20_000,
  quoteChars: 20_000,
  previewChars: 20_000,
  buttonChars: 200,
  maxAnswers: 25,
  tailChars: 2000,
  tailLines: 1000,
};

const cards = cardEmitter(WEB_CARD_LIMITS, (view: CardView) => [part({ kind: 'card', view }, view.fallback)]);

/** The web emitter: one message per content, no splitting (the page scrolls). */
export const webEmitter: Emitter = {
  markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
    return [
      part(
        {
          kind: 'text',
          html: markdownHtml(tokens, title ? `${TITLE_ICON} ${title}` : undefined),
          ...(buttons?.length ? { buttons } : {}),
        },
        tokens.map((t) => t.raw).join(''),
      ),
    ];
  },
  ...cards,
  tool(c: ToolContent, tail?: string): Part[] {
    const parts = cards.tool(c, tail);
    // A finished call's output can be opened on the page (fetched when asked: it may be long).
    if (c.state === 'running') return parts;
    return parts.map((p) => ({ ...p, body: { ...(p.body as WebBody), output: true } }));
  },
};

/** The web chat's messages: written to the table, announced on the bus (and to other instances). */
export class WebSurface implements Surface<WebAddress> {
  readonly emitter = webEmitter;
  /** `change` (chat key): new rows; `signal` (chat key, {@link WebSignal}). */
  readonly bus = new EventEmitter();
  private seq = 0;
  /** Tells the other instances (set while the channel runs over PostgreSQL). */
  private relay: ((notice: WebNotice) => void) | null = null;

  constructor(
    private readonly db: Db,
    readonly streamIntervalMs: number,
  ) {
    this.bus.setMaxListeners(0);
  }

  /** Announce changes and signals to other instances through `send` (null: this process only). */
  relayTo(send: ((notice: WebNotice) => void) | null): void {
    this.relay = send;
  }

  /** Something another instance announced: wake this instance's streams as if it were local. */
  received(notice: WebNotice): void {
    if (notice.signal) this.bus.emit('signal', notice.chat, notice.signal);
    else this.bus.emit('change', notice.chat);
  }

  /** A user's rows changed: wake the streams of every instance. */
  private changed(chatKey: string): void {
    this.bus.emit('change', chatKey);
    this.relay?.({ chat: chatKey });
  }

  address(conversation: Conversation): WebAddress {
    return { chatKey: conversation.chat_key, threadKey: conversation.thread_key };
  }

  /** A place after every message so far (time first, so instances agree roughly). */
  private nextPos(): number {
    this.seq = (this.seq + 1) % 1000;
    return Date.now() * 1000 + this.seq;
  }

  /** Show a new message. @returns its reference. */
  write(address: WebAddress, body: WebBody): Promise<string> {
    return this.writeAs(randomUUID(), address, body);
  }

  /** Show a row under a reference of the caller's (the same reference again replaces it, placed anew). */
  async writeAs(ref: string, address: WebAddress, body: WebBody): Promise<string> {
    await writeMessage(this.db, {
      ref,
      chat_key: address.chatKey,
      thread_key: address.threadKey,
      pos: this.nextPos(),
      body: JSON.stringify(body),
    });
    this.changed(address.chatKey);
    return ref;
  }

  post(address: WebAddress, p: Part): Promise<string> {
    return this.write(address, p.body as WebBody);
  }

  /**
   * A message with exactly this part's body shown in the thread after `after` (a reference): a
   * post that landed just before a crash, before its reference was recorded, is taken as shown
   * rather than shown twice.
   */
  async findPosted(address: WebAddress, p: Part, after: string | undefined): Promise<string | undefined> {
    const afterPos = after === undefined ? undefined : (await messageByRef(this.db, after))?.pos;
    return findMessage(this.db, {
      chat_key: address.chatKey,
      thread_key: address.threadKey,
      body: JSON.stringify(p.body),
      afterPos,
    });
  }

  async edit(address: WebAddress, ref: string, p: Part): Promise<void> {
    const current = await messageByRef(this.db, ref);
    if (!current || current.deleted) throw new GoneError(`message ${ref} is gone`);
    await writeMessage(this.db, {
      ref,
      chat_key: current.chat_key,
      thread_key: current.thread_key,
      pos: current.pos,
      body: JSON.stringify(p.body),
    });
    this.changed(address.chatKey);
  }

  async delete(address: WebAddress, ref: string): Promise<void> {
    const current = await messageByRef(this.db, ref);
    if (!current) return;
    await writeMessage(this.db, {
      ref,
      chat_key: current.chat_key,
      thread_key: current.thread_key,
      pos: current.pos,
      body: '{}',
      deleted: true,
    });
    this.changed(address.chatKey);
  }

  async upload(address: WebAddress, file: OutboundUpload): Promise<string> {
    // The page downloads the copy taken when the file was sent, kept while this message is; there
    // is no platform limit to check.
    const { name } = checkOutboundFile(file);
    const ref = await this.write(address, {
      kind: 'file',
      name,
      caption: file.caption ?? null,
      snapshot: file.snapshot,
    });
    await holdForWebMessage(this.db, file.snapshot, ref);
    return ref;
  }

  /** A text file made from `file.text`, downloaded from the message itself (no path, nothing to change it). */
  uploadText(address: WebAddress, file: OutboundText): Promise<string> {
    return this.write(address, { kind: 'document', name: file.name, caption: file.caption ?? null, text: file.text });
  }

  typing(address: WebAddress, on: boolean): void {
    // "Typing" on the web is the Stop button's state; turn start and end say it too (see index.ts).
    if (on) this.signal(address.chatKey, { thread: address.threadKey, running: true });
  }

  /** Tell a user's open pages something that is not stored. */
  signal(chatKey: string, s: WebSignal): void {
    this.bus.emit('signal', chatKey, s);
    this.relay?.({ chat: chatKey, signal: s });
  }

  classify(err: unknown): FailureClass {
    if (err instanceof GoneError) return { kind: 'gone', reason: err.message };
    if ((err as NodeJS.ErrnoException)?.code === 'ENOENT')
      return { kind: 'permanent', reason: 'the file is not there' };
    // A file refused before it was shown (see `checkOutboundFile`): sending again cannot help.
    if (err instanceof SwitchboardError) return { kind: 'permanent', reason: err.message };
    // The table is our own: anything else is the database being busy or away for a moment.
    return { kind: 'transient', reason: err instanceof Error ? err.message : String(err) };
  }
}
