/**
 * The outbound API layer: retries as grammY transformers, not code in handlers. Delivery (the
 * presenter's sends, edits, deletes, uploads, typing) is retried by the presenter, which keeps
 * each message's row and backs off per conversation; here those calls wait out only a 429 whose
 * `retry_after` is short (the rule of `delivery/short-retry.ts`), and everything else (a long 429,
 * 5xx, a network error) goes straight back to the presenter with its class (see
 * `classifyTelegramError`). Other calls (getMe, getFile,
 * setWebhook, answerCallbackQuery, …) have no row behind them, so they keep their own retries: a
 * 429 waits out `retry_after`, a 5xx backs off, and a network error is retried.
 */
import { autoRetry } from '@grammyjs/auto-retry';
import type { Transformer } from 'grammy';
import { confirmOfSend, type Pacer, waitingOutShort429 } from '../../kit/index.js';
import { telegramLimits } from './rates.js';

/** Longest `retry_after` waited out for calls outside delivery, seconds. */
export const MAX_RETRY_AFTER_SECONDS = 300;
/** Attempts per request before the error reaches the caller. */
export const MAX_RETRY_ATTEMPTS = 6;

/**
 * Methods that create a message: never repeated after a network error, and paced. A draft is
 * none (it is shown again at will and streams at the presenter's own pace).
 */
export function isCreatingMethod(method: string): boolean {
  return method.startsWith('send') && method !== 'sendChatAction' && !method.endsWith('Draft');
}

/** Methods the presenter drives (it retries them, from their ledger row). */
export function isDeliveryMethod(method: string): boolean {
  return method.startsWith('send') || method.startsWith('editMessage') || method === 'deleteMessage';
}

/**
 * The retry transformer for every API call of the bot. A delivery call waits out a 429 whose
 * `retry_after` is at most `shortRetryAfterSeconds` (default: `delivery/short-retry.ts`'s), and
 * its delivery's claim is confirmed after the wait (`withConfirm` in the kit).
 */
export function retryTransformer(shortRetryAfterSeconds?: number): Transformer {
  // The Bot API answers a 429 as a value (`ok: false`), with the wait in `parameters.retry_after`.
  const delivery: Transformer = (prev, method, payload, signal) =>
    waitingOutShort429(
      () => prev(method, payload, signal),
      { result: (res) => (res.ok ? undefined : res.parameters?.retry_after) },
      signal,
      shortRetryAfterSeconds,
      confirmOfSend(payload),
    );
  const other = autoRetry({ maxDelaySeconds: MAX_RETRY_AFTER_SECONDS, maxRetryAttempts: MAX_RETRY_ATTEMPTS });
  return (prev, method, payload, signal) => {
    // getUpdates has its own retry loop in the runner; wrapping it would delay shutdown.
    if (method === 'getUpdates') return prev(method, payload, signal);
    return (isDeliveryMethod(method) ? delivery : other)(prev, method, payload, signal);
  };
}

/**
 * Pace message-creating calls under Telegram's limits (per chat, per group, per bot) by waiting.
 * Installed inside the retry transformer, so a retried send is paced again. After a wait the
 * delivery's claim may have been taken over: it is confirmed again before the send.
 */
export function pacingTransformer(pacer: Pacer): Transformer {
  return async (prev, method, payload, signal) => {
    const chatId = (payload as { chat_id?: number | string } | undefined)?.chat_id;
    if (isCreatingMethod(method) && chatId !== undefined && (await pacer.take(telegramLimits(chatId))) > 0)
      await confirmOfSend(payload)?.();
    return prev(method, payload, signal);
  };
}
