/**
 * Outbound messages of one bot: send/edit helpers that fall back to plain text when Telegram
 * rejects the HTML entities and treat "message is not modified" as success, and a serial queue
 * per chat for the few replies sent outside the presenter (the presenter orders its own rows and
 * does not use it). Retrying is the presenter's and the API transformer's job (see `api.ts`).
 */
import { type Api, GrammyError, type InlineKeyboard } from 'grammy';
import type { Logger } from 'pino';
import { htmlToPlain } from './split.js';

/** Where a message goes: a chat and, in forums, a topic. */
export interface ChatTarget {
  chatId: number;
  /** Forum topic (`message_thread_id`); undefined outside topics. */
  threadId?: number;
}

/** Serial key of a target: one queue per chat (topics of one chat share Telegram's per-chat limit). */
export function targetKey(target: ChatTarget): string {
  return String(target.chatId);
}

function isEntityError(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /can't parse entities/i.test(err.description);
}

function isNotModified(err: unknown): boolean {
  return err instanceof GrammyError && /message is not modified/i.test(err.description);
}

/** Per-chat ordered sending with the plain-text fallback. */
export class Outbox {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    readonly api: Api,
    private readonly log: Logger,
  ) {}

  /** Run `fn` after everything queued before it for the same chat; a failure does not block the queue. */
  serial<T>(target: ChatTarget, fn: () => Promise<T>): Promise<T> {
    const key = targetKey(target);
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }

  /** Wait until every queued operation has run (used on stop and by tests). */
  async idle(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  /**
   * Send HTML; on "can't parse entities" send the same text as plain text instead.
   * @returns the message id.
   */
  async sendHtml(target: ChatTarget, html: string, keyboard?: InlineKeyboard): Promise<number> {
    const extra = {
      ...(target.threadId ? { message_thread_id: target.threadId } : {}),
      ...(keyboard ? { reply_markup: keyboard } : {}),
      link_preview_options: { is_disabled: true },
    };
    try {
      const msg = await this.api.sendMessage(target.chatId, html, { ...extra, parse_mode: 'HTML' });
      return msg.message_id;
    } catch (err) {
      if (!isEntityError(err)) throw err;
      this.log.warn({ chatId: target.chatId, err: (err as GrammyError).description }, 'telegram rejected HTML; sending plain text');
      const msg = await this.api.sendMessage(target.chatId, htmlToPlain(html), extra);
      return msg.message_id;
    }
  }

  /** Edit a message's HTML (with the same fallback); "not modified" counts as done. */
  async editHtml(target: ChatTarget, messageId: number, html: string, keyboard?: InlineKeyboard | null): Promise<void> {
    const extra = { ...(keyboard ? { reply_markup: keyboard } : {}), link_preview_options: { is_disabled: true } };
    try {
      await this.api.editMessageText(target.chatId, messageId, html, { ...extra, parse_mode: 'HTML' });
    } catch (err) {
      if (isNotModified(err)) return;
      if (!isEntityError(err)) throw err;
      this.log.warn({ chatId: target.chatId, err: (err as GrammyError).description }, 'telegram rejected HTML edit; using plain text');
      try {
        await this.api.editMessageText(target.chatId, messageId, htmlToPlain(html), extra);
      } catch (err2) {
        if (!isNotModified(err2)) throw err2;
      }
    }
  }

  /** Delete a message; failures are logged, never thrown (the message may be gone already). */
  async delete(target: ChatTarget, messageId: number): Promise<void> {
    try {
      await this.api.deleteMessage(target.chatId, messageId);
    } catch (err) {
      this.log.debug({ err, chatId: target.chatId, messageId }, 'telegram deleteMessage failed');
    }
  }
}
