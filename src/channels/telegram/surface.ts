/**
 * Telegram as the presenter drives it: post, edit and delete HTML messages (when Telegram
 * rejects the HTML entities the same text goes as plain text; "message is not modified" counts
 * as done), upload files (sendPhoto / sendDocument / sendVoice within Telegram's limits), show
 * "typing", and tell permanent refusals (bot blocked, chat gone) from transient ones (429, 5xx,
 * network). A reference is `<chat id>:<message id>`.
 * The presenter sends a conversation's rows in order and owns their retries, so calls go
 * straight to the API here: no queue of our own below its chain. The API's transformers wait out
 * a short 429 and pace sends (see `api.ts`); a post, edit or upload runs its calls under the
 * delivery's `ConfirmSend`, which they call after a wait (`withConfirm` in the kit).
 */
import { type Api, GrammyError, HttpError, InputFile } from 'grammy';
import type { Logger } from 'pino';
import { classifyOwn, RenderAgain, trimText, uploadBytes, withConfirm } from '../../kit/index.js';
import type {
  ChatRef,
  ConfirmSend,
  OutboundText,
  Emitter,
  FailureClass,
  OutboundUpload,
  Part,
  Surface,
  Conversation,
} from '../../kit/index.js';
import type { TelegramAddress } from './context.js';
import { TelegramDrafts } from './drafts.js';
import type { TelegramBody } from './emitter.js';
import { TelegramEphemeral } from './ephemeral.js';
import { markdownToHtmlBlocks } from './markdown.js';
import { TelegramRich } from './rich.js';
import { isEntityError } from './refusal.js';
import { htmlToPlain, packBlocks } from './split.js';

/** Largest photo Telegram accepts with sendPhoto; bigger images go as documents. */
export const PHOTO_LIMIT = 10 * 1024 * 1024;
/** Largest upload through the cloud Bot API. */
export const UPLOAD_LIMIT = 50 * 1024 * 1024;
/** Caption limit in characters. */
export const CAPTION_LIMIT = 1024;
/** Telegram shows a chat action for about 5 seconds: while a turn works it is sent again this often, ms. */
export const TYPING_REPEAT_MS = 4_000;

/** The chat (and topic) of a conversation row. */
export function addressOf(conversation: Pick<Conversation, 'chat_key' | 'thread_key'>): TelegramAddress {
  const threadId = conversation.thread_key ? Number(conversation.thread_key) : undefined;
  return { chatId: Number(conversation.chat_key), ...(threadId ? { threadId } : {}) };
}

/** The message id of a reference. */
function messageIdOf(ref: string): number {
  return Number(ref.slice(ref.lastIndexOf(':') + 1));
}

const GONE = /message to edit not found|message can't be edited|MESSAGE_ID_INVALID|message to delete not found/i;

/** Classify a failed Bot API call. */
export function classifyTelegramError(err: unknown): FailureClass {
  if (err instanceof GrammyError) {
    const reason = `${err.method}: ${err.error_code} ${err.description}`;
    if (err.error_code === 429) {
      const after = err.parameters?.retry_after;
      return { kind: 'transient', reason, ...(after ? { retryAfterMs: after * 1000 } : {}) };
    }
    if (err.error_code >= 500) return { kind: 'transient', reason };
    if (GONE.test(err.description)) return { kind: 'gone', reason };
    // 403 (blocked, kicked), 400 (chat not found, bad request), 401: retrying cannot help.
    return { kind: 'permanent', reason };
  }
  if (err instanceof HttpError) return { kind: 'transient', reason: `network: ${err.message}`, unanswered: true };
  // Not Telegram's answer: a rich message to render again as HTML, our own refusal, …
  return classifyOwn(err);
}

function isNotModified(err: unknown): boolean {
  return err instanceof GrammyError && /message is not modified/i.test(err.description);
}

/** Telegram's {@link Surface}. */
export class TelegramSurface implements Surface<TelegramAddress> {
  readonly typingRefreshMs = TYPING_REPEAT_MS;
  readonly drafts: TelegramDrafts;
  readonly rich: TelegramRich;

