/** The Telegram channel's declaration (see `../kind.ts`): on when `telegram.bot_token` is set. */
import { doctorCheck } from '../../kit/index.js';
import type { ChannelKind } from '../../kit/index.js';
import { checkTelegram } from './doctor.js';
import { telegramConfig } from './config.js';

/** Telegram. */
export const telegramKind: ChannelKind = {
  name: 'telegram',
  config: telegramConfig,
  howToEnable: 'set TELEGRAM_BOT_TOKEN',
  configured: (config) => !!config.telegram.bot_token,
  async create(options) {
    // grammY is loaded only when the channel is configured (start-up time and memory).
    const { createTelegramChannel } = await import('./index.js');
    return createTelegramChannel({ ...options, log: options.log.child({ channel: 'telegram' }) });
  },
  allowedUsers: (config) => config.telegram.allowed_users,
  doctor: async (config) => [await doctorCheck('telegram', () => checkTelegram(config))],
};
