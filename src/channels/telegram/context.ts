/**
 * Shared pieces of the inbound side: what handlers need (the core, config, ephemeral notices), a
 * user's display name, Telegram's address of a chat, and how an update maps onto it, a conversation ref
 * and a principal.
 */
import type { Context } from 'grammy';
import type { Logger } from 'pino';
import type { Config, ChatRef, ChannelCore, PathPolicy } from '../../kit/index.js';

/** Channel name, also the principal prefix (`telegram:<user id>`). */
export const CHANNEL = 'telegram';

/** Telegram's own address of a chat: a chat and, in forums, a topic (the surface's address). */
export interface TelegramAddress {
  chatId: number;
  /** Forum topic (`message_thread_id`); undefined outside topics. */
  threadId?: number;
}

/**
 * A Telegram user's display name as the core's name directory keeps it: first and last name,
 * else `@username`; undefined when Telegram gives neither (the core then shows the raw id).
 */
export function displayName(
  user: { first_name?: string; last_name?: string; username?: string } | undefined,
): string | undefined {
  if (!user) return undefined;
  const full = [user.first_name, user.last_name].filter(Boolean).join(' ').trim();
  return full || (user.username ? `@${user.username}` : undefined);
}

/** Everything the inbound handlers use. */
export interface InboundDeps {
  core: () => ChannelCore;
  config: Config;
  paths: PathPolicy;
  log: Logger;
  /**
   * Show HTML to one person alone in a group, caused by a tap (`ephemeral.ts`); false when it
   * cannot be shown that way (a private chat, the setting off, the server refused them).
   */
  ephemeral?: (address: TelegramAddress, userId: number, html: string, callbackQueryId?: string) => Promise<boolean>;
}

/** The chat/topic of a context (callback queries use their message's chat). */
export function addressOfContext(ctx: Context): TelegramAddress | null {
  const msg = ctx.msg ?? ctx.callbackQuery?.message;
  const chat = ctx.chat ?? msg?.chat;
  if (!chat) return null;
  const threadId = msg && 'is_topic_message' in msg && msg.is_topic_message ? msg.message_thread_id : undefined;
  return { chatId: chat.id, ...(threadId ? { threadId } : {}) };
}

/** The conversation ref of an address: chatKey = chat id, threadKey = forum topic id or ''. */
export function refOf(address: TelegramAddress): ChatRef {
  return {
    channel: CHANNEL,
    chatKey: String(address.chatId),
    threadKey: address.threadId ? String(address.threadId) : '',
  };
}

/** Principal of the user behind an update. */
export function principalOf(ctx: Context): string | null {
  return ctx.from ? `${CHANNEL}:${ctx.from.id}` : null;
}

/** Dedup key of an update. */
export function updateKey(ctx: Context): string {
  return `${CHANNEL}:update:${ctx.update.update_id}`;
}
