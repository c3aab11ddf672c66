/**
 * The channel of job runs (`job:<id>` conversations). Nobody reads a job's own conversation, so
 * this channel renders nothing itself: it hands cards, questions and files to the conversation
 * the job reports to, and tells the job service when a run's turn ends.
 */
import type { Channel, ChannelCapability } from '../contract/channel.js';
import type { ChannelCore } from '../contract/roles.js';
import type { CoreEvent } from '../contract/events.js';
import { JOB_CHANNEL } from '../store/repos/jobs.js';
import type { Conversation } from '../store/schema.js';
import type { OutboundFile } from '../contract/chat.js';
import type { EventSurface } from '../contract/surface.js';

/** What the channel forwards to. */
export interface JobEventSink {
  onJobEvent(jobId: string, event: CoreEvent): Promise<void>;
  /** Whether the chat this job reports to is served by this process. */
  reportsHere(jobId: string): Promise<boolean>;
  sendJobFile(jobId: string, file: OutboundFile): Promise<void>;
}

/** The `job` channel. */
export class JobChannel implements Channel {
  readonly name = JOB_CHANNEL;
  /** Files go to the reporting chat, whose channel refuses them clearly if it cannot. */
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>(['attachments']);

  constructor(
    private readonly sink: JobEventSink,
    /** Unattended runs wait this long for a decision (`jobs.approval_timeout_seconds`). */
    readonly approvalTimeoutSeconds: number,
  ) {}

  async start(_core: ChannelCore): Promise<void> {}

  async stop(): Promise<void> {}

  runsHere(conversation: Conversation): Promise<boolean> {
    return this.sink.reportsHere(conversation.chat_key);
  }

  /** A run's events and files go on to the job service (the reporting chat's presenter shows them). */
  readonly eventSurface: EventSurface = {
    show: (conversation, event) => this.sink.onJobEvent(conversation.chat_key, event),
    sendFile: (conversation, file) => this.sink.sendJobFile(conversation.chat_key, file),
  };
}
