/**
 * Telling newly paired users they were let in: once, in the chat where they asked for a code,
 * whichever process approved it (an admin's button here, `switchboard pair approve` elsewhere).
 * The core calls this from its periodic sweep; a conditional update makes it once across processes,
 * and the welcome is a delivery-ledger row written in the same transaction, so a crash between the
 * claim and the send cannot lose it.
 */
import { enqueueNotification } from '../delivery/ledger.js';
import type { Db } from '../store/db.js';
import * as convRepo from '../store/repos/conversations.js';
import { claimWelcome, unwelcomedCodes } from '../store/repos/pairing.js';
import type { Conversation } from '../store/schema.js';
import type { CoreEvent } from '../contract/events.js';

/** The title line of the welcome notification. */
export const WELCOME_TITLE = 'Welcome';

/** The text of the welcome. */
export const WELCOME_TEXT = "You're in: the operator approved your pairing code. Send a message to start.";

/** What the welcome needs from the core. */
export interface WelcomeDeps {
  db: Db;
  /** Whether this process serves conversations of the channel (and this one, when it exists). */
  servesChannel(channel: string, conversation: Conversation | undefined): boolean;
  emit(conversationId: string, event: CoreEvent): void;
}

/** Send every pending welcome this process serves. */
export async function welcomePaired(deps: WelcomeDeps): Promise<void> {
  for (const code of await unwelcomedCodes(deps.db)) {
    const key = { channel: code.channel, chatKey: code.chat_key, threadKey: '' };
    const existing = await convRepo.findActiveConversation(deps.db, key);
    if (!deps.servesChannel(code.channel, existing)) continue;
    const conv = await deps.db.transaction().execute(async (trx) => {
      if (!(await claimWelcome(trx, code.code, Date.now()))) return undefined;
      const c = existing ?? (await convRepo.ensureConversation(trx, key, `${code.channel}:${code.user_id}`));
      await enqueueNotification(trx, {
        conversationId: c.id,
        key: `welcome:${code.code}`,
        title: WELCOME_TITLE,
        text: WELCOME_TEXT,
      });
      return c;
    });
    // The event prints it on a terminal and makes the presenter deliver the row now.
    if (conv) deps.emit(conv.id, { type: 'notification', text: WELCOME_TEXT, source: WELCOME_TITLE });
  }
}
