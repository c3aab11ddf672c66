/**
 * Discord as the presenter drives it: post, edit and delete messages (content and button rows;
 * nothing the bot says pings anyone), upload files within 25 MB, show "typing", start a
 * conversation's thread, answer interactions, and classify failures: 429 (with Discord's wait),
 * 5xx and the network are transient, Unknown Message is gone, the rest permanent. A reference is
 * the message id; one attempt per call (the REST client neither retries nor waits out 429s).
 */
import {
  uploadBytes,
  type Conversation,
  type Emitter,
  type FailureClass,
  type OutboundText,
  type OutboundUpload,
  type Part,
  type Surface,
  classifyByCodes,
  classifyOwn,
  type FailureCodes,
  trimText,
} from '../../kit/index.js';
import type { API } from '@discordjs/core';
import { DiscordAPIError, HTTPError, RateLimitError } from '@discordjs/rest';
import type { Logger } from 'pino';
import type { DiscordBody } from './emitter.js';

/** Largest file a bot uploads without a boosted server. */
export const UPLOAD_LIMIT = 25 * 1024 * 1024;
const LIMIT = { bytes: UPLOAD_LIMIT, name: 'Discord' };
/** Discord's typing indicator lasts about 10 s: shown again this often while a turn works, ms. */
export const TYPING_REPEAT_MS = 8_000;
/** Discord's error codes by what they mean: an edit of a message that is no more (10008) is gone; the others are permanent. */
const DISCORD_CODES: FailureCodes<number | string> = { gone: new Set([10008]) };
/** "A thread has already been created for this message" (a message handled twice). */
const THREAD_EXISTS = 160004;
/** Mentions in the bot's own text never ping anyone. */
const NO_PINGS = { parse: [] as [] };

/** Discord's address of a conversation: the channel its messages go to (a DM, or the bot's thread). */
export interface DiscordAddress {
  channelId: string;
}

/** Classify a failed REST call. */
export function classifyDiscordError(err: unknown): FailureClass {
  if (err instanceof RateLimitError)
    return { kind: 'transient', reason: `429 rate limited on ${err.route}`, retryAfterMs: err.retryAfter };
  if (err instanceof DiscordAPIError) {
    const reason = `${err.method} ${err.url}: ${err.status} ${err.code} ${err.message}`;
    if (err.status === 429 || err.status >= 500) return { kind: 'transient', reason };
    // Permanent: 401 (token revoked), 403 (no access, DMs closed), 404 (channel gone), 50035 (refused body).
    return classifyByCodes(DISCORD_CODES, err.code, reason);
  }
  if (err instanceof HTTPError) return { kind: 'transient', reason: `${err.status} ${err.message}` };
  // Not Discord's answer (our own refusal is permanent); a call whose answer was lost may have landed.
  return classifyOwn(err, true);
}

/** Discord's {@link Surface}. */
export class DiscordSurface implements Surface<DiscordAddress> {
  readonly typingRefreshMs = TYPING_REPEAT_MS;
  /** DM channel by user id. */
  private readonly dms = new Map<string, string>();

  constructor(
    private readonly api: API,
    private readonly log: Logger,
    readonly emitter: Emitter,
    /** `discord.stream_interval_ms`: Discord lets a channel's messages be edited about 5 times in 5 s. */
    readonly streamIntervalMs: number,
  ) {}

  /** A thread of the bot (or a guild channel itself), else the DM with the person `chat_key` names. */
  async address(conversation: Conversation): Promise<DiscordAddress> {
    if (conversation.thread_key) return { channelId: conversation.thread_key };
    const user = conversation.chat_key;
    const known = this.dms.get(user) ?? (await this.api.users.createDM(user)).id;
    this.dms.set(user, known);
    return { channelId: known };
  }

  /** The DM channel of a person, as a message in it showed (saves asking Discord). */
  knowDm(userId: string, channelId: string): void {
    this.dms.set(userId, channelId);
  }

  async post(address: DiscordAddress, part: Part): Promise<string> {
    const body = part.body as DiscordBody;
    const msg = await this.api.channels.createMessage(address.channelId, { ...body, allowed_mentions: NO_PINGS });
    return msg.id;
  }

  /** Replace a message's content and buttons (a card decided loses its buttons). */
  async edit(address: DiscordAddress, ref: string, part: Part): Promise<void> {
    const body = part.body as DiscordBody;
    await this.api.channels.editMessage(address.channelId, ref, {
      content: body.content,
      components: body.components ?? [],
      allowed_mentions: NO_PINGS,
    });
  }

  async delete(address: DiscordAddress, ref: string): Promise<void> {
    await this.api.channels.deleteMessage(address.channelId, ref);
  }

  /**
   * Upload a file (the copy taken when it was sent) with its caption, or a text file made from
   * `file.text` (an approval's whole arguments).
   * @throws SwitchboardError over Discord's 25 MB (see `uploadBytes`).
   */
  async upload(address: DiscordAddress, file: OutboundUpload | OutboundText): Promise<string> {
    const { name, bytes: data, caption } = await uploadBytes(file, LIMIT);
    const content = caption?.trim() ? trimText(caption, 2000) : undefined;
    const msg = await this.api.channels.createMessage(address.channelId, {
      ...(content ? { content } : {}),
      files: [{ name, data }],
      allowed_mentions: NO_PINGS,
    });
    return msg.id;
  }

  /** A text file goes the way of any other file ({@link upload}). */
  readonly uploadText = (address: DiscordAddress, file: OutboundText): Promise<string> => this.upload(address, file);

  /** Typing ends by itself or with the next message; cosmetic, so a failure is ignored. */
  typing(address: DiscordAddress, on: boolean): void {
    if (on) this.api.channels.showTyping(address.channelId).catch(() => undefined);
  }

  classify(err: unknown): FailureClass {
    return classifyDiscordError(err);
  }

  /**
   * Start the thread of a conversation on the message that opened it; Discord gives such a thread
   * the message's id, which is also the answer when the thread exists already (the message was
   * handled before a crash).
   */
  async openThread(channelId: string, messageId: string, name: string): Promise<string> {
    try {
      const thread = await this.api.channels.createThread(
        channelId,
        { name: trimText(name, 100) || 'switchboard', auto_archive_duration: 1440 },
        messageId,
      );
      return thread.id;
    } catch (err) {
      if (err instanceof DiscordAPIError && err.code === THREAD_EXISTS) return messageId;
      throw err;
    }
  }

  /** Answer an interaction to its person alone (a refusal, a command's answer); never kept, never thrown. */
  async tell(applicationId: string, token: string, part: Part, first = false): Promise<void> {
    const body = part.body as DiscordBody;
    try {
      if (first) await this.api.interactions.editReply(applicationId, token, { ...body, allowed_mentions: NO_PINGS });
      else
        await this.api.interactions.followUp(applicationId, token, { ...body, flags: 64, allowed_mentions: NO_PINGS });
    } catch (err) {
      this.log.warn({ err }, 'discord: an answer to one person failed');
    }
  }
}
