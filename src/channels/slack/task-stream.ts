/**
 * Tool progress where replies stream natively (a thread): the tool calls in a row share one
 * streamed message, each a `task_update` chunk going from in progress to complete or error —
 * Slack's timeline of an agent's steps, one message for the steps instead of one task card
 * message per call. The reply that follows goes below it as its own streamed message (the steps'
 * stream is stopped first), as does anything else posted in the thread.
 *
 * Each tool line stays its own ledger row: its reference is `<ts>#<task id>`, the shared message
 * and the task in it. Its updates are appended as chunks to the open stream; a stream Slack
 * expired, or one this process stopped, is redrawn whole with chat.update as a `plan` block of
 * the tasks it knows. After a restart (nothing known of the message) the task's update stops the
 * stream with it when Slack still keeps it open, else the line is posted again as a new message
 * (the presenter treats the old one as gone). A call that finished before its line was first
 * shown, a place without native streams, and a workspace that refuses task chunks (logged once,
 * for the rest of the run) get today's task card.
 */
import type { types } from '@slack/bolt';
import type { Logger } from 'pino';
import { NativeFallback } from '../../kit/index.js';
import type { SlackStreams } from './stream.js';
import { platformCode, type SlackAddress, waitingOutShort } from './surface.js';
import { TaskMessageGone, type TaskLines } from './task-ref.js';

/** A task card block as the surface builds it (`blocks.ts` taskCardBlock). */
type TaskCard = Record<string, unknown>;

/** A `task_update` chunk. */
type TaskChunk = types.TaskUpdateChunk;

/** What Slack answers chunks it does not take (a workspace without task chunks). */
const REFUSED_CHUNKS = new Set(['invalid_chunks', 'invalid_arguments', 'invalid_blocks']);

/** Messages whose tasks are remembered after their stream closed, for a redraw. */
const KNOWN_MAX = 200;

/** The plan block's title when a steps message is redrawn with chat.update. */
const PLAN_TITLE = 'Tool calls';

interface StepsMessage {
  ts: string;
  startedAt: number;
  open: boolean;
  /** Its tasks by id, in order. */
  tasks: Map<string, TaskChunk>;
}

/** A task card's text output (its rich text's words). */
function outputOf(card: TaskCard): string {
  const output = card.output as { elements?: Array<{ elements?: Array<{ text?: string }> }> } | undefined;
  return (output?.elements ?? [])
    .flatMap((e) => e.elements ?? [])
    .map((x) => x.text ?? '')
    .join('');
}

/** A task card as a `task_update` chunk with this id. */
export function chunkOf(card: TaskCard, id: string): TaskChunk {
  const output = outputOf(card);
  return {
    type: 'task_update',
    id,
    title: String(card.title),
    status: card.status as TaskChunk['status'],
    ...(output ? { output } : {}),
  };
}

/** A chunk as a task card of a plan block (the redraw). */
function cardOf(chunk: TaskChunk): TaskCard {
  return {
    type: 'task_card',
    task_id: chunk.id,
    title: chunk.title,
    status: chunk.status,
    ...(chunk.output
      ? {
          output: {
            type: 'rich_text',
            elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: chunk.output }] }],
          },
        }
      : {}),
  };
}

/** Options of {@link TaskStreams}. */
export interface TaskStreamsOptions {
  streams: SlackStreams;
  /** Whether tool lines show as tasks at all (`slack.task_cards` and the workspace's answers so far). */
  taskCards(): boolean;
  /** Replace a message's blocks (chat.update). */
  update(address: SlackAddress, ts: string, text: string, blocks: unknown[]): Promise<void>;
  log: Logger;
  now?: () => number;
}

/** Tool lines as tasks of a shared streamed message (see the module's note). */
export class TaskStreams implements TaskLines<SlackAddress> {
  /** The open steps message of each thread. */
  private readonly open = new Map<string, StepsMessage>();
  /** Steps messages by ts (open and recently closed), for updates and redraws. */
  private readonly known = new Map<string, StepsMessage>();
  /** Task chunks, until a workspace refuses them. */
  readonly chunks: NativeFallback;

