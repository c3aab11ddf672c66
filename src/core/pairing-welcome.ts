/**
 * Telling newly paired users they were let in: once, in the chat where they asked for a code,
 * whichever process approved it (an admin's button here, `switchboard pair approve` elsewhere).
 * The core calls this from its periodic sweep; a conditional update makes it once across processes.
 */
import type { Db } from '../store/db.js';
import * as convRepo from '../store/repos/conversations.js';
import { claimWelcome, unwelcomedCodes } from '../store/repos/pairing.js';
import type { Conversation } from '../store/schema.js';
import type { CoreEvent } from './events.js';

/** The text of the welcome. */
export const WELCOME_TEXT = "You're in: the operator approved your pairing code. Send a message to start.";

/** What the welcome needs from the core. */
export interface WelcomeDeps {
  db: Db;
  /** Whether this process serves conversations of the channel (and this one, when it exists). */
  serves(channel: string, conversation: Conversation | undefined): boolean;
  emit(conversationId: string, event: CoreEvent): void;
}

/** Send every pending welcome this process can deliver. */
export async function welcomePaired(deps: WelcomeDeps): Promise<void> {
  for (const code of await unwelcomedCodes(deps.db)) {
    const key = { channel: code.channel, chatKey: code.chat_key, threadKey: '' };
    const existing = await convRepo.findActiveConversation(deps.db, key);
    if (!deps.serves(code.channel, existing)) continue;
    if (!(await claimWelcome(deps.db, code.code, Date.now()))) continue;
    const conv = existing ?? (await convRepo.ensureConversation(deps.db, key, `${code.channel}:${code.user_id}`));
    deps.emit(conv.id, { type: 'notification', text: WELCOME_TEXT, source: 'pairing' });
  }
}
