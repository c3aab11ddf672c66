/**
 * Which channel serves a conversation in this process. Several processes may share one database
 * (a terminal chat beside the server, instances behind a load balancer); each one shows, resumes
 * and decides only the conversations of the channels it runs, and of those only the ones each
 * channel says it serves. A sub-agent's conversation is served where its root chat is.
 */
import type { Db } from '../store/db.js';
import { hotCache } from '../store/hot-cache.js';
import type { Conversation } from '../store/schema.js';
import type { Channel } from '../contract/channel.js';

/** The channels of this process and the conversations they serve. */
export class ChannelRouter {
  private readonly channels = new Map<string, Channel>();

  constructor(private readonly db: Db) {}

  /** Serve conversations of this channel in this process (a later one of the same name replaces it). */
  add(channel: Channel): void {
    this.channels.set(channel.name, channel);
  }

  /** Every registered channel, in registration order. */
  list(): Channel[] {
    return [...this.channels.values()];
  }

  /** Whether a channel of this name runs in this process. */
  has(name: string): boolean {
    return this.channels.has(name);
  }

  /** The channel that serves a conversation in this process, if any (see {@link Channel.serves}). */
  channelFor(conv: Conversation): Channel | undefined {
    const channel = this.channels.get(conv.channel);
    if (!channel) return undefined;
    return (channel.serves?.(conv) ?? true) ? channel : undefined;
  }

  /** {@link channelFor} for any conversation: a sub-agent is served where its root chat is. */
  async channelForChat(conv: Conversation): Promise<Channel | undefined> {
    return this.channelFor(conv.parent_id ? await this.chatOf(conv) : conv);
  }

  /** Whether this process serves a conversation (its channel is here and serves it). */
  async serves(conversationId: string): Promise<boolean> {
    const conv = await this.conversation(conversationId);
    return !!conv && this.channelFor(conv) !== undefined;
  }

  /** Whether this process serves conversations of a channel (and `conv`, when it exists already). */
  servesChannel(channel: string, conv: Conversation | undefined): boolean {
    return this.channels.has(channel) && (!conv || this.channelFor(conv) !== undefined);
  }

  /** A conversation row, from memory while no process has changed one (see `store/hot-cache.ts`). */
  conversation(id: string): Promise<Conversation | undefined> {
    return hotCache(this.db).conversation(id);
  }

  /** The chat a conversation's messages appear in: a sub-agent's goes up to its root conversation. */
  async chatOf(conv: Conversation): Promise<Conversation> {
    let current = conv;
    while (current.parent_id) {
      const parent = await this.conversation(current.parent_id);
      if (!parent) break;
      current = parent;
    }
    return current;
  }
}
