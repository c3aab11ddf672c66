/** What the Discord receivers share, and how a Discord chat maps onto a conversation ref. */
import type { ChatRef, Config, ChannelCore, PathPolicy } from '../../kit/index.js';
import type { Logger } from 'pino';
import type { DiscordSurface } from './surface.js';

/** Channel name, also the principal prefix (`discord:<user id>`). */
export const CHANNEL = 'discord';

/** The core's memo of the threads the bot started: thread id → the guild channel it was started in. */
export const THREADS = 'discord.thread';

/**
 * A DM is its person's (`chatKey` = the user id, so an admin's DM can be named before they write);
 * a thread of the bot has its guild channel and the thread; a guild channel itself (where a
 * stranger is answered) has itself as both.
 */
export function refOf(chatKey: string, threadKey = ''): ChatRef {
  return { channel: CHANNEL, chatKey, threadKey };
}

/** The conversation of a DM with `userId` or of a thread of the bot; null for a guild channel itself. */
export async function conversationRef(core: ChannelCore, channelId: string, guild: boolean, userId: string) {
  if (!guild) return refOf(userId);
  const parent = await core.store.memo(THREADS).get(channelId);
  return parent ? refOf(parent, channelId) : null;
}

/** A Discord user's display name as the core's name directory keeps it. */
export function displayName(user: { username: string; global_name?: string | null }): string {
  return user.global_name || user.username;
}

/** Everything the receivers use. */
export interface DiscordContext {
  /** The core; throws before the channel started. */
  core(): ChannelCore;
  readonly surface: DiscordSurface;
  readonly config: Config['discord'];
  readonly log: Logger;
  readonly paths: PathPolicy;
  /** The bot's user id (known once READY arrived). */
  botId(): string;
}
