/** The Discord channel's declaration (see `../kind.ts`): on when `discord.bot_token` is set. */
import { callPlatform, type ChannelKind, doctorCheck, errorText } from '../../kit/index.js';
import { discordConfig } from './config.js';

/** Discord. */
export const discordKind: ChannelKind = {
  name: 'discord',
  config: discordConfig,
  howToEnable: 'set DISCORD_BOT_TOKEN',
  configured: (config) => !!config.discord.bot_token,
  async create(options) {
    // The Discord SDK is loaded only when the channel is configured.
    const { DiscordChannel } = await import('./channel.js');
    return new DiscordChannel({ ...options, log: options.log.child({ channel: 'discord' }) });
  },
  allowedUsers: (config) => config.discord.allowed_users,
  doctor: async (config) => [
    await doctorCheck('discord', async () => {
      const root = config.discord.api_root.replace(/\/+$/, '');
      const host = new URL(root).host;
      const { status, body } = await callPlatform(`${root}/v10/users/@me`, {
        headers: { authorization: `Bot ${config.discord.bot_token}` },
      });
      const reply = body as { username?: string; message?: string };
      if (status !== 200) {
        const hint = status === 401 ? ' — check DISCORD_BOT_TOKEN (discord.bot_token)' : '';
        throw new Error(
          `${host} refused GET /users/@me: ${reply.message ?? errorText(body.error)} (HTTP ${status})${hint}`,
        );
      }
      return `bot @${reply.username ?? '?'} (${host})`;
    }),
  ],
};
