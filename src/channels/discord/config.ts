/**
 * The `[discord]` section: its keys with their documentation and its environment names. Imports
 * only zod and `config-section.ts` (it sits in the configuration's layer; see
 * `src/config-sections.ts`).
 */
import { z } from 'zod';
import { configSection, httpUrl, numericUserIds, optionalText, positiveInt } from '../../config-section.js';

/** `[discord]`: on when `bot_token` is set. */
export const discordConfig = configSection({
  name: 'discord',
  schema: z.object({
    bot_token: optionalText(
      'Setting a bot token enables the Discord channel (turn on the Message Content intent).',
      '"..."',
    ),
    api_root: httpUrl
      .default('https://discord.com/api')
      .describe('REST base (tests and proxies); the SDK adds the API version.'),
    gateway_url: z
      .string()
      .url()
      .optional()
      .describe('The gateway WebSocket; unset: the one GET /gateway/bot names.')
      .meta({ example: '"wss://gateway.discord.gg"' }),
    allowed_users: numericUserIds('Discord').default([]).describe('Discord user ids (numeric) let in without pairing.'),
    stream_interval_ms: positiveInt
      .default(1_200)
      .describe('Least time between edits of a streaming reply, milliseconds (Discord allows 5 edits in 5 s).'),
    max_download_bytes: positiveInt.default(25 * 1024 * 1024).describe('Largest file downloaded from Discord, bytes.'),
  }),
  env: {
    DISCORD_BOT_TOKEN: 'bot_token',
    DISCORD_ALLOWED_USERS: 'allowed_users',
    DISCORD_API_ROOT: 'api_root',
    DISCORD_GATEWAY_URL: 'gateway_url',
  },
});
