/**
 * The request an admin gets when someone unknown asks to pair: a ledger row in the admin's
 * direct chat with an approve button, under a key that the approval edits in place.
 */
import type { Button } from '../contract/actions.js';
import type { Channel } from '../contract/channel.js';
import type { ChatRef } from '../contract/chat.js';
import type { TextContent } from '../contract/content.js';
import { pairedMarkdown, pairingApproveLabel } from '../delivery/notices.js';

/** The button of an admin's pairing request. */
export function pairingButton(code: string): Button {
  return { label: pairingApproveLabel(code), action: { kind: 'pairing', code } };
}

/** Ledger key of the pairing request shown to one admin in their direct chat (edited once decided). */
export function pairingRequestKey(code: string, adminChatKey: string | number): string {
  return `pairing:${code}:${adminChatKey}`;
}

/** What {@link settlePairingRequest} needs of the core. */
export interface SettleDeps {
  channels(): Channel[];
  say(ref: ChatRef, key: string, content: TextContent): Promise<void>;
  lookupName(principal: string): Promise<string>;
}

/**
 * Once an admin approved a pairing, the request in their direct chat says who was let in and
 * by whom, without its button (the same ledger row, edited in place). An approver without a
 * direct chat with the bot (the command line, a platform without one) had no request to settle.
 */
export async function settlePairingRequest(deps: SettleDeps, code: string, by: string, paired: { channel: string; userId: string }): Promise<void> {
  const at = by.indexOf(':');
  if (at < 0) return;
  const chat = deps
    .channels()
    .find((c) => c.name === by.slice(0, at))
    ?.directChat?.(by.slice(at + 1));
  if (!chat) return;
  const markdown = pairedMarkdown(paired.channel, paired.userId, await deps.lookupName(by));
  await deps.say(chat, pairingRequestKey(code, chat.chatKey), { type: 'text', markdown });
}
