/**
 * Telegram's message drafts (`sendMessageDraft`, private chats only) as the presenter's draft
 * lane (`delivery/drafts.ts`): with a Stop button, HTML with the plain-text fallback of the
 * surface. A Bot API server that does not know the method (a self-hosted one lagging behind) is
 * detected on its first refusal, logged once, and drafts are off for the rest of the run.
 */
import { type Api, GrammyError } from 'grammy';
import type { Logger } from 'pino';
import type { Drafts, Part } from '../../kit/index.js';
import type { TelegramAddress } from './context.js';
import type { TelegramBody } from './emitter.js';
import { markdownToHtmlBlocks } from './markdown.js';
import { isEntityError, unknownToServer } from './refusal.js';
import type { TelegramRich } from './rich.js';
import { htmlToPlain, packBlocks } from './split.js';

/** A draft lasts about 30 s untouched: one still wanted is shown again this often, ms. */
export const DRAFT_REFRESH_MS = 20_000;

/** `telegram.streaming` and the fallback in force. */
export class TelegramDrafts implements Drafts<TelegramAddress> {
  readonly refreshMs = DRAFT_REFRESH_MS;
  /** Why drafts are off for this run (the server refused them), else null. */
  refused: string | null = null;
  /** The server refused `sendRichMessageDraft`: a rich answer's draft shows its latest HTML part. */
  richRefused = false;

  constructor(
    private readonly api: Api,
    private readonly log: Logger,
    /** `telegram.streaming`. */
    private readonly mode: 'draft' | 'edit',
    /** Rich messages: a long rich answer streams whole in a rich draft. */
    private readonly rich?: TelegramRich,
  ) {}

  /** Drafts exist in private chats only (a positive chat id is a person's). */
  usable(address: TelegramAddress): boolean {
    return this.mode === 'draft' && this.refused === null && address.chatId > 0;
  }

  async show(address: TelegramAddress, id: number, part: Part | null): Promise<boolean> {
    const body = part?.body as TelegramBody | undefined;
    const extra = { ...(address.threadId ? { message_thread_id: address.threadId } : {}), can_stop: true };
    if (body?.markdown !== undefined && !this.richRefused) {
      try {
        await this.api.sendRichMessageDraft(address.chatId, id, { markdown: body.markdown }, extra);
        return true;
      } catch (err) {
        if (
          !(err instanceof GrammyError && unknownToServer(err.error_code, err.description)) ||
          this.rich?.mode === 'on'
        )
          throw err;
        this.richRefused = true;
        this.log.warn(
          { reason: `${err.error_code} ${err.description}` },
          'telegram: the Bot API server refused sendRichMessageDraft; drafts show the latest HTML part',
        );
      }
    }
    // A rich answer without rich drafts: the draft text is limited to 4096 characters, so its latest part.
    const html =
      body?.markdown !== undefined
        ? (packBlocks(markdownToHtmlBlocks(body.markdown)).at(-1) ?? '')
        : (body?.html ?? '');
    try {
      try {
        await this.api.sendMessageDraft(address.chatId, id, html, html ? { ...extra, parse_mode: 'HTML' } : extra);
      } catch (err) {
        if (!isEntityError(err)) throw err;
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
}
