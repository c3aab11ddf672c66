/** What the Discord receivers share, and how a Discord chat maps onto a conversation ref. */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { ChatRef } from '../../contract/chat.js';
import type { CoreApi } from '../../contract/core.js';
import type { PathPolicy } from '../../tools/path-policy.js';
import type { DiscordSurface } from './surface.js';

/** Channel name, also the principal prefix (`discord:<user id>`). */
export const CHANNEL = 'discord';

/** The core's memo of the threads the bot started: thread id → the guild channel it was started in. */
export const THREADS = 'discord.thread';

/** A DM (`chatKey` = the DM channel) or a thread of the bot (`chatKey` = its guild channel, `threadKey` = the thread). */
export function refOf(chatKey: string, threadKey = ''): ChatRef {
  return { channel: CHANNEL, chatKey, threadKey };
}

/** The ref of the Discord channel a message or tap came from: a DM, a thread of the bot, else the guild channel. */
export async function refOfChannel(core: CoreApi, channelId: string, guild: boolean): Promise<ChatRef> {
  if (!guild) return refOf(channelId);
  const parent = await core.memo(THREADS).get(channelId);
  return parent ? refOf(parent, channelId) : refOf(channelId);
}

/** A Discord user's display name as the core's name directory keeps it. */
export function displayName(user: { username: string; global_name?: string | null }): string {
  return user.global_name || user.username;
}

/** Everything the receivers use. */
export interface DiscordContext {
  /** The core; throws before the channel started. */
  core(): CoreApi;
  readonly surface: DiscordSurface;
  readonly config: Config['discord'];
  readonly log: Logger;
  readonly paths: PathPolicy;
  /** The bot's user id (known once READY arrived). */
  botId(): string;
}
