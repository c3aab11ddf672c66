/**
 * The "typing…" indicator while a turn works. Telegram shows a chat action for about 5 seconds,
 * so it is repeated every 4 s until the turn ends or waits on the user. Failures are ignored:
 * the indicator is cosmetic and must never delay or break a reply.
 */
import type { Api } from 'grammy';
import type { TelegramAddress } from './html-sender.js';

/** Repeat period of the chat action, ms. */
export const TYPING_REPEAT_MS = 4_000;

/** Typing indicators keyed by conversation id. */
export class TypingIndicators {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly api: Api) {}

  /** Start (or keep) the indicator for a conversation. */
  start(key: string, target: TelegramAddress): void {
    if (this.timers.has(key)) return;
    const send = () => {
      this.api
        .sendChatAction(target.chatId, 'typing', target.threadId ? { message_thread_id: target.threadId } : {})
        .catch(() => undefined);
    };
    send();
    const timer = setInterval(send, TYPING_REPEAT_MS);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Stop the indicator for a conversation. */
  stop(key: string): void {
    const t = this.timers.get(key);
    if (t) clearInterval(t);
    this.timers.delete(key);
  }

  /** Stop every indicator. */
  stopAll(): void {
    for (const key of [...this.timers.keys()]) this.stop(key);
  }
}
