/**
 * `switchboard chat --jsonl`: the core over JSON lines on stdin/stdout, for scripts and tests.
 * Conversations live on the `console` channel under the chosen name, so `chat` and
 * `chat --jsonl` continue the same conversation, and it persists across restarts.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type {
  ChannelCore,
  CoreEvent,
  Conversation,
  Channel,
  ChannelCapability,
  EventSurface,
  OutboundFile,
} from '../../kit/index.js';
import { eventToLine, parseInputLine, refusalText, submitRefusal } from './protocol.js';

/** The local operator's principal. */
export const LOCAL_USER = 'local';
const PRINCIPAL = `console:${LOCAL_USER}`;

/** Options of {@link JsonlChannel}. */
export interface JsonlOptions {
  conversation: string;
  input: Readable;
  output: Writable;
  /** Called when input ends and the core is idle. */
  onEnd?: () => void;
}

/** The JSONL channel: its own event surface (the presenter hands it every event, written as a line). */
export class JsonlChannel implements Channel, EventSurface {
  readonly name = 'console';
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set(['attachments']);
  readonly eventSurface: EventSurface = this;
  private core: ChannelCore | null = null;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly options: JsonlOptions) {}

  /** Every output line names the conversation it belongs to. */
  private write(line: Record<string, unknown>): void {
    this.options.output.write(`${JSON.stringify({ ...line, conversation: this.options.conversation })}\n`);
  }

  /** Only the conversation this session was opened on: others wait until someone opens them. */
  serves(conversation: Conversation): boolean {
    return conversation.chat_key === this.options.conversation && conversation.thread_key === '';
  }

  async start(core: ChannelCore): Promise<void> {
    this.core = core;
    const rl = createInterface({ input: this.options.input, crlfDelay: Number.POSITIVE_INFINITY });
    rl.on('line', (line) => {
      if (!line.trim()) return;
      // Lines are handled in order: an approve right after a message must see the message first.
      this.pending = this.pending
        .then(() => this.handle(line))
        .catch((err) => this.write({ type: 'error', message: String(err) }));
    });
    rl.on('close', () => {
      void this.pending.then(() => this.options.onEnd?.());
    });
  }

  private async handle(line: string): Promise<void> {
    const core = this.core;
    if (!core) return;
    const parsed = parseInputLine(line);
    if (!parsed.ok) {
      this.write({ type: 'error', message: parsed.error });
      return;
    }
    const ref = { channel: this.name, chatKey: this.options.conversation };
    // Cards are decided as taps are, by the same rules; only those shown in this conversation.
    const tap = { within: ref };
    const input = parsed.value;
    switch (input.type) {
      case 'message': {
        // Lines are never delivered twice: no inbound key to record.
        const r = await core.receive({ ...ref, userId: LOCAL_USER, userName: 'local', text: input.text, direct: true });
        const refused = submitRefusal(r);
        if (refused) this.write({ type: 'error', message: refused });
        return;
      }
      case 'approve': {
        const r = await core.act({ kind: 'approval', id: input.id, choice: input.scope }, PRINCIPAL, tap);
        if (!r.ok) this.write({ type: 'error', message: `approve ${input.id}: ${refusalText(r.reason ?? r.text)}` });
        return;
      }
      case 'deny': {
        const denial =
          input.note === undefined
            ? ({ kind: 'approval', id: input.id, choice: 'no_note' } as const)
            : ({ kind: 'denial', id: input.id, note: input.note } as const);
        const r = await core.act(denial, PRINCIPAL, tap);
        if (!r.ok) this.write({ type: 'error', message: `deny ${input.id}: ${refusalText(r.reason ?? r.text)}` });
        return;
      }
      case 'answer': {
        const r = await core.act({ kind: 'answer', id: input.id, text: input.text }, PRINCIPAL, tap);
        if (!r.ok) this.write({ type: 'error', message: `answer ${input.id}: ${refusalText(r.reason ?? r.text)}` });
        return;
      }
      case 'stop': {
        if (!(await core.chats.stop(ref, PRINCIPAL))) this.write({ type: 'error', message: 'nothing to stop' });
        return;
      }
      case 'command': {
        const name = input.name.replace(/^\//, '').toLowerCase();
        const answer = await core.command(name, input.args.trim(), {
          by: PRINCIPAL,
          chat: { ...ref, threadKey: '' },
          ref,
          shared: false,
          spell: (n) => `/${n}`,
        });
        this.write({ type: 'command', name, text: answer.markdown });
        return;
      }
    }
  }

  async stop(): Promise<void> {}

  /** One event as its protocol line (CONTRACT.md), or nothing for events the protocol leaves out. */
  async show(_conversation: Conversation, event: CoreEvent): Promise<void> {
    const line = eventToLine(event);
    if (line) this.write(line);
  }

  async sendFile(_conversation: Conversation, file: OutboundFile): Promise<void> {
    this.write({ type: 'attachment', path: file.path, caption: file.caption ?? null });
  }
}
