/**
 * Outbound messages of one bot: send/edit helpers that fall back to plain text when Telegram
 * rejects the HTML entities and treat "message is not modified" as success. There is no queue
 * here: the presenter sends each conversation's rows in order, and retrying is the presenter's
 * and the API transformer's job (see `api.ts`).
 */
import { type Api, GrammyError, type InlineKeyboard } from 'grammy';
import type { Logger } from 'pino';
import { htmlToPlain } from './split.js';

/** Telegram's own address of a chat: a chat and, in forums, a topic (the surface's address). */
export interface TelegramAddress {
  chatId: number;
  /** Forum topic (`message_thread_id`); undefined outside topics. */
  threadId?: number;
}

function isEntityError(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /can't parse entities/i.test(err.description);
}

function isNotModified(err: unknown): boolean {
  return err instanceof GrammyError && /message is not modified/i.test(err.description);
}

/** Sending with the plain-text fallback. */
export class HtmlSender {
  constructor(
    readonly api: Api,
    private readonly log: Logger,
  ) {}

  /**
   * Send HTML; on "can't parse entities" send the same text as plain text instead.
   * @returns the message id.
   */
  async sendHtml(target: TelegramAddress, html: string, keyboard?: InlineKeyboard): Promise<number> {
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
  async editHtml(target: TelegramAddress, messageId: number, html: string, keyboard?: InlineKeyboard | null): Promise<void> {
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
  async delete(target: TelegramAddress, messageId: number): Promise<void> {
    try {
      await this.api.deleteMessage(target.chatId, messageId);
    } catch (err) {
      this.log.debug({ err, chatId: target.chatId, messageId }, 'telegram deleteMessage failed');
    }
  }
}
