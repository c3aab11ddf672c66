/**
 * `switchboard doctor`'s Slack checks (plain HTTPS, no SDK): auth.test for the bot token and
 * apps.connections.open for the app token (what Socket Mode calls first at start). The API root
 * they read is the channel's too.
 */
import { callPlatform as call, errorText } from '../../kit/index.js';
import type { Config } from '../../kit/index.js';

/** `SLACK_API_URL` with or without a trailing slash; the WebClient wants one. */
export function normaliseApiUrl(url: string | undefined): string | undefined {
  return url ? url.replace(/\/+$/, '') + '/' : undefined;
}

const slackRoot = (config: Config) => normaliseApiUrl(config.slack.api_url) ?? 'https://slack.com/api/';

/** Slack: auth.test with the bot token. */
export async function checkSlackBot(config: Config): Promise<string> {
  const root = slackRoot(config);
  const host = new URL(root).host;
  const { status, body } = await call(`${root}auth.test`, {
    method: 'POST',
    headers: { authorization: `Bearer ${config.slack.bot_token}` },
  });
  if (!body.ok)
    throw new Error(
      `${host} refused auth.test for the bot token (SLACK_BOT_TOKEN): ${errorText(body.error)} (HTTP ${status})`,
    );
  return `bot ${body.user ?? body.user_id} in ${body.team ?? body.team_id}`;
}

/**
 * Slack Socket Mode: apps.connections.open with the app token, exactly what start calls before
 * it connects. The URL it returns is left unused (it expires on its own).
 */
export async function checkSlackAppToken(config: Config): Promise<string> {
  const root = slackRoot(config);
  const host = new URL(root).host;
  const { status, body } = await call(`${root}apps.connections.open`, {
    method: 'POST',
    headers: { authorization: `Bearer ${config.slack.app_token}` },
  });
  if (!body.ok) {
    throw new Error(
      `${host} refused apps.connections.open for the app token (SLACK_APP_TOKEN): ${errorText(body.error)} ` +
        `(HTTP ${status}) — Socket Mode would not connect; the app token starts with xapp- and needs the ` +
        `connections:write scope`,
    );
  }
  return 'Socket Mode: the app token opens a connection';
}

/**
 * Which way replies stream: `slack.streaming`, and for "native" whether the server knows
 * `chat.appendStream` — asked about a message that does not exist, so nothing is posted (a server
 * that knows the method answers `message_not_found` or the like; one that does not, `unknown_method`,
 * and the channel then streams by chat.update, as it does after the same answer at run time).
 */
export async function checkSlackStreaming(config: Config): Promise<string> {
  if (config.slack.streaming === 'update') return 'replies stream by chat.update (slack.streaming = "update")';
  const root = slackRoot(config);
  const { body } = await call(`${root}chat.appendStream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${config.slack.bot_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ channel: 'C0', ts: '0.000000', markdown_text: '.' }),
  });
  if (body.error === 'unknown_method')
    return `replies stream by chat.update: ${new URL(root).host} does not know chat.appendStream (native streams refused)`;
  return 'replies stream natively in threads (chat.startStream), by chat.update at the top level of a DM';
}
