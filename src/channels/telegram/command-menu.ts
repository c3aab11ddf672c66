/**
 * The bot's command menu (`setMyCommands`). It is a convenience — commands work typed without
 * it — so a Bot API that lacks the method (an independent or local server answering 404) or
 * refuses it for a moment (5xx) must not stop the bot: the kit's {@link BackgroundRetry} warns
 * and tries again later, with a growing pause, until it succeeds or the channel stops.
 */
import type { Api } from 'grammy';
import type { BotCommand } from 'grammy/types';
import type { Logger } from 'pino';
import { BackgroundRetry } from '../../kit/index.js';

/** First pause before the menu is tried again, ms (then doubled each time, up to {@link MENU_RETRY_MAX_MS}). */
export const MENU_RETRY_MS = 60_000;
/** Longest pause between two tries, ms. */
export const MENU_RETRY_MAX_MS = 60 * 60_000;

/** Register the command menu in the background, retrying after failures; stop the returned retry with the channel. */
export function registerMenu(api: Api, commands: readonly BotCommand[], log: Logger, firstMs = MENU_RETRY_MS) {
  const retry = new BackgroundRetry({
    log,
    firstMs,
    maxMs: MENU_RETRY_MAX_MS,
    failed:
      'telegram: could not register the command menu (setMyCommands); commands still work when typed; trying again later',
  });
  retry.start(async (signal) => {
    // grammY types its signal after the abort-controller polyfill; Node's own is the same at run time.
    await api.setMyCommands([...commands], undefined, signal as unknown as Parameters<Api['setMyCommands']>[2]);
    log.debug('telegram command menu registered');
  });
  return retry;
}
