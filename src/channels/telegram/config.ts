/**
 * The `[telegram]` section: its keys with their documentation, its environment names and the
 * webhook's companion check. Imports only zod and `config-section.ts` (it sits in the
 * configuration's layer; see `src/config-sections.ts`).
 */
import { z } from 'zod';
import { boolish, configSection, httpUrl, numericUserIds, optionalText, positiveInt } from '../../config-section.js';

/** `[telegram]`: on when `bot_token` is set. */
export const telegramConfig = configSection({
  name: 'telegram',
  schema: z.object({
    bot_token: optionalText('Setting a token enables the Telegram channel.'),
    api_root: httpUrl
      .default('https://api.telegram.org')
      .describe('Bot API root (a local Bot API server or a test emulator); a trailing slash is dropped.'),
    webhook_url: httpUrl
      .optional()
      .describe('Webhook mode instead of long polling (webhook_secret required).')
      .meta({ example: '"https://bot.example.com/telegram/webhook"' }),
    webhook_secret: optionalText('The secret Telegram sends with each webhook call; required with webhook_url.'),
    allowed_users: numericUserIds('Telegram', 'the bot sees only numeric ids, not @usernames')
      .default([])
      .describe('Telegram user ids let in without pairing.'),
    stream_interval_ms: positiveInt
      .default(1_000)
      .describe('Least time between edits of a streaming reply, milliseconds.'),
    streaming: z
      .enum(['draft', 'edit'])
      .default('draft')
      .describe(
        `How a reply streams in private chats: "draft" (Telegram's message drafts with a Stop button;
the answer is posted once, complete) or "edit" (post, then edit; some clients lock their
composer while a draft streams). Groups always edit. A Bot API server without drafts falls
back to "edit" by itself.`,
      ),
    rich_messages: z
      .enum(['auto', 'on', 'off'])
      .default('auto')
      .describe(
        `Answers as rich messages: GitHub-flavoured Markdown with real tables, headings and code blocks,
up to 32768 characters in one message. "auto" (use them unless the Bot API server refuses them;
then HTML for the rest of the run), "on" (a refusal is an error) or "off" (HTML, split at 4096
characters; older Telegram Web/desktop builds show rich messages as "unsupported").`,
      ),
    ephemeral_notices: z
      .enum(['auto', 'off'])
      .default('auto')
      .describe(
        `Notices meant for one person in a group (a refused button tap, the "too fast" notice, a
stranger's pairing code) as ephemeral messages only that person sees: "auto" (unless the Bot
API server refuses them; then the old way for the rest of the run: an alert on the tap, a
message of the group) or "off" (the old way).`,
      ),
    max_download_bytes: positiveInt
      .default(20 * 1024 * 1024)
      .describe("Largest file accepted from a user (Telegram's cloud Bot API caps downloads at 20 MB)."),
    pace_sends: boolish.default(true).describe(
      `Wait below Telegram's send limits (about 30 messages/s per bot, 1/s per chat after a burst
of 5) instead of being answered 429. Turn off only against a test server or emulator that
has no limits (the benchmark does); a 429 is still retried after the time Telegram names.`,
    ),
  }),
  env: {
    TELEGRAM_BOT_TOKEN: 'bot_token',
    TELEGRAM_API_ROOT: 'api_root',
    TELEGRAM_WEBHOOK_URL: 'webhook_url',
    TELEGRAM_WEBHOOK_SECRET: 'webhook_secret',
    TELEGRAM_ALLOWED_USERS: 'allowed_users',
  },
  check: (telegram) =>
    telegram.webhook_url && !telegram.webhook_secret
      ? ['config: telegram.webhook_secret (or env TELEGRAM_WEBHOOK_SECRET): required when telegram.webhook_url is set']
      : [],
});
