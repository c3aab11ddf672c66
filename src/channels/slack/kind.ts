/** The Slack channel's declaration (see `../kind.ts`): on when `slack.bot_token` is set. */
import { doctorCheck } from '../../kit/index.js';
import type { ChannelKind, DoctorCheck } from '../../kit/index.js';
import { checkSlackAppToken, checkSlackBot, checkSlackStreaming } from './doctor.js';
import { slackConfig } from './config.js';

/** Slack. */
export const slackKind: ChannelKind = {
  name: 'slack',
  config: slackConfig,
  howToEnable: 'set SLACK_BOT_TOKEN',
  configured: (config) => !!config.slack.bot_token,
  async create(options) {
    // Bolt and the Web API client are loaded only when the channel is configured.
    const { SlackChannel } = await import('./slack-channel.js');
    return new SlackChannel({ ...options, log: options.log.child({ channel: 'slack' }) });
  },
  allowedUsers: (config) => config.slack.allowed_users,
  async doctor(config) {
    const checks: DoctorCheck[] = [await doctorCheck('slack', () => checkSlackBot(config))];
    if (config.slack.app_token) checks.push(await doctorCheck('slack socket mode', () => checkSlackAppToken(config)));
    // Which way replies stream is only worth asking with a token Slack takes.
    if (checks[0]?.ok) checks.push(await doctorCheck('slack streaming', () => checkSlackStreaming(config)));
    return checks;
  },
};
