/**
 * Telegram's message drafts (`sendMessageDraft`, private chats only) as the presenter's draft
 * lane (`delivery/drafts.ts`): with a Stop button, HTML with the plain-text fallback of the
 * surface. A Bot API server that does not know the method (a self-hosted one lagging behind) is
 * detected on its first refusal, logged once, and drafts are off for the rest of the run.
 */
import { type Api, GrammyError } from 'grammy';
import type { Logger } from 'pino';
import type { Drafts, Part } from '../../contract/surface.js';
import type { TelegramAddress } from './context.js';
import type { TelegramBody } from './emitter.js';
import { htmlToPlain } from './split.js';

/** A draft lasts about 30 s untouched: one still wanted is shown again this often, ms. */
export const DRAFT_REFRESH_MS = 20_000;

/** Telegram's answer to a method or payload it does not know (404 "Not Found", 400 "… not supported"). */
export function unknownToServer(code: number, description = ''): boolean {
  return (
    code === 404 ||
    (code === 400 && /method not found|unknown method|not (?:supported|implemented)|unsupported/i.test(description))
  );
}

/** `telegram.streaming` and the fallback in force. */
export class TelegramDrafts implements Drafts<TelegramAddress> {
  readonly refreshMs = DRAFT_REFRESH_MS;
  /** Why drafts are off for this run (the server refused them), else null. */
  refused: string | null = null;

  constructor(
    private readonly api: Api,
    private readonly log: Logger,
    /** `telegram.streaming`. */
    private readonly mode: 'draft' | 'edit',
  ) {}

  /** Drafts exist in private chats only (a positive chat id is a person's). */
  usable(address: TelegramAddress): boolean {
    return this.mode === 'draft' && this.refused === null && address.chatId > 0;
  }

  async show(address: TelegramAddress, id: number, part: Part | null): Promise<boolean> {
    const html = part ? (part.body as TelegramBody).html : '';
    const extra = { ...(address.threadId ? { message_thread_id: address.threadId } : {}), can_stop: true };
    try {
      try {
        await this.api.sendMessageDraft(address.chatId, id, html, html ? { ...extra, parse_mode: 'HTML' } : extra);
      } catch (err) {
        if (!(err instanceof GrammyError && /can't parse entities/i.test(err.description))) throw err;
        await this.api.sendMessageDraft(address.chatId, id, htmlToPlain(html), extra);
      }
      return true;
    } catch (err) {
      if (!(err instanceof GrammyError && unknownToServer(err.error_code, err.description))) throw err;
      this.refused = `${(err as GrammyError).error_code} ${(err as GrammyError).description}`;
      this.log.warn(
        { reason: this.refused },
        'telegram: the Bot API server refused sendMessageDraft; streaming by edits for the rest of this run',
      );
      return false;
    }
  }

  /** Which way replies stream in private chats now (doctor, logs). */
  describe(): string {
    if (this.mode === 'edit') return 'edits (telegram.streaming = "edit")';
    return this.refused
      ? `edits (the server refused drafts: ${this.refused})`
      : 'drafts in private chats, edits in groups';
  }
}
