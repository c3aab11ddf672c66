/**
 * Telegram's ephemeral messages (`ephemeral_message_parameters.receiver_user_id` on
 * `sendMessage`): a notice meant for one person in a group — a refused tap, the flood notice, a
 * stranger's pairing code — shown to that person alone. Groups only (Telegram refuses them
 * elsewhere; a private chat has one person anyway). `telegram.ephemeral_notices = "off"` keeps
 * the old way: an alert on a tap, a message of the group.
 *
 * A Bot API server that does not know them (a self-hosted `telegram-bot-api` lagging behind) is
 * detected on its first refusal — an "unsupported" answer, or a message that came back as an
 * ordinary one (a server that drops the field it does not know posts to everyone: that copy is
 * deleted) — logged once, and the old way is used for the rest of the run
 * (`delivery/native-fallback.ts`).
 */
import { type Api, GrammyError } from 'grammy';
import type { Message } from 'grammy/types';
import type { Logger } from 'pino';
import { NativeFallback } from '../../kit/index.js';
import type { TelegramAddress } from './context.js';
import { isEntityError, unknownToServer } from './refusal.js';
import { htmlToPlain } from './split.js';

/** `telegram.ephemeral_notices`. */
export type EphemeralMode = 'auto' | 'off';

/** The server took the message but not as an ephemeral one: it dropped the field it did not know. */
class EphemeralIgnored extends Error {}

/** What a refusal of ephemeral messages looks like, for the fallback (undefined: another failure). */
function refusalOf(err: unknown): string | undefined {
  if (err instanceof EphemeralIgnored) return err.message;
  if (err instanceof GrammyError && unknownToServer(err.error_code, err.description))
    return `${err.error_code} ${err.description}`;
  return undefined;
}

/** A chat where ephemeral messages exist: a group (a negative chat id is a group's or a channel's). */
export function isGroupChat(address: TelegramAddress): boolean {
  return address.chatId < 0;
}

/** Per-person notices in groups, while the server takes ephemeral messages. */
export class TelegramEphemeral {
  private readonly fallback: NativeFallback;

  constructor(
    private readonly api: Api,
    private readonly log: Logger,
    readonly mode: EphemeralMode,
  ) {
    this.fallback = new NativeFallback({
      enabled: mode !== 'off',
      log,
      message:
        'telegram: the Bot API server refused ephemeral messages; notices to one person in a group ' +
        'go the old way (an alert, a message of the group) for the rest of this run',
      refusal: refusalOf,
    });
  }

  /** Why ephemeral messages are off for this run (the server refused them), else null. */
  get refused(): string | null {
    return this.fallback.refused;
  }

  /**
   * Show `html` to `userId` alone in the group at `address` (with the tap that caused it, when
   * one did). @returns false when it was not shown — a private chat, the setting off, or the
   * server refused (now or earlier this run) — so the caller says it the old way.
   * @throws GrammyError any other failure (the person is not in the group, a network error).
   */
  async send(address: TelegramAddress, userId: number, html: string, callbackQueryId?: string): Promise<boolean> {
    return this.fallback.run(isGroupChat(address), async (native) => {
      if (!native) return false;
      const extra = {
        ...(address.threadId ? { message_thread_id: address.threadId } : {}),
        ephemeral_message_parameters: {
          receiver_user_id: userId,
          ...(callbackQueryId ? { callback_query_id: callbackQueryId } : {}),
        },
        link_preview_options: { is_disabled: true },
      };
      let msg: Message.TextMessage;
      try {
        msg = await this.api.sendMessage(address.chatId, html, { ...extra, parse_mode: 'HTML' });
      } catch (err) {
        if (!isEntityError(err)) throw err;
        msg = await this.api.sendMessage(address.chatId, htmlToPlain(html), extra);
      }
      await this.checkEphemeral(address, msg);
      return true;
    });
  }

  /**
   * An ephemeral message comes back with its receiver (and message id 0). One without went to
   * the whole group: it is deleted (it was meant for one person) and counts as a refusal.
   */
  private async checkEphemeral(address: TelegramAddress, msg: Message.TextMessage): Promise<void> {
    if (msg.receiver_user !== undefined || msg.message_id === 0) return;
    await this.api
      .deleteMessage(address.chatId, msg.message_id)
      .catch((err: unknown) => this.log.warn({ err }, 'telegram: a notice meant for one person was not deleted'));
    throw new EphemeralIgnored('the server sent an ephemeral message as an ordinary one');
  }
}
