/**
 * The outbound API layer: retries as grammY transformers, not code in handlers.
 * 429 waits out `retry_after` and 5xx backs off (the request was refused, so a retry cannot
 * duplicate it). A network error is retried only for methods that are safe to repeat; a `send*`
 * whose response was lost may already have been delivered, so it fails instead of showing twice.
 */
import { autoRetry } from '@grammyjs/auto-retry';
import type { Transformer } from 'grammy';
import type { Pacer } from '../pacer.js';
import { telegramLimits } from './rates.js';

/** Longest `retry_after` honoured before giving up, seconds. */
export const MAX_RETRY_AFTER_SECONDS = 300;
/** Attempts per request before the error reaches the caller. */
export const MAX_RETRY_ATTEMPTS = 6;

/** Methods that create a message: never repeated after a network error. */
export function isCreatingMethod(method: string): boolean {
  return method.startsWith('send') && method !== 'sendChatAction';
}

/** The retry transformer for every API call of the bot. */
export function retryTransformer(): Transformer {
  const common = { maxDelaySeconds: MAX_RETRY_AFTER_SECONDS, maxRetryAttempts: MAX_RETRY_ATTEMPTS };
  const retrying = autoRetry(common);
  const noNetworkRetry = autoRetry({ ...common, rethrowHttpErrors: true });
  return (prev, method, payload, signal) =>
    // getUpdates has its own retry loop in the runner; wrapping it would delay shutdown.
    method === 'getUpdates'
      ? prev(method, payload, signal)
      : (isCreatingMethod(method) ? noNetworkRetry : retrying)(prev, method, payload, signal);
}

/**
 * Pace message-creating calls under Telegram's limits (per chat, per group, per bot) by waiting.
 * Installed inside the retry transformer, so a retried send is paced again.
 */
export function pacingTransformer(pacer: Pacer): Transformer {
  return async (prev, method, payload, signal) => {
    const chatId = (payload as { chat_id?: number | string } | undefined)?.chat_id;
    if (isCreatingMethod(method) && chatId !== undefined) await pacer.take(telegramLimits(chatId));
    return prev(method, payload, signal);
  };
}
