/**
 * The seam between the core and a chat platform. An adapter turns platform events into calls on
 * {@link CoreApi} and renders {@link CoreEvent}s; it never runs the model itself.
 */
import type { Conversation } from '../store/schema.js';
import type { CoreEvent } from '../core/events.js';
import type { ChannelCapability, OutboundFile } from '../tools/types.js';
import type { CoreApi } from '../core/api.js';

/** One chat platform (Telegram, Slack, console, JSONL). */
export interface Channel {
  /** Stable name used in conversation rows and user ids (`telegram`, `slack`, `console`, `jsonl`). */
  readonly name: string;
  /** What the platform can do beyond text; decides which plugin tools are offered. */
  readonly capabilities: ReadonlySet<ChannelCapability>;
  /** Connect and start receiving; resolves once the channel is ready. */
  start(core: CoreApi): Promise<void>;
  /** Stop receiving new updates; in-flight rendering may finish. */
  stop(): Promise<void>;
  /**
   * Render one event of a conversation owned by this channel. Called in event order per
   * conversation; should not throw (log and carry on) — the state is in the database either way.
   */
  deliver(conversation: Conversation, event: CoreEvent): Promise<void>;
  /** Upload a file into the conversation; throws with a clear message on failure. */
  sendFile?(conversation: Conversation, file: OutboundFile): Promise<void>;
  /**
   * Whether this process serves a conversation of this channel. Default: every one. The terminal
   * channels serve only the conversation they were opened on, so a session never shows, resumes
   * or decides another conversation's turn.
   */
  serves?(conversation: Conversation): boolean;
  /** Why the channel is not healthy, or null when connected. */
  health?(): string | null;
  /**
   * How long approvals asked in this channel's conversations wait, seconds; unset =
   * `approvals.timeout_seconds`. Channels of unattended conversations (job runs) set their own.
   */
  readonly approvalTimeoutSeconds?: number;
  /**
   * Whether this process should run turns of this conversation; absent = yes. A job run is run
   * only where the chat it reports to is served, so a terminal chat over the same database never
   * takes over a Telegram job's run.
   */
  accepts?(conversation: Conversation): Promise<boolean>;
}
