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
 * (the presenter treats the old one as gone): the bookkeeping is the kit's `StepMessages`. A
 * call that finished before its line was first shown, a place without native streams, and a workspace that refuses task chunks (logged once,
 * for the rest of the run) get today's task card.
 */
import type { types } from '@slack/bolt';
import type { Logger } from 'pino';
import { refusalCodes, StepMessages } from '../../kit/index.js';
import { taskCard } from './blocks.js';
import type { SlackStreams } from './stream.js';
import { platformCode, type SlackAddress, waitingOutShort } from './surface.js';

/** A task card block as the surface builds it (`blocks.ts` taskCardBlock). */
type TaskCard = Record<string, unknown>;

/** A `task_update` chunk. */
type TaskChunk = types.TaskUpdateChunk;

/** What Slack answers chunks it does not take (a workspace without task chunks). */
const REFUSED_CHUNKS = new Set(['invalid_chunks', 'invalid_arguments', 'invalid_blocks']);

/** The plan block's title when a steps message is redrawn with chat.update. */
const PLAN_TITLE = 'Tool calls';

/** A task card's output as `taskCard` (`blocks.ts`) draws it: its text, one element of one rich text line. */
type CardOutput = { elements: [{ elements: [{ text: string }] }] };

/** A task card as a `task_update` chunk with this id. */
export function chunkOf(card: TaskCard, id: string): TaskChunk {
  const output = (card.output as CardOutput | undefined)?.elements[0].elements[0].text;
  return {
    type: 'task_update',
    id,
    title: String(card.title),
    status: card.status as TaskChunk['status'],
    ...(output ? { output } : {}),
  };
}

/** Options of {@link TaskStreams}. */
export interface TaskStreamsOptions {
  streams: SlackStreams;
  /** Whether tool lines show as tasks at all (`slack.task_cards` and the workspace's answers so far). */
  taskCards(): boolean;
  log: Logger;
  now?: () => number;
  /** Longest Retry-After a redraw waits out in place, seconds (default `SHORT_RETRY_AFTER_SECONDS`). */
  shortRetryAfterSeconds?: number;
}

/** Tool lines as tasks of a shared streamed message (see the module's note). */
export class TaskStreams {
  /** Task chunks of steps messages, until a workspace refuses them (`steps.native`). */
  readonly steps: StepMessages<SlackAddress, TaskChunk>;

  constructor(private readonly options: TaskStreamsOptions) {
    const { streams } = options;
    this.steps = new StepMessages({
      stream: {
        start: (address, chunk) => streams.startChunks(address, [chunk]),
        append: (address, ts, chunks, stop) => streams.appendChunks(address, ts, chunks, stop),
        stop: async (address, ts) => void (await streams.stop(address, ts)),
        redraw: (address, ts, tasks) =>
          waitingOutShort(
            () =>
              streams.redraw(address, ts, tasks.map((t) => t.title).join('\n'), [
                {
                  type: 'plan',
                  title: PLAN_TITLE,
                  tasks: tasks.map((t) => taskCard(t.id, t.title, t.status, t.output)),
                },
              ]),
            options.shortRetryAfterSeconds,
          ),
      },
      thread: (address) => `${address.slackChannel}:${address.threadTs ?? ''}`,
      rolloverMs: streams.rolloverMs,
      log: options.log,
      now: options.now,
      refused: {
        message:
          'slack: the workspace refuses task chunks in streams; tool progress shows as task cards for the rest of this run',
        refusal: refusalCodes(platformCode, REFUSED_CHUNKS),
      },
    });
  }

  /** Whether a tool line to this address goes into a steps message now. */
  usable(address: SlackAddress): boolean {
    return this.steps.native.inForce && this.options.taskCards() && this.options.streams.available(address);
  }

  /**
   * Show a tool line (its task card block) as a task of the thread's steps message (started for a
   * running call when none is open). @returns its reference, or null: post it the old way.
   */
  post(address: SlackAddress, card: TaskCard): Promise<string | null> {
    return this.steps.post(address, (id) => chunkOf(card, id), card.status === 'in_progress');
  }

  /** Bring a task up to date. @throws StepMessageGone when its message must be posted anew. */
  edit(address: SlackAddress, ref: { ts: string; id: string }, card: TaskCard): Promise<void> {
    return this.steps.edit(address, ref, chunkOf(card, ref.id));
  }

  /** Stop the thread's open steps message: something else comes below it. */
  close(address: SlackAddress): Promise<void> {
    return this.steps.close(address);
  }
}
