/**
 * The Slack channel's entry point. `src/main.ts` calls {@link createSlackChannel} when
 * `slack.bot_token` is set, after the HTTP server exists (HTTP mode registers `/slack/events` on
 * it) and before it listens.
 */
import type { Channel } from '../../contract/channel.js';
import { SlackChannel, type SlackChannelOptions } from './slack-channel.js';

export { SlackChannel, type SlackChannelOptions } from './slack-channel.js';

/**
 * Build the Slack channel: Socket Mode when `slack.app_token` is set, else the HTTP Events API
 * on `POST /slack/events` with signature verification. Capabilities: `attachments`.
 * @throws Error when `slack.bot_token` is missing, or HTTP mode lacks `slack.signing_secret`.
 */
export function createSlackChannel(options: SlackChannelOptions): Channel {
  return new SlackChannel(options);
}
