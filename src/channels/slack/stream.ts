/**
 * Slack's own streamed messages (`chat.startStream` / `appendStream` / `stopStream`) as the
 * presenter's native streams (`delivery/native-stream.ts`). Slack streams only in a thread (a
 * DM's assistant thread, a channel thread); outside a DM it needs the person streamed to. A
 * stream Slack no longer keeps open answers `message_not_in_streaming_state`; a server without
 * the methods (`unknown_method`) turns them off for the rest of the run, logged once.
 */
import type { types, webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import type { Config, ConfirmSend, NativeStreams } from '../../kit/index.js';
import type { SlackApi } from './api.js';
import { classifySlackError, platformCode, type SlackAddress, waitingOutShort } from './surface.js';

type WebClient = webApi.WebClient;

/** `markdown_text` takes at most 12 000 characters a call; one streamed message holds no more here. */
export const SLACK_STREAM_MAX_CHARS = 12_000;
/** The stream's message no longer streams: expired (~5 minutes) or stopped. */
const ENDED = 'message_not_in_streaming_state';
/** The server does not offer streams at all. */
const REFUSED = new Set(['unknown_method', 'not_allowed_token_type', 'method_not_supported_for_channel_type']);
/** Said once, when a server first refuses them. */
const REFUSED_LOG =
  'slack: the server refuses native streams (chat.startStream); replies stream by chat.update for the rest of this run';

/** What a stream starts with: Markdown (a reply), or chunks (tool progress). */
type StartContent = { markdown_text: string } | { chunks: types.AnyChunk[] };
/** What an append (or the stop) carries. */
type MoreContent = { markdown_text?: string; chunks?: types.AnyChunk[] };

/** Options of {@link SlackStreams}. */
export interface SlackStreamsOptions {
  /** `slack.streaming` and `slack.stream_rollover_ms`. */
  config: Pick<Config['slack'], 'streaming' | 'stream_rollover_ms'>;
  api: SlackApi;
  deliveryClient: WebClient;
  log: Logger;
  /** Longest Retry-After a stream call waits out in place, seconds (default `SHORT_RETRY_AFTER_SECONDS`). */
  shortRetryAfterSeconds?: number;
}

/** Slack's {@link NativeStreams}. */
export class SlackStreams implements NativeStreams<SlackAddress> {
  readonly maxChars = SLACK_STREAM_MAX_CHARS;
  readonly rolloverMs: number;
  /** Why native streams are off for this run (`unknown_method`), once a server refused them. */
  refused: string | null = null;

  /**
   * Called before a reply's stream starts in a thread (tool progress ends its own stream there
   * first, so the reply comes below it: `task-stream.ts`).
   */
  beforeStart: (address: SlackAddress) => Promise<void> = async () => {};

  constructor(private readonly options: SlackStreamsOptions) {
    this.rolloverMs = options.config.stream_rollover_ms;
  }

  /** Which way replies stream now, for logs and `/healthz`-like reports. */
  get inForce(): Config['slack']['streaming'] {
    return this.options.config.streaming === 'native' && !this.refused ? 'native' : 'update';
  }

  available(address: SlackAddress): boolean {
    return this.inForce === 'native' && address.threadTs !== undefined;
  }

  async start(address: SlackAddress, markdown: string, confirm?: ConfirmSend): Promise<string | null> {
    if (!this.available(address)) return null;
    await this.beforeStart(address);
    return this.startWith(address, { markdown_text: markdown }, confirm);
  }

  /**
   * Start a stream with `chunks` (tool progress as `task_update` chunks; the surface confirmed the
   * post they are part of). @returns its `ts`, or null where Slack streams no more (see the module's note).
   */
  startChunks(address: SlackAddress, chunks: types.AnyChunk[]): Promise<string | null> {
    return this.startWith(address, { chunks });
  }

  /** Append `chunks` to an open stream, stopping it with them when `stop`. @returns false when it no longer streams. */
  appendChunks(address: SlackAddress, ref: string, chunks: types.AnyChunk[], stop = false): Promise<boolean> {
    return this.send(address, ref, { chunks }, stop);
  }

  /** Start a stream; `confirm` runs right before chat.startStream (after the look-ups and any wait before it). */
  private async startWith(address: SlackAddress, content: StartContent, confirm?: ConfirmSend): Promise<string | null> {
    if (!this.available(address) || !address.threadTs) return null;
    const recipient = address.slackChannel.startsWith('D') ? {} : await this.recipient(address, address.threadTs);
    if (!recipient) return null;
    const args = { channel: address.slackChannel, thread_ts: address.threadTs, ...content, ...recipient };
    const res = await this.call(async () => {
      await confirm?.();
      return this.options.deliveryClient.chat.startStream(args);
    });
    return res === false ? null : String(res.ts);
  }

  append(address: SlackAddress, ref: string, markdown: string): Promise<boolean> {
    return this.send(address, ref, { markdown_text: markdown });
  }

  stop(address: SlackAddress, ref: string, markdown?: string): Promise<boolean> {
    return this.send(address, ref, markdown ? { markdown_text: markdown } : {}, true);
  }

  /** Append to an open stream, or stop it (with the last content). @returns false when it no longer streams. */
  private async send(address: SlackAddress, ref: string, content: MoreContent, stop = false): Promise<boolean> {
    const args = { channel: address.slackChannel, ts: ref, ...content } as never;
    const { chat } = this.options.deliveryClient;
    return (await this.call(() => (stop ? chat.stopStream(args) : chat.appendStream(args)), true)) !== false;
  }

  /**
   * Redraw a message this lane streamed, whole, once its stream has ended or expired (a steps
   * message's tasks as a plan block: task-stream.ts).
   */
  async redraw(address: SlackAddress, ts: string, text: string, blocks: unknown[]): Promise<void> {
    await this.options.deliveryClient.chat.update({ channel: address.slackChannel, ts, text, blocks: blocks as never });
  }

  /**
   * Run a stream call; false when the stream ended or Slack refuses streams (see the module's
   * note). With `unansweredEnds`, a call whose answer was lost on the way counts as ended too: it
   * may have appended, and appending again would show the text twice — the message is rewritten
   * with chat.update instead.
   */
  private async call<T>(fn: () => Promise<T>, unansweredEnds = false): Promise<T | false> {
    try {
      return await waitingOutShort(fn, this.options.shortRetryAfterSeconds);
    } catch (err) {
      const code = platformCode(err);
      if (code === ENDED) return false;
      if (code && REFUSED.has(code)) {
        if (!this.refused) this.options.log.warn({ error: code }, REFUSED_LOG);
        this.refused = code;
        return false;
      }
      const cls = classifySlackError(err);
      if (unansweredEnds && cls.kind === 'transient' && cls.unanswered) return false;
      throw err;
    }
  }

  /**
   * Whom a stream outside a DM is for: the newest person who wrote in the thread (Slack requires
   * it there), with the bot's workspace. Null when none is found: the reply is posted instead.
   */
  private async recipient(
    address: SlackAddress,
    threadTs: string,
  ): Promise<{ recipient_user_id: string; recipient_team_id: string } | null> {
    const { api } = this.options;
    const messages = await api.threadMessages(address.slackChannel, threadTs, 200).catch(() => []);
    const user = messages.filter((m) => m.user && !m.bot_id && m.user !== api.botUserId).at(-1)?.user;
    return user && api.teamId ? { recipient_user_id: user, recipient_team_id: api.teamId } : null;
  }
}
