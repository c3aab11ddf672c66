/**
 * The `[slack]` section: its keys with their documentation, its environment names and the HTTP
 * mode's companion check. Imports only zod and `config-section.ts` (it sits in the
 * configuration's layer; see `src/config-sections.ts`).
 */
import { z } from 'zod';
import { configSection, csv, httpUrl, optionalText, positiveInt } from '../../config-section.js';

/** `[slack]`: on when `bot_token` is set. */
export const slackConfig = configSection({
  name: 'slack',
  schema: z.object({
    bot_token: optionalText('Setting a bot token enables the Slack channel.', '"xoxb-..."'),
    app_token: optionalText('Socket Mode when set; else the HTTP Events API on /slack/events.', '"xapp-..."'),
    signing_secret: optionalText('Required in HTTP mode (no app_token).'),
    api_url: httpUrl.optional().describe("Web API root; unset: Slack's.").meta({ example: '"https://slack.com/api/"' }),
    allowed_users: csv.default([]).describe('Slack user ids let in without pairing.'),
    team_id: optionalText('Only this workspace (team id) may talk to the bot, when set.', '"T0123"'),
    stream_interval_ms: positiveInt
      .default(1_500)
      .describe('Least time between updates of a streaming reply, milliseconds.'),
    streaming: z
      .enum(['native', 'update'])
      .default('native')
      .describe(
        `How a reply streams in a thread: "native" (Slack's own streamed message, chat.startStream)
or "update" (a message updated with chat.update, as at the top level of a DM). A server that
refuses native streams is switched to "update" for the run.`,
      ),
    stream_rollover_ms: positiveInt
      .default(240_000)
      .describe('A native stream older than this goes on in a new message (Slack ends streams after ~5 min), ms.'),
    task_cards: z
      .enum(['auto', 'off'])
      .default('auto')
      .describe(
        `How each tool call shows while a turn runs: "auto" (a task going from running to complete or
error: where replies stream natively, the turn's tool calls are tasks of one streamed message,
else a Block Kit task card each) or "off" (a small context line). A workspace that refuses task
chunks uses task cards for the run; one that refuses task cards (invalid_blocks) context lines.`,
      ),
    markdown_blocks: z
      .enum(['auto', 'off'])
      .default('auto')
      .describe(
        `How a long answer, or one with headings, lists or code, shows: "auto" (a markdown block Slack
renders itself, up to 12 000 characters a message) or "off" (mrkdwn sections). A workspace that
refuses markdown blocks (invalid_blocks) is switched to sections for the run.`,
      ),
    max_download_bytes: positiveInt.default(50 * 1024 * 1024).describe('Largest file downloaded from Slack, bytes.'),
    max_upload_bytes: positiveInt.default(50 * 1024 * 1024).describe('Largest file uploaded to Slack, bytes.'),
  }),
  env: {
    SLACK_BOT_TOKEN: 'bot_token',
    SLACK_APP_TOKEN: 'app_token',
    SLACK_SIGNING_SECRET: 'signing_secret',
    SLACK_API_URL: 'api_url',
    SLACK_ALLOWED_USERS: 'allowed_users',
  },
  check: (slack) =>
    slack.bot_token && !slack.app_token && !slack.signing_secret
      ? [
          'config: slack.signing_secret (or env SLACK_SIGNING_SECRET): required for HTTP mode when slack.app_token is not set',
        ]
      : [],
});
