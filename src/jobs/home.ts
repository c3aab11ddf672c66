/**
 * Home chats: where a user's notifications go (`/sethome` in Telegram, `/switchboard sethome` in
 * Slack). One per user, kept as a setting `home_chat:<channel:userId>` holding the chat's address.
 */
import type { FullChatRef } from '../contract/chat.js';
import type { Db } from '../store/db.js';
import { getSetting, setSetting } from '../store/repos/conversations.js';

export type { FullChatRef };

/** Setting key of a user's home chat. */
export function homeChatSetting(principal: string): string {
  return `home_chat:${principal}`;
}

/** Store `address` as the home chat of `principal`. */
export async function setHomeChat(db: Db, principal: string, address: FullChatRef): Promise<void> {
  await setSetting(db, homeChatSetting(principal), JSON.stringify(address));
}

/** A user's home chat, or null when none was set. */
export async function homeChatOf(db: Db, principal: string): Promise<FullChatRef | null> {
  const raw = await getSetting(db, homeChatSetting(principal));
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Partial<FullChatRef>;
    if (typeof v.channel === 'string' && typeof v.chatKey === 'string')
      return { channel: v.channel, chatKey: v.chatKey, threadKey: v.threadKey ?? '' };
  } catch {
    // A hand-edited or foreign value: treat as unset.
  }
  return null;
}

/**
 * Parse `channel:chat[:thread]` (as in `switchboard notify --to telegram:12345`).
 * @returns null when the text is not of that shape.
 */
export function parseChatRef(text: string): FullChatRef | null {
  const m = /^([a-z][a-z0-9_-]{0,31}):([^:\s]{1,128})(?::([^\s]{1,64}))?$/.exec(text.trim());
  if (!m) return null;
  return { channel: m[1] as string, chatKey: m[2] as string, threadKey: m[3] ?? '' };
}

/** `telegram:12345` / `slack:C1:1700000000.1`: an address for people and logs. */
export function formatChatRef(a: FullChatRef): string {
  return a.threadKey ? `${a.channel}:${a.chatKey}:${a.threadKey}` : `${a.channel}:${a.chatKey}`;
}
