/**
 * Slack as the presenter drives it: post, update and delete messages, upload files, show the
 * assistant thread's "is thinking…" status, and tell permanent refusals (channel gone, bot
 * removed, token revoked) from transient ones (rate limits, 5xx, network). A reference is the
 * message's `ts`; a post a crash left ambiguous is looked up in the thread before posting again.
 */
import { readFile } from 'node:fs/promises';
import { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import type { ChatRef, OutboundFile } from '../../contract/chat.js';
import type { FailureClass, Part, Surface } from '../../contract/surface.js';
import { checkOutboundFile } from '../../delivery/files.js';
import { SwitchboardError } from '../../errors.js';
import type { Conversation } from '../../store/schema.js';
import type { SlackApi, SlackAddress } from './api.js';
import type { CardMessage } from './blocks.js';
import { slackEmitter } from './emitter.js';

/** Where a conversation's messages go, and whether it is an assistant thread (status line). */
export interface SlackSurfaceAddress extends SlackAddress {
  assistantThread: boolean;
}

/** Errors after which an edit cannot work, but a new post can. */
const GONE = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed', 'cant_delete_message']);
/** Slack errors that are worth another try. */
const TRANSIENT = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'team_added_to_org']);

/** Classify a failed Web API call. */
export function classifySlackError(err: unknown): FailureClass {
  const e = err as { code?: string; data?: { error?: string }; retryAfter?: number; message?: string } | null;
  const message = e?.message ?? String(err);
  switch (e?.code) {
    case webApi.ErrorCode.RateLimitedError:
      return { kind: 'transient', reason: message, ...(e.retryAfter ? { retryAfterMs: e.retryAfter * 1000 } : {}) };
    case webApi.ErrorCode.PlatformError: {
      const code = e.data?.error ?? 'unknown';
      if (GONE.has(code)) return { kind: 'gone', reason: `slack: ${code}` };
      if (TRANSIENT.has(code)) return { kind: 'transient', reason: `slack: ${code}` };
      // channel_not_found, not_in_channel, is_archived, account_inactive, invalid_auth, …
      return { kind: 'permanent', reason: `slack: ${code}` };
    }
    case webApi.ErrorCode.RequestError:
    case webApi.ErrorCode.HTTPError:
      return { kind: 'transient', reason: message };
    default:
      if (err instanceof SwitchboardError) return { kind: 'permanent', reason: err.message };
      return { kind: 'transient', reason: message };
  }
}

/** Options of {@link SlackSurface}. */
export interface SlackSurfaceOptions {
  api: SlackApi;
  log: Logger;
  /** The thread a conversation's messages go to. */
  address(conversation: Conversation): Promise<SlackSurfaceAddress>;
  /** `slack.stream_interval_ms` (default 1500). */
  streamIntervalMs: number;
  /** `slack.max_upload_bytes` (default 50 MB). */
  maxUploadBytes: number;
}

/** Slack's {@link Surface}. */
export class SlackSurface implements Surface<SlackSurfaceAddress> {
  readonly emitter = slackEmitter;
  readonly streamIntervalMs: number;

  constructor(private readonly options: SlackSurfaceOptions) {
    this.streamIntervalMs = options.streamIntervalMs;
  }

  address(conversation: Conversation): Promise<SlackSurfaceAddress> {
    return this.options.address(conversation);
  }

  post(target: SlackSurfaceAddress, part: Part): Promise<string> {
    return this.options.api.post(target, part.body as CardMessage);
  }

  edit(target: SlackSurfaceAddress, ref: string, part: Part): Promise<void> {
    return this.options.api.update(target.slackChannel, ref, part.body as CardMessage);
  }

  delete(target: SlackSurfaceAddress, ref: string): Promise<void> {
    return this.options.api.remove(target.slackChannel, ref);
  }

  findPosted(target: SlackSurfaceAddress, part: Part, after: string | undefined): Promise<string | undefined> {
    return this.options.api.findPosted(target, part.text, after);
  }

  /**
   * Upload a workspace file into the conversation's thread.
   * @throws SwitchboardError when the file is missing, not a file or over `slack.max_upload_bytes` (see `checkOutboundFile`).
   */
  async upload(target: SlackSurfaceAddress, file: OutboundFile): Promise<string> {
    const { name } = await checkOutboundFile(file.path, { bytes: this.options.maxUploadBytes, name: 'slack.max_upload_bytes' });
    await this.options.api.upload(target, { data: await readFile(file.path), filename: name, comment: file.caption });
    return `file:${name}`;
  }

  /** A channel's thread, for a whisper to someone who has no conversation there (yet). */
  addressOf(ref: ChatRef): SlackSurfaceAddress {
    return { slackChannel: ref.chatKey, threadTs: ref.threadKey || undefined, assistantThread: false };
  }

  whisper(target: SlackSurfaceAddress, userId: string, part: Part): Promise<void> {
    return this.options.api.ephemeral(target.slackChannel, userId, part.text, target.threadTs);
  }

  typing(target: SlackSurfaceAddress, on: boolean): void {
    if (!target.assistantThread || !target.threadTs) return;
    this.options.api
      .setStatus(target.slackChannel, target.threadTs, on ? 'is thinking…' : '')
      .catch((err: unknown) => this.options.log.debug({ err }, 'slack: assistant status not set'));
  }

  classify(err: unknown): FailureClass {
    return classifySlackError(err);
  }
}
