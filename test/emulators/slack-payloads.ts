// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
/**
 * Builders for what Slack sends to an app (Events API callbacks, block actions, slash commands)
 * and the v0 request signature. Used by the Slack emulator and directly by tests.
 */
import { createHmac } from 'node:crypto';

/** Sign a request body the way Slack does: `v0=` + HMAC-SHA256 of `v0:<ts>:<body>`. */
export function signSlackRequest(secret: string, timestampSec: number, body: string): string {
  return 'v0=' + createHmac('sha256', secret).update(`v0:${timestampSec}:${body}`).digest('hex');
}

let eventCounter = 0;

/** A unique Events API event id (`Ev…`). */
export function newEventId(): string {
  eventCounter += 1;
  return `Ev${Date.now().toString(36).toUpperCase()}${eventCounter}`;
}

/** An `event_callback` envelope around one event. */
export function eventCallback(
  event: Record<string, unknown>,
  options: { eventId?: string; teamId?: string; appId?: string; botUserId?: string } = {},
): Record<string, any> {
  const teamId = options.teamId ?? 'T0TEAM';
  return {
    token: 'verification-token-unused',
    team_id: teamId,
    api_app_id: options.appId ?? 'A0APP',
    event,
    type: 'event_callback',
    event_id: options.eventId ?? newEventId(),
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { team_id: teamId, user_id: options.botUserId ?? 'U0BOT', is_bot: true, is_enterprise_install: false },
    ],
    is_ext_shared_channel: false,
  };
}

/** A `block_actions` payload for a button click on a message. */
export function blockAction(options: {
  user: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
  actionId: string;
  value: string;
  teamId?: string;
  responseUrl?: string;
}): Record<string, any> {
  const teamId = options.teamId ?? 'T0TEAM';
  return {
    type: 'block_actions',
    user: { id: options.user, username: options.user, team_id: teamId },
    api_app_id: 'A0APP',
    token: 'verification-token-unused',
    container: {
      type: 'message',
      message_ts: options.messageTs,
      channel_id: options.channel,
      is_ephemeral: false,
      thread_ts: options.threadTs,
    },
    trigger_id: `trig.${Date.now()}`,
    team: { id: teamId, domain: 'emu' },
    channel: { id: options.channel, name: options.channel },
    message: { type: 'message', ts: options.messageTs, thread_ts: options.threadTs, text: '' },
    response_url: options.responseUrl ?? 'http://127.0.0.1:9/unused',
    actions: [
      {
        action_id: options.actionId,
        block_id: 'blk',
        value: options.value,
        type: 'button',
        text: { type: 'plain_text', text: options.actionId },
        action_ts: `${Date.now() / 1000}`,
      },
    ],
  };
}

/** Fields of a slash command request (sent form-encoded over HTTP, as a payload over the socket). */
export function slashCommand(options: {
  user: string;
  channel: string;
  text: string;
  command?: string;
  teamId?: string;
  responseUrl?: string;
}): Record<string, string> {
  return {
    token: 'verification-token-unused',
    team_id: options.teamId ?? 'T0TEAM',
    team_domain: 'emu',
    channel_id: options.channel,
    channel_name: options.channel,
    user_id: options.user,
    user_name: options.user,
    command: options.command ?? '/switchboard',
    text: options.text,
    api_app_id: 'A0APP',
    response_url: options.responseUrl ?? 'http://127.0.0.1:9/unused',
    trigger_id: `trig.${Date.now()}`,
  };
}
