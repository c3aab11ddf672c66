/**
 * The one door every outbound notification of jobs, `notify`, `switchboard notify` and
 * `POST /api/notify` goes through: a row of the delivery ledger with the caller's idempotency key
 * (`notify:<job id>:<occurrence>`, `notify:call:<tool call id>`, …). Written in the caller's
 * transaction when it passes one, so a notification exists exactly when the state it reports
 * does; a crash or a 429 delays it, never loses or doubles it.
 */
import type { CoreEvent } from '../contract/events.js';
import { enqueueNotification } from '../delivery/ledger.js';
import type { Db } from '../store/db.js';
import { ensureConversation } from '../store/repos/conversations.js';
import type { FullChatRef } from './home.js';

/** One notification. */
export interface Notification {
  /** Markdown body. */
  text: string;
  /** Title line (a job's name, `notify`'s title); rendered bold above the body. */
  title?: string;
  /** Who sent it: `job:<id>`, `tool:notify`, `cli`, `api`. */
  source: string;
  /** Names this notification across retries and restarts. */
  key: string;
}

/** What the sink needs of the core. */
export interface SinkHost {
  readonly db: Db;
  /** Announce it: terminals print the event, the presenter delivers the conversation's rows. */
  emit(conversationId: string, event: CoreEvent): void;
}

/** Sends notifications into conversations. */
export class NotifySink {
  constructor(private readonly host: SinkHost) {}

  /**
   * Queue a notification for a conversation and deliver it now.
   * @returns false when a notification with this key was queued before (nothing new is sent).
   */
  async send(conversationId: string, n: Notification): Promise<boolean> {
    const queued = await this.record(this.host.db, conversationId, n);
    if (queued) this.announce(conversationId, n);
    return queued;
  }

  /** Queue a notification inside the caller's transaction; {@link NotifySink.announce} it after commit. */
  record(db: Db, conversationId: string, n: Notification): Promise<boolean> {
    return enqueueNotification(db, { conversationId, key: n.key, title: titleOf(n), text: n.text });
  }

  /** Deliver what {@link NotifySink.record} queued, once its transaction committed. */
  announce(conversationId: string, n: Notification): void {
    this.host.emit(conversationId, { type: 'notification', text: n.text, source: n.source, title: titleOf(n) });
  }

  /** The conversation of a chat address (created for a chat that has none yet). */
  async conversationFor(address: FullChatRef): Promise<string> {
    const conv = await ensureConversation(this.host.db, address, null);
    return conv.id;
  }
}

/** Every notification has a title line, so it reads as one (`Notification` when none was given). */
function titleOf(n: Notification): string {
  return n.title?.trim() || 'Notification';
}
