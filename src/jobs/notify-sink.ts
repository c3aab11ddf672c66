/**
 * The one door every outbound notification of jobs, `notify`, `switchboard notify` and
 * `POST /api/notify` goes through. Callers give a conversation, the text, a title and an
 * idempotency key (`notify:<job id>:<occurrence>`, `notify:call:<tool call id>`, …) that names the
 * notification across retries and restarts.
 *
 * Today the sink emits the core's `notification` event to the conversation's channel, which
 * renders it (with the channel's per-chat queue and 429 handling). It is kept this narrow so the
 * delivery ledger can take its place without touching any caller.
 */
import type { CoreEvent } from '../core/events.js';
import type { Db } from '../store/db.js';
import { ensureConversation } from '../store/repos/conversations.js';
import type { ChatAddress } from './home.js';

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
  emit(conversationId: string, event: CoreEvent): void;
}

/** Sends notifications into conversations. */
export class NotifySink {
  constructor(private readonly host: SinkHost) {}

  /**
   * Queue a notification for a conversation and deliver it now.
   * @returns false when nothing new was queued.
   */
  async send(conversationId: string, n: Notification): Promise<boolean> {
    const queued = await this.record(this.host.db, conversationId, n);
    if (queued) this.announce(conversationId, n);
    return queued;
  }

  /**
   * Record a notification inside the caller's transaction; {@link NotifySink.announce} it after
   * the commit. (Until the delivery ledger holds notifications there is nothing to write here.)
   */
  async record(_db: Db, _conversationId: string, _n: Notification): Promise<boolean> {
    return true;
  }

  /** Hand a recorded notification to the conversation's channel, once its transaction committed. */
  announce(conversationId: string, n: Notification): void {
    this.host.emit(conversationId, { type: 'notification', text: n.text, source: n.source, title: titleOf(n) });
  }

  /** The conversation of a chat address (created for a chat that has none yet). */
  async conversationFor(address: ChatAddress): Promise<string> {
    const conv = await ensureConversation(this.host.db, address, null);
    return conv.id;
  }
}

/** Every notification has a title line, so it reads as one (`Notification` when none was given). */
function titleOf(n: Notification): string {
  return n.title?.trim() || 'Notification';
}
