/**
 * Notifications from outside (`POST /api/notify`, `switchboard notify`): where they may go.
 * A target must be a chat switchboard already knows (it has had a conversation there, or it is a
 * user's home chat); an arbitrary id is refused, so the token cannot be used to message anyone.
 * Without a target, the admins' home chats.
 */
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { isKnownChat } from '../store/repos/jobs.js';
import { type FullChatRef, formatChatRef, homeChatOf, parseChatRef } from './home.js';

/** Where a notification from outside goes, or why it cannot. */
export type TargetResolution = { ok: true; targets: FullChatRef[] } | { ok: false; reason: string };

/** Longest notification text from outside, characters. */
export const MAX_OUTSIDE_TEXT = 8_000;

/**
 * Resolve `to` (`channel:chat[:thread]`) or, when absent, the admins' home chats.
 * @param served channels this process serves (a target elsewhere is refused).
 */
export async function resolveOutsideTargets(
  db: Db,
  config: Config,
  to: string | undefined,
  served: string[],
): Promise<TargetResolution> {
  if (to !== undefined) {
    const address = parseChatRef(to);
    if (!address)
      return {
        ok: false,
        reason: `"to" must look like telegram:12345 or slack:C0123 (got ${JSON.stringify(to.slice(0, 80))})`,
      };
    if (!served.includes(address.channel))
      return {
        ok: false,
        reason: `channel "${address.channel}" is not running here (running: ${served.join(', ') || 'none'})`,
      };
    if (!(await isKnownChat(db, address.channel, address.chatKey)) && !(await isSomeonesHome(db, config, address))) {
      return {
        ok: false,
        reason: `unknown chat ${formatChatRef(address)}: switchboard only notifies chats it has talked in`,
      };
    }
    return { ok: true, targets: [address] };
  }
  const homes: FullChatRef[] = [];
  for (const admin of config.access.admins) {
    const home = await homeChatOf(db, admin);
    if (home && served.includes(home.channel) && !homes.some((h) => formatChatRef(h) === formatChatRef(home)))
      homes.push(home);
  }
  if (homes.length === 0)
    return {
      ok: false,
      reason: 'no target: give "to", or let an admin set a home chat (/sethome, /switchboard sethome)',
    };
  return { ok: true, targets: homes };
}

async function isSomeonesHome(db: Db, config: Config, address: FullChatRef): Promise<boolean> {
  for (const admin of config.access.admins) {
    const home = await homeChatOf(db, admin);
    if (home && formatChatRef(home) === formatChatRef(address)) return true;
  }
  return false;
}
