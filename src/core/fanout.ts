/**
 * Event fan-out: every event of a turn goes to the listeners at once and, through a queue per
 * conversation, to the channel that serves it, so a slow platform never blocks a turn and a chat
 * sees its events in order. Every channel gets them through the presenter, the one way out
 * (`Presenter.present`).
 */
import type { Logger } from 'pino';
import type { Presenter } from '../delivery/presenter.js';
import type { CoreEvent } from '../contract/events.js';
import type { LatencyClock } from './latency.js';
import type { ChannelRouter } from './routing.js';
import { presentChildEvent } from './subagents.js';

/** Listener for every event of every conversation (tests, metrics, logging). */
export type EventListener = (conversationId: string, event: CoreEvent) => void;

/** Sends each conversation's events to its listeners and its channel, in order. */
export class EventFanout {
  private readonly listeners = new Set<EventListener>();
  /** The last queued hand-over per conversation; the next one is chained onto it. */
  private readonly handovers = new Map<string, Promise<void>>();

  constructor(
    private readonly router: ChannelRouter,
    private readonly presenter: Presenter,
    private readonly latency: LatencyClock,
    private readonly log: Logger,
  ) {}

  /** Observe every event (returns an unsubscribe function). */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Queue an event for the conversation's channel; listeners see it at once. A sub-agent's events
   * go to its root chat, labelled with the child (or dropped when they are its answer to the parent).
   */
  emit(conversationId: string, event: CoreEvent): void {
    if (event.type === 'turn_done') this.latency.turnEnded(conversationId, event.status);
    for (const l of this.listeners) {
      try {
        l(conversationId, event);
      } catch (err) {
        this.log.warn({ err }, 'event listener failed');
      }
    }
    const previous = this.handovers.get(conversationId) ?? Promise.resolve();
    const next = previous
      .then(() => this.toChannel(conversationId, event))
      .catch((err) =>
        this.log.warn({ err, conversationId, event: event.type }, 'event hand-over to the channel failed'),
      );
    this.handovers.set(conversationId, next);
    void next.finally(() => {
      if (this.handovers.get(conversationId) === next) this.handovers.delete(conversationId);
    });
  }

  /** Resolves once every event queued so far reached its channel (or failed to). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.handovers.values()]);
  }

  private async toChannel(conversationId: string, event: CoreEvent): Promise<void> {
    const conv = await this.router.conversation(conversationId);
    const channel = conv && (await this.router.channelForChat(conv));
    if (!conv || !channel) return;
    const chat = conv.parent_id ? await this.router.chatOf(conv) : conv;
    const shown = conv.parent_id ? presentChildEvent(conv, event) : event;
    if (!shown) return;
    // Awaited: an event surface is shown the next event only once it showed this one.
    await this.presenter.present(chat, channel, shown);
  }
}
