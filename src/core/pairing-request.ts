/**
 * The request an admin gets when someone unknown asks to pair: a ledger row in the admin's
 * direct chat with an approve button, under a key that the approval edits in place.
 */
import type { Logger } from 'pino';
import type { Button } from '../contract/actions.js';
import type { Channel } from '../contract/channel.js';
import type { ChatRef } from '../contract/chat.js';
import type { TextContent } from '../contract/content.js';
import type { PairingOutcome, PeopleNames } from '../contract/core.js';
import { pairedMarkdown, pairingApproveLabel } from '../delivery/notices.js';
import type { AccessControl } from './access.js';

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
  names: Pick<PeopleNames, 'lookup'>;
}

/** What {@link approvePairing} needs of the core. */
export interface ApproveDeps extends SettleDeps {
  access: Pick<AccessControl, 'approvePairing'>;
  /** Send the pending welcomes (a ledger row per newly paired user, once across processes). */
  welcome(): Promise<void>;
  log: Logger;
}

/**
 * Approve a pairing code (an admin's tap on the request's button): the one welcome goes out now, not
 * at the next sweep, and the request in the approver's direct chat says who was let in.
 */
export async function approvePairing(deps: ApproveDeps, code: string, by: string): Promise<PairingOutcome> {
  const result = await deps.access.approvePairing(code, by);
  if (!result.ok) return result;
  await deps.welcome().catch((err: unknown) => deps.log.warn({ err }, 'pairing welcome failed; the sweep retries'));
  await settlePairingRequest(deps, code, by, result).catch((err: unknown) =>
    deps.log.info({ err, by }, 'the pairing request was not updated'),
  );
  return result;
}

/**
 * Once an admin approved a pairing, the request in their direct chat says who was let in and
 * by whom, without its button (the same ledger row, edited in place). An approver without a
 * direct chat with the bot (the command line, a platform without one) had no request to settle.
 */
export async function settlePairingRequest(
  deps: SettleDeps,
  code: string,
  by: string,
  paired: { channel: string; userId: string },
): Promise<void> {
  const at = by.indexOf(':');
  if (at < 0) return;
  const chat = deps
    .channels()
    .find((c) => c.name === by.slice(0, at))
    ?.directChat?.(by.slice(at + 1));
  if (!chat) return;
  const markdown = pairedMarkdown(paired.channel, paired.userId, await deps.names.lookup(by));
  await deps.say(chat, pairingRequestKey(code, chat.chatKey), { type: 'text', markdown });
}
