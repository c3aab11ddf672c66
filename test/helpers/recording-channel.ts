/**
 * A channel for tests: records every event it is shown (an event surface) and every file it is asked to
 * send, per conversation. Capabilities are configurable to test per-channel tool offering.
 */
import type { Channel, ChannelCapability } from '../../src/contract/channel.js';
import type { ChannelCore } from '../../src/contract/roles.js';
import type { CoreEvent } from '../../src/contract/events.js';
import type { Conversation } from '../../src/store/schema.js';
import type { OutboundFile } from '../../src/contract/chat.js';
import type { EventSurface } from '../../src/contract/surface.js';

export class RecordingChannel implements Channel, EventSurface {
  readonly capabilities: ReadonlySet<ChannelCapability>;
  readonly printed: Array<{ conversationId: string; event: CoreEvent }> = [];
  readonly files: Array<{ conversationId: string; file: OutboundFile }> = [];
  core: ChannelCore | null = null;
  readonly eventSurface: EventSurface = this;

  constructor(
    readonly name = 'test',
    capabilities: ChannelCapability[] = ['attachments'],
  ) {
    this.capabilities = new Set(capabilities);
  }

  async start(core: ChannelCore): Promise<void> {
    this.core = core;
  }

  async stop(): Promise<void> {}

  async show(conversation: Conversation, event: CoreEvent): Promise<void> {
    this.printed.push({ conversationId: conversation.id, event });
  }

  async sendFile(conversation: Conversation, file: OutboundFile): Promise<void> {
    this.files.push({ conversationId: conversation.id, file });
  }

  /** Events of one type, optionally of one conversation. */
  eventsOf<T extends CoreEvent['type']>(type: T, conversationId?: string): Array<Extract<CoreEvent, { type: T }>> {
    return this.printed
      .filter((d) => d.event.type === type && (!conversationId || d.conversationId === conversationId))
      .map((d) => d.event as Extract<CoreEvent, { type: T }>);
  }
}
