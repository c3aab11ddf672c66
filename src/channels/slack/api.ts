/**
 * The Web API calls the Slack channel makes, over the WebClient. Delivery calls (post, update,
 * delete, upload) are retried by the presenter, which keeps each message's row and backs off; here
 * they wait out only a 429 whose `Retry-After` is short (the rule of `delivery/short-retry.ts`), on
 * a client with no retries of its own.
 * A longer 429, an error or a transport failure goes back to the presenter with its class (see
 * `classifySlackError`). Posting is not idempotent: after a transport failure the thread is read
 * back first, and a message that did land is reused instead of posted a second time.
 */
import { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import { waitingOutShort429 } from '../../delivery/short-retry.js';
import { Pacer, type Rate } from '../pacer.js';
import type { Block } from './blocks.js';

/** Slack's limit on posting: ≈1 message/s per channel (short bursts tolerated). */
export const SLACK_RATES = {
  slackChannel: { intervalMs: 1_000, burst: 3 },
} as const satisfies Record<string, Rate>;

type WebClient = webApi.WebClient;

/** Where a conversation's messages go. */
export interface SlackAddress {
  /** The Slack channel id (a DM, a channel, a group): the conversation's `chatKey`. */
  slackChannel: string;
  /** Thread to reply in; undefined posts at the top level (a DM without threads). */
  threadTs?: string;
}

/** Seconds of `Retry-After` when the WebClient's error is a 429 (a rate-limited error). */
function retryAfterOf(err: unknown): number | undefined {
  const e = err as { code?: string; retryAfter?: number } | null;
  return e?.code === webApi.ErrorCode.RateLimitedError ? e.retryAfter : undefined;
}

/** Run a delivery call, waiting out a short 429 (the client itself retries nothing). */
function waitingOutShort<T>(call: () => Promise<T>): Promise<T> {
  return waitingOutShort429(call, { error: retryAfterOf });
}

/** Threads whose last post is remembered for reconciliation (oldest forgotten first). */
const MAX_TRACKED_TARGETS = 1000;

/** Transport failures after which a post may or may not have landed. */
function isTransportError(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === webApi.ErrorCode.RequestError || code === webApi.ErrorCode.HTTPError;
}

/** Slack's `ts` compare as decimals; as strings of equal shape they sort the same way. */
function tsAfter(a: string, b: string | undefined): boolean {
  return b === undefined || Number(a) > Number(b);
}

/** Everything the channel sends to Slack. */
export class SlackApi {
  /** Bot user id and bot id, known after `auth.test`. */
  botUserId = '';
  botId = '';
  /** Newest ts posted per target, so reconciliation never picks an older identical message. */
  private readonly lastPosted = new Map<string, string>();
  /** Paces posts per channel (exposed for metrics and benchmarks). */
  readonly pacer = new Pacer();

  /**
   * @param client general client (reads, statuses, Bolt's own calls; retries what the WebClient retries)
   * @param deliveryClient client for posts, updates and deletes: no retries, 429s rejected at once
   * @param uploadClient like `deliveryClient`, with a longer timeout for file uploads
   */
  constructor(
    readonly client: WebClient,
    private readonly deliveryClient: WebClient,
    private readonly uploadClient: WebClient,
    private readonly log: Logger,
  ) {}

  async post(target: SlackAddress, message: { text: string; blocks: Block[] }): Promise<string> {
    const key = `${target.slackChannel}/${target.threadTs ?? ''}`;
    try {
      const ts = await waitingOutShort(async () => {
        // About one post per second per channel: wait for a slot instead of collecting 429s.
        await this.pacer.take([{ key: target.slackChannel, rate: SLACK_RATES.slackChannel }]);
        const res = await this.deliveryClient.chat.postMessage({
          channel: target.slackChannel,
          thread_ts: target.threadTs,
          text: message.text,
          blocks: (message.blocks.length ? message.blocks : undefined) as never,
          unfurl_links: false,
          unfurl_media: false,
        });
        return String(res.ts);
      });
      this.remember(key, ts);
      return ts;
    } catch (err) {
      if (!isTransportError(err)) throw err;
      // Sent, but the answer was lost? Then it is in the thread: reuse it rather than post twice.
      const landed = await this.findPosted(target, message.text, this.lastPosted.get(key)).catch(() => undefined);
      if (!landed) throw err;
      this.log.info({ slackChannel: target.slackChannel }, 'slack: post failed in transit but had landed; not posting again');
      this.remember(key, landed);
      return landed;
    }
  }

  /** Keep the newest ts per target; only the most recent targets matter for reconciliation. */
  private remember(key: string, ts: string): void {
    this.lastPosted.delete(key);
    this.lastPosted.set(key, ts);
    if (this.lastPosted.size > MAX_TRACKED_TARGETS) {
      const oldest = this.lastPosted.keys().next().value;
      if (oldest !== undefined) this.lastPosted.delete(oldest);
    }
  }

  /** A bot message with exactly this text newer than `after`, if Slack has one. */
  async findPosted(target: SlackAddress, text: string, after: string | undefined): Promise<string | undefined> {
    const res = target.threadTs
      ? await this.client.conversations.replies({ channel: target.slackChannel, ts: target.threadTs, limit: 200 })
      : await this.client.conversations.history({ channel: target.slackChannel, limit: 50 });
    const messages = (res.messages ?? []) as Array<{ ts?: string; text?: string; bot_id?: string; user?: string }>;
    const mine = messages.filter(
      (m) => m.ts && m.text === text && (m.bot_id === this.botId || m.user === this.botUserId) && tsAfter(m.ts, after),
    );
    return mine.at(-1)?.ts;
  }

  /** Messages of a thread, oldest first (the parent included). */
  async threadMessages(slackChannel: string, threadTs: string, limit = 100): Promise<Array<{ ts: string; user?: string; bot_id?: string; text: string }>> {
    const res = await this.client.conversations.replies({ channel: slackChannel, ts: threadTs, limit });
    return ((res.messages ?? []) as Array<{ ts?: string; user?: string; bot_id?: string; text?: string }>).map((m) => ({
      ts: String(m.ts ?? ''),
      user: m.user,
      bot_id: m.bot_id,
      text: m.text ?? '',
    }));
  }

  async update(slackChannel: string, ts: string, message: { text: string; blocks: Block[] }): Promise<void> {
    await waitingOutShort(() => this.deliveryClient.chat.update({ channel: slackChannel, ts, text: message.text, blocks: message.blocks as never }));
  }

  async remove(slackChannel: string, ts: string): Promise<void> {
    await waitingOutShort(() => this.deliveryClient.chat.delete({ channel: slackChannel, ts }));
  }

  /** A message only `user` sees; in a thread when `threadTs` is given. */
  async ephemeral(slackChannel: string, user: string, text: string, threadTs?: string): Promise<void> {
    await this.client.chat.postEphemeral({ channel: slackChannel, user, text, thread_ts: threadTs });
  }

  /** The "is thinking…" line of an assistant thread; an empty status clears it. */
  async setStatus(slackChannel: string, threadTs: string, status: string): Promise<void> {
    await this.client.assistant.threads.setStatus({ channel_id: slackChannel, thread_ts: threadTs, status });
  }

  async setSuggestedPrompts(slackChannel: string, threadTs: string, prompts: Array<{ title: string; message: string }>): Promise<void> {
    await this.client.assistant.threads.setSuggestedPrompts({
      channel_id: slackChannel,
      thread_ts: threadTs,
      prompts: prompts as [{ title: string; message: string }],
    });
  }

  /** Upload a file into a channel or thread (getUploadURLExternal + POST + completeUploadExternal). */
  async upload(target: SlackAddress, file: { data: Buffer; filename: string; comment?: string }): Promise<void> {
    const args = {
      channel_id: target.slackChannel,
      file: file.data,
      filename: file.filename,
      title: file.filename,
      ...(file.comment ? { initial_comment: file.comment } : {}),
    };
    const request = (target.threadTs ? { ...args, thread_ts: target.threadTs } : args) as Parameters<WebClient['filesUploadV2']>[0];
    await waitingOutShort(() => this.uploadClient.filesUploadV2(request));
  }
}