  constructor(private readonly options: TaskStreamsOptions) {
    this.chunks = new NativeFallback({
      enabled: true,
      log: options.log,
      message:
        'slack: the workspace refuses task chunks in streams; tool progress shows as task cards for the rest of this run',
      refusal: (err) => {
        const code = platformCode(err);
        return code && REFUSED_CHUNKS.has(code) ? code : undefined;
      },
    });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Whether a tool line to this address goes into a steps message now. */
  usable(address: SlackAddress): boolean {
    return this.chunks.inForce && this.options.taskCards() && this.options.streams.available(address);
  }

  /**
   * Show a tool line as a task of the thread's steps message (started for a running call when
   * none is open). @returns its reference, or null: post it the old way.
   */
  async post(address: SlackAddress, card: TaskCard): Promise<string | null> {
    return this.chunks.run(true, async (native) => {
      if (!native) return null;
      const key = keyOf(address);
      let steps = this.open.get(key);
      if (steps && this.now() - steps.startedAt >= this.options.streams.rolloverMs) {
        await this.close(address);
        steps = undefined;
      }
      if (steps) {
        const id = `t${steps.tasks.size + 1}`;
        const chunk = chunkOf(card, id);
        if (await this.options.streams.appendChunks(address, steps.ts, [chunk])) {
          steps.tasks.set(id, chunk);
          return `${steps.ts}#${id}`;
        }
        // Expired meanwhile: the next task opens a new message.
        steps.open = false;
        this.open.delete(key);
      }
      // A finished call does not open a stream of its own.
      if (card.status !== 'in_progress') return null;
      const chunk = chunkOf(card, 't1');
      const ts = await this.options.streams.startChunks(address, [chunk]);
      if (ts === null) return null;
      const started: StepsMessage = { ts, startedAt: this.now(), open: true, tasks: new Map([['t1', chunk]]) };
      this.open.set(key, started);
      this.remember(started);
      return `${ts}#t1`;
    });
  }

  /** Bring a task up to date. @throws TaskMessageGone when its message must be posted anew. */
  async edit(address: SlackAddress, ref: { ts: string; id: string }, card: TaskCard): Promise<void> {
    const chunk = chunkOf(card, ref.id);
    const steps = this.known.get(ref.ts);
    if (!steps) {
      // Nothing known (a restart): Slack may still keep it open; the task's last word stops it.
      if (await this.options.streams.appendChunks(address, ref.ts, [chunk], true)) return;
      throw new TaskMessageGone(`slack: the steps message ${ref.ts} no longer streams`);
    }
    steps.tasks.set(ref.id, chunk);
    if (steps.open && (await this.options.streams.appendChunks(address, steps.ts, [chunk]))) return;
    if (steps.open) {
      steps.open = false;
      if (this.open.get(keyOf(address)) === steps) this.open.delete(keyOf(address));
    }
    const tasks = [...steps.tasks.values()];
    await waitingOutShort(() =>
      this.options.update(address, steps.ts, tasks.map((t) => t.title).join('\n'), [
        { type: 'plan', title: PLAN_TITLE, tasks: tasks.map(cardOf) },
      ]),
    );
  }

  /** Stop the thread's open steps message: something else comes below it. */
  async close(address: SlackAddress): Promise<void> {
    const key = keyOf(address);
    const steps = this.open.get(key);
    if (!steps) return;
    this.open.delete(key);
    steps.open = false;
    await this.options.streams
      .stop(address, steps.ts)
      .catch((err: unknown) => this.options.log.debug({ err }, 'slack: stopping a steps message failed'));
  }

  private remember(steps: StepsMessage): void {
    this.known.set(steps.ts, steps);
    if (this.known.size > KNOWN_MAX) {
      const oldest = this.known.keys().next().value;
      if (oldest !== undefined) this.known.delete(oldest);
    }
  }
}

function keyOf(address: SlackAddress): string {
  return `${address.slackChannel}:${address.threadTs ?? ''}`;
}
