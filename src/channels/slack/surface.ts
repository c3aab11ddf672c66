/**
 * Slack as the presenter drives it: post, update, delete, upload, whisper (ephemeral messages),
 * the assistant thread's "is thinking…" status, and which failures are permanent. A reference is
 * the message's `ts`. Delivery clients retry nothing: a short 429 is waited out here
 * (`delivery/short-retry.ts`), every other failure goes back to the presenter with its class.
 * Posting is not idempotent, so a post retried as ambiguous is first looked for (`findPosted`).
 * A tool line goes as its task card while `slack.task_cards` is "auto" and the workspace takes
 * them; the first `invalid_blocks` sends it again as its context line, and so on for the run.
 * Answers in markdown blocks fall back the same way, to mrkdwn sections (`markdown-block.ts`).
 * Where replies stream natively, tool lines are tasks of one streamed message instead
 * (`task-stream.ts`; their references are `<ts>#<task id>`, the kit's `parseStepRef`), and anything else
 * posted in the thread stops that message first.
 */
import { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import {
  type ChatRef,
  classifyByCodes,
  classifyOwn,
  type Config,
  type ConfirmSend,
  type Conversation,
  type FailureClass,
  type FailureCodes,
  NativeFallback,
  type NativeStreams,
  type OutboundText,
  type OutboundUpload,
  Pacer,
  parseStepRef,
  type Part,
  type Rate,
  refusalCodes,
  RenderAgain,
  StepMessageGone,
  type Surface,
  THINKING_STATUS,
  uploadBytes,
  waitingOutShort429,
} from '../../kit/index.js';
import type { SlackApi } from './api.js';
import type { Block, CardMessage } from './blocks.js';
import { createSlackEmitter } from './emitter.js';
import { asSections, hasMarkdown } from './markdown-block.js';

type WebClient = webApi.WebClient;

/** Slack's limit on posting: ≈1 message/s per channel (short bursts tolerated). */
export const SLACK_RATES = { slackChannel: { intervalMs: 1_000, burst: 3 } } as const satisfies Record<string, Rate>;

/** Where a conversation's messages go, and whether it is an assistant thread (status line). */
export interface SlackAddress {
  /** The Slack channel id (a DM, a channel, a group): the conversation's `chatKey`. */
  slackChannel: string;
  /** Thread to reply in; undefined posts at the top level (a DM without threads). */
  threadTs?: string;
  assistantThread: boolean;
}

/**
 * What Slack's error codes mean: after `gone` an edit cannot work, but a new post can; `transient`
 * is worth another try; any other (channel_not_found, not_in_channel, is_archived, invalid_auth, …) is permanent.
 */
const SLACK_CODES: FailureCodes = {
  gone: new Set(['message_not_found', 'cant_update_message', 'edit_window_closed', 'cant_delete_message']),
  transient: new Set([
    'ratelimited',
    'internal_error',
    'fatal_error',
    'service_unavailable',
    'request_timeout',
    'team_added_to_org',
  ]),
};

/** What a workspace answers a message carrying a block it does not know (task cards, markdown blocks). */
const UNKNOWN_BLOCKS = new Set(['invalid_blocks', 'invalid_blocks_format']);

/** A Slack platform error's code, if `err` is one. */
export function platformCode(err: unknown): string | undefined {
  const e = err as { code?: string; data?: { error?: string } } | null;
  return e?.code === webApi.ErrorCode.PlatformError ? e.data?.error : undefined;
}

/** Classify a failed Web API call. */
export function classifySlackError(err: unknown): FailureClass {
  const e = err as { code?: string; data?: { error?: string }; retryAfter?: number; message?: string } | null;
  const message = e?.message ?? String(err);
  switch (e?.code) {
    case webApi.ErrorCode.RateLimitedError:
      return { kind: 'transient', reason: message, ...(e.retryAfter ? { retryAfterMs: e.retryAfter * 1000 } : {}) };
    case webApi.ErrorCode.PlatformError: {
      const code = e.data?.error ?? 'unknown';
      return classifyByCodes(SLACK_CODES, code, `slack: ${code}`);
    }
    case webApi.ErrorCode.RequestError:
    case webApi.ErrorCode.HTTPError:
      // No answer from Slack (or not its own): a post may have landed.
      return { kind: 'transient', reason: message, unanswered: true };
    default:
      // Not Slack's answer: a step message gone, markdown blocks to render again as sections, our own refusal, …
      return classifyOwn(err);
  }
}

/**
 * Run a delivery call, waiting out a short 429 (its error carries `retryAfter`, in seconds): one
 * of at most `shortAfterSeconds` (default: `delivery/short-retry.ts`'s), confirmed after the wait.
 */
export function waitingOutShort<T>(call: () => Promise<T>, shortAfterSeconds?: number, confirm?: ConfirmSend) {
  const retryAfter = (err: unknown) =>
    (err as { code?: string } | null)?.code === webApi.ErrorCode.RateLimitedError
      ? (err as { retryAfter?: number }).retryAfter
      : undefined;
  return waitingOutShort429(call, { error: retryAfter }, undefined, shortAfterSeconds, confirm);
}

/** Tool lines as tasks of a shared streamed message, as the surface drives them (`task-stream.ts`, which imports this file). */
interface TaskLines {
  usable(address: SlackAddress): boolean;
  post(address: SlackAddress, card: Block): Promise<string | null>;
  edit(address: SlackAddress, ref: { ts: string; id: string }, card: Block): Promise<void>;
  close(address: SlackAddress): Promise<void>;
}

/** Options of {@link SlackSurface}. */
export interface SlackSurfaceOptions {
  /** The general client (reads, ephemeral messages, statuses) and the bot's ids. */
  api: SlackApi;
  /** Client for posts, updates and deletes: no retries, 429s rejected at once. */
  deliveryClient: WebClient;
  /** Like `deliveryClient`, with a longer timeout for file uploads. */
  uploadClient: WebClient;
  log: Logger;
  /** The assistant thread the user last wrote in, of a DM channel ('' or undefined: the top level). */
  dmThread(slackChannel: string): Promise<string | undefined>;
  /**
   * The `[slack]` keys the surface reads: `stream_interval_ms`, `max_upload_bytes`, and `task_cards`
   * and `markdown_blocks` (tool lines as task cards, long or structured answers as markdown blocks
   * while the workspace takes them).
   */
  config: Pick<Config['slack'], 'stream_interval_ms' | 'max_upload_bytes' | 'task_cards' | 'markdown_blocks'>;
  /** Slack's own streamed messages (`stream.ts`), unless `slack.streaming = "update"`. */
  streams?: NativeStreams<SlackAddress>;
  /** Tool lines as tasks of a shared streamed message where replies stream natively (`task-stream.ts`). */
  taskStreams?: TaskLines;
  /** Longest Retry-After a delivery call waits out in place, seconds (default `SHORT_RETRY_AFTER_SECONDS`). */
  shortRetryAfterSeconds?: number;
}

/** Slack's {@link Surface}. */
export class SlackSurface implements Surface<SlackAddress> {
  readonly emitter;
  readonly streamIntervalMs: number;
  readonly streams?: NativeStreams<SlackAddress>;
  /** Paces posts per channel (exposed for metrics and benchmarks). */
  readonly pacer = new Pacer();
  /** Tool lines as task cards, until the workspace refuses them (then context lines for the run). */
  readonly taskCards: NativeFallback;
  /** Long or structured answers as markdown blocks, until the workspace refuses them (then sections for the run). */
  readonly markdownBlocks: NativeFallback;

  constructor(private readonly options: SlackSurfaceOptions) {
    this.streamIntervalMs = options.config.stream_interval_ms;
    this.streams = options.streams;
    // Both are blocks a workspace may not know: refused alike, each switched off on its own.
    const blocks = (setting: 'auto' | 'off', message: string) =>
      new NativeFallback({
        enabled: setting === 'auto',
        log: options.log,
        message: `slack: the workspace refuses ${message} for the rest of this run`,
        refusal: refusalCodes(platformCode, UNKNOWN_BLOCKS),
      });
    this.markdownBlocks = blocks(options.config.markdown_blocks, 'markdown blocks; answers show as mrkdwn sections');
    // The emitter asks at each rendering, so an answer rendered after a refusal is sections.
    this.emitter = createSlackEmitter(() => this.markdownBlocks.inForce);
    this.taskCards = blocks(options.config.task_cards, 'task_card blocks; tool progress shows as context lines');
  }

  /**
   * The blocks to send: the task card the way in force, else the message's own blocks — its
   * markdown blocks drawn as sections unless `native`.
   * @throws RenderAgain when those sections do not fit one message.
   */
  private blocksOf(message: CardMessage, native: boolean): unknown[] | undefined {
    let blocks: Block[] = native && message.task ? [message.task] : message.blocks;
    if (!native && hasMarkdown(blocks)) {
      const sections = asSections(blocks);
      if (!sections) throw new RenderAgain('markdown blocks refused; sending the answer again as sections');
      blocks = sections;
    }
    return blocks.length ? blocks : undefined;
  }

  /**
   * Send a message's blocks (see {@link blocksOf}) the way its fallback says — task cards for a tool
   * line, markdown blocks for an answer — waiting out a short 429 (and confirming after it).
   */
  private sendBlocks<T>(msg: CardMessage, confirm: ConfirmSend | undefined, send: (blocks?: unknown[]) => Promise<T>) {
    const task = msg.task !== undefined;
    return (task ? this.taskCards : this.markdownBlocks).run(task || hasMarkdown(msg.blocks), (native) =>
      this.shortRetried(() => send(this.blocksOf(msg, native)), confirm),
    );
  }

  /** Run a delivery call, waiting out a short 429 (see {@link waitingOutShort}). */
  private shortRetried<T>(call: () => Promise<T>, confirm?: ConfirmSend): Promise<T> {
    return waitingOutShort(call, this.options.shortRetryAfterSeconds, confirm);
  }

  /** A conversation's thread, or for a DM the assistant thread the user last wrote in. */
  async address(conv: Conversation): Promise<SlackAddress> {
    const threadTs = conv.thread_key || (await this.options.dmThread(conv.chat_key)) || undefined;
    return { slackChannel: conv.chat_key, threadTs, assistantThread: !conv.thread_key && !!threadTs };
  }

  async post(address: SlackAddress, part: Part, confirm?: ConfirmSend): Promise<string> {
    const message = part.body as CardMessage;
    const tasks = this.options.taskStreams;
    if (message.task && tasks?.usable(address)) {
      const ref = await tasks.post(address, message.task);
      if (ref !== null) return ref;
    }
    // Anything else in the thread comes below the steps message: it is stopped first.
    await tasks?.close(address);
    return this.sendBlocks(message, confirm, async (blocks) => {
      // About one post per second per channel: wait for a slot instead of collecting 429s. After a
      // wait the row's claim may have been taken over: confirmed again before the post.
      if (await this.pacer.take([{ key: address.slackChannel, rate: SLACK_RATES.slackChannel }])) await confirm?.();
      const res = await this.options.deliveryClient.chat.postMessage({
        channel: address.slackChannel,
        thread_ts: address.threadTs,
        text: message.text,
        blocks: blocks as never,
        unfurl_links: false,
        unfurl_media: false,
      });
      return String(res.ts);
    });
  }

  /** A bot message with exactly this part's text newer than `after`, if Slack has one. */
  async findPosted(address: SlackAddress, part: Part, after: string | undefined): Promise<string | undefined> {
    const { api } = this.options;
    const messages = address.threadTs
      ? await api.threadMessages(address.slackChannel, address.threadTs, 200)
      : ((await api.client.conversations.history({ channel: address.slackChannel, limit: 50 })).messages ?? []);
    // A step's reference is its steps message's `ts`.
    const since = after === undefined ? undefined : Number(parseStepRef(after)?.ts ?? after);
    const mine = (m: { bot_id?: string; user?: string }) => m.bot_id === api.botId || m.user === api.botUserId;
    const newer = (ts: string) => since === undefined || Number(ts) > since;
    return messages.filter((m) => m.ts && m.text === part.text && mine(m) && newer(m.ts)).at(-1)?.ts;
  }

  async edit(address: SlackAddress, ref: string, part: Part, confirm?: ConfirmSend): Promise<void> {
    const message = part.body as CardMessage;
    const task = parseStepRef(ref);
    if (task) {
      if (!message.task || !this.options.taskStreams) throw new StepMessageGone('slack: a task of a steps message');
      return this.options.taskStreams.edit(address, task, message.task);
    }
    await this.sendBlocks(message, confirm, (blocks) =>
      this.options.deliveryClient.chat.update({
        channel: address.slackChannel,
        ts: ref,
        text: message.text,
        // An empty list clears blocks a message had (undefined would keep them).
        blocks: (blocks ?? []) as never,
      }),
    );
  }

  async delete(address: SlackAddress, ref: string): Promise<void> {
    // A task shares its message with the other steps: the message stays.
    if (parseStepRef(ref)) return;
    await this.shortRetried(() => this.options.deliveryClient.chat.delete({ channel: address.slackChannel, ts: ref }));
  }

  /**
   * Upload a sent file (the copy taken when it was sent), or a text file made from `file.text`
   * (an approval's whole arguments), into the conversation's thread (getUploadURLExternal + POST +
   * completeUploadExternal).
   * @throws SwitchboardError `file_too_big` over `slack.max_upload_bytes` (nothing is sent; see `uploadBytes`).
   */
  async upload(address: SlackAddress, upload: OutboundUpload | OutboundText, confirm?: ConfirmSend): Promise<string> {
    const limit = { bytes: this.options.config.max_upload_bytes, name: 'slack.max_upload_bytes' };
    const { name, bytes: file, caption } = await uploadBytes(upload, limit);
    // A file comes below the steps message too.
    await this.options.taskStreams?.close(address);
    const request = {
      channel_id: address.slackChannel,
      ...(address.threadTs ? { thread_ts: address.threadTs } : {}),
      file,
      filename: name,
      title: name,
      ...(caption ? { initial_comment: caption } : {}),
    } as Parameters<WebClient['filesUploadV2']>[0];
    await this.shortRetried(() => this.options.uploadClient.filesUploadV2(request), confirm);
    return `file:${name}`;
  }

  /** A text file goes the way of any other file ({@link upload}). */
  readonly uploadText = (address: SlackAddress, file: OutboundText): Promise<string> => this.upload(address, file);

  /** A channel's thread, for a whisper to someone who has no conversation there (yet). */
  addressOf(ref: ChatRef): SlackAddress {
    return { slackChannel: ref.chatKey, threadTs: ref.threadKey || undefined, assistantThread: false };
  }

  /** An ephemeral message only `userId` sees; in the thread when there is one. */
  async whisper(address: SlackAddress, userId: string, part: Part): Promise<boolean> {
    await this.options.api.client.chat.postEphemeral({
      channel: address.slackChannel,
      user: userId,
      text: part.text,
      thread_ts: address.threadTs,
    });
    return true;
  }

  /** The "is thinking…" line of an assistant thread; an empty status clears it. */
  typing(address: SlackAddress, on: boolean): void {
    if (!address.assistantThread || !address.threadTs) return;
    this.options.api.client.assistant.threads
      .setStatus({ channel_id: address.slackChannel, thread_ts: address.threadTs, status: on ? THINKING_STATUS : '' })
      .catch((err: unknown) => this.options.log.debug({ err }, 'slack: assistant status not set'));
  }

  /** What a failed call means ({@link classifySlackError}). */
  readonly classify = classifySlackError;
}