  constructor(
    private readonly api: Api,
    private readonly log: Logger,
    readonly emitter: Emitter,
    /** `telegram.stream_interval_ms` (default 1000). */
    readonly streamIntervalMs: number,
    /** `telegram.streaming`: drafts in private chats, or edits everywhere. */
    streaming: 'draft' | 'edit' = 'draft',
    /** Answers as rich messages: the emitter's and this surface's shared state. */
    rich: TelegramRich = new TelegramRich(log, 'off'),
    /** Notices to one person in a group as ephemeral messages (`telegram.ephemeral_notices`). */
    readonly ephemeral: TelegramEphemeral = new TelegramEphemeral(api, log, 'off'),
  ) {
    this.rich = rich;
    this.drafts = new TelegramDrafts(api, log, streaming, rich);
  }

  /** A chat that may have no conversation yet (a stranger wrote in a group), for a whisper there. */
  addressOf(ref: ChatRef): TelegramAddress {
    return addressOf({ chat_key: ref.chatKey, thread_key: ref.threadKey ?? '' });
  }

  /**
   * A notice to one person in a group, as an ephemeral message only they see; false (said the
   * old way by the caller, a message of the chat) where there are none: a private chat, the
   * setting off, or a server that refused them.
   */
  async whisper(address: TelegramAddress, userId: string, part: Part): Promise<boolean> {
    if (!/^\d+$/.test(userId)) return false;
    const body = part.body as TelegramBody;
    const htmls = body.markdown !== undefined ? packBlocks(markdownToHtmlBlocks(body.markdown)) : [body.html];
    for (const html of htmls) if (!(await this.ephemeral.send(address, Number(userId), html))) return false;
    return true;
  }

  /**
   * A rich part the server refused as unknown, as the one HTML message it fits in; a longer one
   * throws {@link RenderAgain} (too long for one HTML message) so the presenter renders it again, as HTML now.
   */
  private asHtml(body: TelegramBody): TelegramBody {
    const htmls = packBlocks(markdownToHtmlBlocks(body.markdown ?? ''));
    if (htmls.length !== 1)
      throw new RenderAgain('rich message refused by the server; sending the answer again as HTML');
    return { html: htmls[0] as string, ...(body.keyboard ? { keyboard: body.keyboard } : {}) };
  }

  address(conversation: Conversation): TelegramAddress {
    return addressOf(conversation);
  }

  /**
   * Send a rich message, or HTML; on "can't parse entities" the same text goes as plain text
   * instead, and a rich message the server does not know goes as HTML.
   */
  async post(address: TelegramAddress, part: Part, confirm?: ConfirmSend): Promise<string> {
    const body = part.body as TelegramBody;
    if (body.markdown !== undefined) {
      try {
        const msg = await this.api.sendRichMessage(
          address.chatId,
          { markdown: body.markdown },
          withConfirm(
            {
              ...(address.threadId ? { message_thread_id: address.threadId } : {}),
              ...(body.keyboard ? { reply_markup: body.keyboard } : {}),
            },
            confirm,
          ),
        );
        return `${address.chatId}:${msg.message_id}`;
      } catch (err) {
        if (!this.rich.refusedBy(err, 'sendRichMessage')) throw err;
        return this.post(address, { ...part, body: this.asHtml(body) }, confirm);
      }
    }
    const { html, keyboard } = body;
    const extra = withConfirm(
      {
        ...(address.threadId ? { message_thread_id: address.threadId } : {}),
        ...(keyboard ? { reply_markup: keyboard } : {}),
        link_preview_options: { is_disabled: true },
      },
      confirm,
    );
    try {
      const msg = await this.api.sendMessage(address.chatId, html, { ...extra, parse_mode: 'HTML' });
      return `${address.chatId}:${msg.message_id}`;
    } catch (err) {
      if (!isEntityError(err)) throw err;
      this.log.warn(
        { chatId: address.chatId, err: (err as GrammyError).description },
        'telegram rejected HTML; sending plain text',
      );
      const msg = await this.api.sendMessage(address.chatId, htmlToPlain(html), extra);
      return `${address.chatId}:${msg.message_id}`;
    }
  }

