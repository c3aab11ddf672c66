/**
 * What a tool call may reach on behalf of the person it acts for (the turn's requester; a job's
 * run acts for the job's owner): whether that person has admin powers now — read at each call,
 * never remembered — which decides who may change what everyone shares.
 */
import { isLocalChannel } from './access.js';

/**
 * Whether `principal` acts with admin powers now: the local operator (terminal, JSONL) always,
 * anyone else when `isAdmin` (read from the store) says so.
 */
export async function actsAsAdmin(
  isAdmin: (principal: string) => Promise<boolean>,
  principal: string,
): Promise<boolean> {
  return isLocalChannel(principal.slice(0, Math.max(0, principal.indexOf(':')))) || (await isAdmin(principal));
}
