/**
 * Telegram's rich messages (`sendRichMessage` / `editMessageText` with `rich_message.markdown`):
 * whether answers go as them — `telegram.rich_messages`, and the fallback in force. A Bot API
 * server that does not know the method (a self-hosted one lagging behind) is detected on its
 * first refusal (the same test as for drafts), logged once, and answers go as HTML for the rest
 * of the run.
 */
import { GrammyError } from 'grammy';
import type { Logger } from 'pino';
import type { MarkdownLimits } from '../../kit/index.js';
import { unknownToServer } from './refusal.js';

/** `telegram.rich_messages`. */
export type RichMode = 'auto' | 'on' | 'off';

/**
 * A rich message's documented limits (`@grammyjs/types` rich.d.ts): 32 768 characters, 500
 * blocks (nested ones, list items and table rows included), 20 table columns. The packer keeps
 * some headroom under the first two.
 */
export const RICH_LIMITS: MarkdownLimits = { chars: 32_000, blocks: 480, tableColumns: 20 };

/** The documented character limit itself (UTF-16 units here, never fewer than Telegram's count). */
export const RICH_MAX_CHARS = 32_768;

/** Rich messages for answers, while the server takes them. */
export class TelegramRich {
  /** Why rich messages are off for this run (the server refused them), else null. */
  refused: string | null = null;

  constructor(
    private readonly log: Logger,
    readonly mode: RichMode,
  ) {}

  /** Answers go as rich messages now. */
  inForce(): boolean {
    return this.mode !== 'off' && this.refused === null;
  }

  /**
   * A failed rich call: true (and rich messages off from now on, logged once) when the server
   * does not know the method or the payload — an edit whose `rich_message` a server does not
   * know reads to it as an edit without text; the caller sends the answer again as HTML. Always
   * false with `rich_messages = "on"`: the failure stands.
   */
  refusedBy(err: unknown, method: string): boolean {
    if (this.mode === 'on' || !(err instanceof GrammyError)) return false;
    const unknownPayload =
      method === 'editMessageText' && err.error_code === 400 && /text is empty/i.test(err.description);
    if (!unknownToServer(err.error_code, err.description) && !unknownPayload) return false;
    if (this.refused === null) {
      this.refused = `${err.error_code} ${err.description}`;
      this.log.warn(
        { reason: this.refused, method },
        'telegram: the Bot API server refused rich messages; answers go as HTML for the rest of this run',
      );
    }
    return true;
  }
}