  /** Replace a message's rich content or HTML (with the same fallbacks); "not modified" counts as done. */
  async edit(address: TelegramAddress, ref: string, part: Part, confirm?: ConfirmSend): Promise<void> {
    const body = part.body as TelegramBody;
    const messageId = messageIdOf(ref);
    if (body.markdown !== undefined) {
      try {
        await this.api.editMessageText(
          address.chatId,
          messageId,
          { markdown: body.markdown },
          withConfirm(body.keyboard ? { reply_markup: body.keyboard } : {}, confirm),
        );
        return;
      } catch (err) {
        if (isNotModified(err)) return;
        if (!this.rich.refusedBy(err, 'editMessageText')) throw err;
        return this.edit(address, ref, { ...part, body: this.asHtml(body) }, confirm);
      }
    }
    const { html, keyboard } = body;
    const extra = withConfirm(
      { ...(keyboard ? { reply_markup: keyboard } : {}), link_preview_options: { is_disabled: true } },
      confirm,
    );
    try {
      await this.api.editMessageText(address.chatId, messageId, html, { ...extra, parse_mode: 'HTML' });
    } catch (err) {
      if (isNotModified(err)) return;
      if (!isEntityError(err)) throw err;
      this.log.warn(
        { chatId: address.chatId, err: (err as GrammyError).description },
        'telegram rejected HTML edit; using plain text',
      );
      try {
        await this.api.editMessageText(address.chatId, messageId, htmlToPlain(html), extra);
      } catch (err2) {
        if (!isNotModified(err2)) throw err2;
      }
    }
  }

  /** Delete a message; failures are logged, never thrown (the message may be gone already). */
  async delete(address: TelegramAddress, ref: string): Promise<void> {
    const messageId = messageIdOf(ref);
    try {
      await this.api.deleteMessage(address.chatId, messageId);
    } catch (err) {
      this.log.debug({ err, chatId: address.chatId, messageId }, 'telegram deleteMessage failed');
    }
  }

  /**
   * Upload a file into the chat (or a text made into a document: an approval's whole arguments).
   * Photos over 10 MB go as documents; over 50 MB is refused. The bytes are the copy taken when the
   * file was sent, held in memory (a retried request sends them again; a stream could be read only once).
   * @throws SwitchboardError `file_too_big` over 50 MB (nothing is sent; see `uploadBytes`).
   */
  async upload(address: TelegramAddress, file: OutboundUpload | OutboundText, confirm?: ConfirmSend): Promise<string> {
    const { name, bytes, caption } = await uploadBytes(file, { bytes: UPLOAD_LIMIT, name: "Telegram's Bot API" });
    const extra = withConfirm(
      {
        ...(caption?.trim() ? { caption: trimText(caption, CAPTION_LIMIT) } : {}),
        ...(address.threadId ? { message_thread_id: address.threadId } : {}),
      },
      confirm,
    );
    const { chatId } = address;
    const input = new InputFile(bytes, name);
    const kind = 'kind' in file ? file.kind : 'file';
    const sent =
      kind === 'voice'
        ? await this.api.sendVoice(chatId, input, extra)
        : kind === 'photo' && bytes.length <= PHOTO_LIMIT
          ? await this.api.sendPhoto(chatId, input, extra)
          : await this.api.sendDocument(chatId, input, extra);
    return `${chatId}:${sent.message_id}`;
  }

  /** Send a text file made from `file.text` as a document (see {@link upload}). */
  readonly uploadText = (address: TelegramAddress, file: OutboundText, confirm?: ConfirmSend): Promise<string> =>
    this.upload(address, file, confirm);

  /** A chat action cannot be taken back: it ends by itself, or with the next message. */
  typing(address: TelegramAddress, on: boolean): void {
    if (!on) return;
    // Cosmetic: a failure must never delay or break a reply.
    this.api
      .sendChatAction(address.chatId, 'typing', address.threadId ? { message_thread_id: address.threadId } : {})
      .catch(() => undefined);
  }

  classify(err: unknown): FailureClass {
    return classifyTelegramError(err);
  }
}
