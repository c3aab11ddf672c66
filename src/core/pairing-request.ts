/**
 * The request an admin gets when someone unknown asks to pair: a ledger row in the admin's
 * direct chat with an approve button, under a key that the approval edits in place.
 */
import type { Button } from '../contract/actions.js';
import { pairingApproveLabel } from '../delivery/notices.js';

/** The button of an admin's pairing request. */
export function pairingButton(code: string): Button {
  return { label: pairingApproveLabel(code), action: { kind: 'pairing', code } };
}

/** Ledger key of the pairing request shown to one admin in their direct chat (edited once decided). */
export function pairingRequestKey(code: string, adminChatKey: string | number): string {
  return `pairing:${code}:${adminChatKey}`;
}
