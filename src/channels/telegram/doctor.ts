/** `switchboard doctor`'s Telegram check: getMe with the bot token (plain HTTPS, no SDK). */
import { callPlatform as call, callPlatformOk } from '../../kit/index.js';
import type { Config } from '../../kit/index.js';
import { unknownToServer } from './refusal.js';

/**
 * Whether the server knows `method`: asked with `body` for no chat (chat 0), which a server that
 * knows the method refuses as a bad request and one that does not answers as an unknown method;
 * nothing is shown anywhere.
 */
async function knows(config: Config, root: string, method: string, body: object): Promise<boolean> {
  const answer = await call(`${root}/bot${config.telegram.bot_token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: 0, ...body }),
  });
  return !unknownToServer(answer.status, answer.body.description);
}

/** How replies stream in private chats: `telegram.streaming`, and whether the server knows drafts. */
async function streamingWay(config: Config, root: string): Promise<string> {
  if (config.telegram.streaming === 'edit') return 'streaming by edits (telegram.streaming = "edit")';
  return (await knows(config, root, 'sendMessageDraft', { draft_id: 1, text: '' }))
    ? 'streaming by drafts in private chats'
    : 'streaming by edits (this Bot API server does not know sendMessageDraft)';
}

/** How answers are sent: `telegram.rich_messages`, and whether the server knows rich messages. */
async function answersWay(config: Config, root: string): Promise<string> {
  if (config.telegram.rich_messages === 'off') return 'answers as HTML (telegram.rich_messages = "off")';
  if (await knows(config, root, 'sendRichMessage', { rich_message: { markdown: '' } }))
    return 'answers as rich messages';
  return config.telegram.rich_messages === 'on'
    ? 'answers as rich messages, which this Bot API server does not know (telegram.rich_messages = "on": they will fail)'
    : 'answers as HTML (this Bot API server does not know sendRichMessage)';
}

/**
 * How notices to one person in a group go: `telegram.ephemeral_notices`. Nothing can ask a server
 * whether it knows `ephemeral_message_parameters` without sending a message (a server that does
 * not know the field drops it), so this is the setting; the running bot notices a refusal on the
 * first notice and logs it.
 */
function noticesWay(config: Config): string {
  return config.telegram.ephemeral_notices === 'off'
    ? 'notices to one person in groups as alerts and group messages (telegram.ephemeral_notices = "off")'
    : 'notices to one person in groups as ephemeral messages (the old way if the server refuses them)';
}

/** Telegram: getMe with the bot token, which way replies stream, how answers and per-person notices are sent. */
export async function checkTelegram(config: Config): Promise<string> {
  const root = config.telegram.api_root.replace(/\/$/, '');
  const host = new URL(root).host;
  const body = await callPlatformOk(`${root}/bot${config.telegram.bot_token}/getMe`, {}, 'getMe', (status) =>
    status === 401 || status === 404 ? ' — check TELEGRAM_BOT_TOKEN (telegram.bot_token)' : '',
  );
  return `bot @${body.result?.username ?? '?'} (${host}), ${await streamingWay(config, root)}, ${await answersWay(config, root)}, ${noticesWay(config)}`;
}
