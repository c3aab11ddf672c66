/**
 * The doctor's platform checks, as plain HTTPS calls (no SDK): Telegram's getMe, Slack's
 * auth.test for the bot token and apps.connections.open for the app token (what Socket Mode
 * calls first at start). Every failure names the host and the cause in words.
 */
import type { Config } from './config.js';
import { networkCause } from './errors.js';

/** The fields read from getMe / auth.test / apps.connections.open replies. */
interface PlatformReply {
  ok?: boolean;
  description?: string;
  error?: unknown;
  result?: { username?: string };
  user?: string;
  user_id?: string;
  team?: string;
  team_id?: string;
}

/** A reply's error field in words: Slack sends a string; anything else is shown as JSON. */
function errorText(value: unknown): string {
  if (typeof value === 'string' && value) return value;
  if (value === undefined || value === null) return 'no error given';
  return JSON.stringify(value);
}

/** POST/GET `url`; a failure to connect or a reply that is not JSON throws, naming the host. */
async function call(url: string, init: RequestInit = {}): Promise<{ status: number; body: PlatformReply }> {
  const host = new URL(url).host;
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new Error(`cannot reach ${host}: ${networkCause(err)}`);
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as PlatformReply };
  } catch {
    throw new Error(`${host} answered HTTP ${res.status} with something that is not a JSON API reply (is the API address right?)`);
  }
}

/** Telegram: getMe with the bot token. */
export async function checkTelegram(config: Config): Promise<string> {
  const root = config.telegram.api_root.replace(/\/$/, '');
  const host = new URL(root).host;
  const { status, body } = await call(`${root}/bot${config.telegram.bot_token}/getMe`);
  if (!body.ok) {
    const hint = status === 401 || status === 404 ? ' — check TELEGRAM_BOT_TOKEN (telegram.bot_token)' : '';
    throw new Error(`${host} refused getMe: ${body.description ?? errorText(body.error)} (HTTP ${status})${hint}`);
  }
  return `bot @${body.result?.username ?? '?'} (${host})`;
}

function slackRoot(config: Config): string {
  return (config.slack.api_url ?? 'https://slack.com/api/').replace(/\/?$/, '/');
}

/** Slack: auth.test with the bot token. */
export async function checkSlackBot(config: Config): Promise<string> {
  const root = slackRoot(config);
  const host = new URL(root).host;
  const { status, body } = await call(`${root}auth.test`, { method: 'POST', headers: { authorization: `Bearer ${config.slack.bot_token}` } });
  if (!body.ok) throw new Error(`${host} refused auth.test for the bot token (SLACK_BOT_TOKEN): ${errorText(body.error)} (HTTP ${status})`);
  return `bot ${body.user ?? body.user_id} in ${body.team ?? body.team_id}`;
}

/**
 * Slack Socket Mode: apps.connections.open with the app token, exactly what start calls before
 * it connects. The URL it returns is left unused (it expires on its own).
 */
export async function checkSlackAppToken(config: Config): Promise<string> {
  const root = slackRoot(config);
  const host = new URL(root).host;
  const { status, body } = await call(`${root}apps.connections.open`, { method: 'POST', headers: { authorization: `Bearer ${config.slack.app_token}` } });
  if (!body.ok) {
    throw new Error(
      `${host} refused apps.connections.open for the app token (SLACK_APP_TOKEN): ${errorText(body.error)} (HTTP ${status}) — Socket Mode would not connect; the app token starts with xapp- and needs the connections:write scope`,
    );
  }
  return 'Socket Mode: the app token opens a connection';
}
