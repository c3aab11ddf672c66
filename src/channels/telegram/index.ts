/**
 * Telegram channel entry point. `src/main.ts` calls {@link createTelegramChannel} when
 * `telegram.bot_token` is set, after the shared HTTP server exists and before it listens (the
 * webhook route, when `telegram.webhook_url` is set, is registered here).
 */
import type { Channel } from '../../kit/index.js';
import { TelegramChannel, type TelegramChannelOptions } from './channel.js';

export { TelegramChannel, type TelegramChannelOptions } from './channel.js';

/** Create the Telegram channel (name `telegram`, capabilities `attachments` and `voice`). */
export function createTelegramChannel(options: TelegramChannelOptions): Channel {
  return new TelegramChannel(options);
}
