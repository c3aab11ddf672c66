/**
 * The seam between the core and a chat platform. A channel turns platform events into calls on
 * {@link ChannelCore}; what people must see reaches it through the shared presenter, which drives
 * either its {@link Surface} (platforms: Telegram, Slack, Discord, the web chat) or its
 * {@link EventSurface} (the terminals and the job channel, shown the event stream itself).
 */
import type { Conversation } from '../store/schema.js';
import type { ChatRef } from './chat.js';
import type { ChannelCore } from './roles.js';
import type { EventSurface, Surface } from './surface.js';

/**
 * A capability a channel offers; a tool requiring one is only offered where it is present.
 * `direct-to-members`: the bot may open a direct chat with anyone who shares a server with it,
 * unasked (Discord), so what is for one person alone can go there instead of into a group.
 */
export type ChannelCapability = 'attachments' | 'voice' | 'direct-to-members';

/** One chat platform (Telegram, Slack, console, JSONL, web). */
export interface Channel {
  /** Stable name used in conversation rows and user ids (`telegram`, `slack`, `console`, `jsonl`). */
  readonly name: string;
  /** What the platform can do beyond text; decides which plugin tools are offered. */
  readonly capabilities: ReadonlySet<ChannelCapability>;
  /**
   * Post, edit, delete, upload and typing on the platform. A channel with a surface gets every
   * reply, card, status line, notification, attachment and error through the delivery ledger,
   * so nothing is lost in a crash.
   */
  readonly surface?: Surface;
  /** Connect and start receiving; resolves once the channel is ready. */
  start(core: ChannelCore): Promise<void>;
  /** Stop receiving new updates; in-flight rendering may finish. */
  stop(): Promise<void>;
  /**
   * Where a channel without a {@link surface} is shown the core's events and files, by the
   * presenter too (the terminal chat, JSONL, the job channel); see {@link EventSurface} for why
   * these are not messages.
   */
  readonly eventSurface?: EventSurface;
  /**
   * Whether this process serves a conversation of this channel. Default: every one. The terminal
   * channels serve only the conversation they were opened on, so a session never shows, resumes
   * or decides another conversation's turn.
   */
  serves?(conversation: Conversation): boolean;
  /**
   * The one-to-one chat with a user, where the platform names it from the user id alone
   * (Telegram: the chat id is the user id). Admins are asked there to approve a pairing code;
   * absent = the channel's admins are not asked in a chat.
   */
  directChat?(userId: string): ChatRef | undefined;
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
  runsHere?(conversation: Conversation): Promise<boolean>;
  /**
   * Shutdown, before the shared HTTP server closes: end what would hold its close (open event
   * streams; the pages reconnect to the next start).
   */
  beforeHttpClose?(): void;
}

/**
 * A channel whose people sign in by one-time links the operator makes (the web chat); `switchboard
 * start` prints the local operator's link once the port is bound.
 */
export interface LinkSignIn {
  /** A one-time login link for the HTTP server bound at `port`, valid `ttlMinutes` (default: the channel's). */
  loginLink(
    port: number,
    user: string,
    admin: boolean,
    ttlMinutes?: number,
  ): Promise<{ url: string; expiresAt: number }>;
}
