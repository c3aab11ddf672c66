/**
 * Telegram as the presenter drives it: post, edit and delete HTML messages through the
 * {@link HtmlSender} (HTML fallback, "not modified" as success), upload files, show "typing", and
 * tell permanent refusals (bot blocked, chat gone) from transient ones (429, 5xx, network).
 * A reference is `<chat id>:<message id>`. The presenter sends a conversation's rows in order and
 * owns their retries, so calls go straight to the API here: no queue of our own below its chain.
 */
import { GrammyError, HttpError } from 'grammy';
import type { OutboundFile } from '../../contract/chat.js';
import type { Emitter, FailureClass, Part, Surface } from '../../contract/surface.js';
import { SwitchboardError } from '../../errors.js';
import type { Conversation } from '../../store/schema.js';
import type { TelegramBody } from './emitter.js';
import { uploadFile } from './files.js';
import type { TelegramAddress, HtmlSender } from './html-sender.js';
import type { TypingIndicators } from './typing.js';

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
  if (err instanceof HttpError) return { kind: 'transient', reason: `network: ${err.message}` };
  if (err instanceof SwitchboardError) return { kind: 'permanent', reason: err.message };
  return { kind: 'transient', reason: err instanceof Error ? err.message : String(err) };
}

/** Telegram's {@link Surface}. */
export class TelegramSurface implements Surface<TelegramAddress> {
  constructor(
    private readonly sender: HtmlSender,
    private readonly typingIndicators: TypingIndicators,
    readonly emitter: Emitter,
    /** `telegram.stream_interval_ms` (default 1000). */
    readonly streamIntervalMs: number,
  ) {}

  address(conversation: Conversation): TelegramAddress {
    return addressOf(conversation);
  }

  async post(target: TelegramAddress, part: Part): Promise<string> {
    const body = part.body as TelegramBody;
    const id = await this.sender.sendHtml(target, body.html, body.keyboard);
    return `${target.chatId}:${id}`;
  }

  async edit(target: TelegramAddress, ref: string, part: Part): Promise<void> {
    const body = part.body as TelegramBody;
    await this.sender.editHtml(target, messageIdOf(ref), body.html, body.keyboard ?? null);
  }

  async delete(target: TelegramAddress, ref: string): Promise<void> {
    await this.sender.delete(target, messageIdOf(ref));
  }

  async upload(target: TelegramAddress, file: OutboundFile): Promise<string> {
    const id = await uploadFile(this.sender.api, target, file);
    return `${target.chatId}:${id}`;
  }

  typing(target: TelegramAddress, conversationId: string, on: boolean): void {
    if (on) this.typingIndicators.start(conversationId, target);
    else this.typingIndicators.stop(conversationId);
  }

  classify(err: unknown): FailureClass {
    return classifyTelegramError(err);
  }

  dispose(): void {
    this.typingIndicators.stopAll();
  }
}
