/** `switchboard doctor`'s Telegram check: getMe with the bot token (plain HTTPS, no SDK). */
import type { Config } from '../../config.js';
import { callPlatform as call, errorText } from '../doctor-http.js';

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
