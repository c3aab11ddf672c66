/**
 * `switchboard doctor`'s Slack checks (plain HTTPS, no SDK): auth.test for the bot token and
 * apps.connections.open for the app token (what Socket Mode calls first at start). The API root
 * they read is the channel's too.
 */
import { callPlatform as call, callPlatformOk } from '../../kit/index.js';
import type { Config } from '../../kit/index.js';

/** `SLACK_API_URL` with or without a trailing slash; the WebClient wants one. */
export function normaliseApiUrl(url: string | undefined): string | undefined {
  return url ? url.replace(/\/+$/, '') + '/' : undefined;
}

const slackRoot = (config: Config) => normaliseApiUrl(config.slack.api_url) ?? 'https://slack.com/api/';

/** Call a Web API method with the bot or app token. @throws Error naming the host, the method and the token when refused. */
function authCall(config: Config, method: string, token: 'bot' | 'app', hint = '') {
  const env = token === 'app' ? 'SLACK_APP_TOKEN' : 'SLACK_BOT_TOKEN';
  const authorization = `Bearer ${token === 'app' ? config.slack.app_token : config.slack.bot_token}`;
  const init = { method: 'POST', headers: { authorization } };
  return callPlatformOk(`${slackRoot(config)}${method}`, init, `${method} for the ${token} token (${env})`, () => hint);
}

/** Slack: auth.test with the bot token. */
export async function checkSlackBot(config: Config): Promise<string> {
  const body = await authCall(config, 'auth.test', 'bot');
  return `bot ${body.user ?? body.user_id} in ${body.team ?? body.team_id}`;
}

/**
 * Slack Socket Mode: apps.connections.open with the app token, exactly what start calls before
 * it connects. The URL it returns is left unused (it expires on its own).
 */
export async function checkSlackAppToken(config: Config): Promise<string> {
  await authCall(
    config,
    'apps.connections.open',
    'app',
    ' — Socket Mode would not connect; the app token starts with xapp- and needs the connections:write scope',
  );
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
