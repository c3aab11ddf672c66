/**
 * A platform message after its channel translated it: the core takes it from here, and every
 * channel's messages come this one way. Here, once per message, the sender's name is remembered
 * and whether they are let in is decided: a stranger gets a pairing code and nothing else (no
 * download, no transcription, nothing stored). A known sender's files are downloaded and a voice
 * note transcribed; then the message is handed to `inbound.ts`, which trusts that decision and
 * decides the rest (flood limit, duplicates, where the message goes). The sender is told what
 * needs telling. In a direct chat that is a message of the chat (a ledger row: durable,
 * in order with the replies); in a group or channel it is whispered to the sender alone where the
 * platform can (nobody else needs a stranger's pairing code), sent to their direct chat where the
 * bot may write to members unasked, and posted in the chat where neither.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ChatRef, EarlierMessage, IncomingFile, InboundMessage, ReceivedMessage } from '../contract/chat.js';
import type { NoticeContent, TextContent } from '../contract/content.js';
import type { PeopleNames, SubmitResult, TappedCard } from '../contract/core.js';
import { UploadRefused } from '../delivery/files.js';
import { showNotice, showTappedList } from '../delivery/ledger.js';
import {
  filesRefusedMarkdown,
  pairingCodeMarkdown,
  pairingRequestMarkdown,
  rateLimitNotice,
  SENT_DIRECTLY,
  TAKE_FAILED,
  THREAD_PRELUDE,
  UPLOAD,
  VOICE,
} from '../delivery/notices.js';
import type { Presenter } from '../delivery/presenter.js';
import { uploadFolder } from '../delivery/upload-folders.js';
import { whisper } from '../delivery/transient.js';
import { errorMessage } from '../errors.js';
import type { Db } from '../store/db.js';
import { hotCache } from '../store/hot-cache.js';
import { openEntry } from '../tools/confined/open.js';
import type { PathPolicy } from '../tools/path-policy.js';
import { isInboundSeen, markInboundSeen } from '../store/repos/conversations.js';
import type { AccessControl } from './access.js';
import { keyOf } from './conversation-ops.js';
import type { Inbound } from './inbound.js';
import { pairingButton, pairingRequestKey } from './pairing-request.js';
import type { ChannelRouter } from './routing.js';

/** Earlier messages given to a conversation that starts mid-thread, at most this many characters. */
export const THREAD_PRELUDE_CHARS = 6_000;

/**
 * The earlier messages of a thread as text put before the message that starts a conversation
 * there: one `who: text` line each between two markers, the newest kept when they are longer than
 * `maxChars` (the model needs the latest turns most); '' when there are none.
 */
export function threadPrelude(earlier: readonly EarlierMessage[], maxChars = THREAD_PRELUDE_CHARS): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = earlier.length - 1; i >= 0; i--) {
    const m = earlier[i] as EarlierMessage;
    const line = `${m.who ?? THREAD_PRELUDE.bot}: ${m.text}`;
    if (size + line.length > maxChars) break;
    lines.unshift(line);
    size += line.length + 1;
  }
  return lines.length ? `${THREAD_PRELUDE.start}\n${lines.join('\n')}\n${THREAD_PRELUDE.end}\n\n` : '';
}

/** What taking a platform message needs from the rest of the core. */
export interface ReceptionDeps {
  db: Db;
  config: Config;
  access: AccessControl;
  inbound: Inbound;
  router: ChannelRouter;
  presenter: Presenter;
  /** Every sender is remembered with the name it came with, let in or not, submitted or not. */
  names: PeopleNames;
  /** The model client's transcription (`audio.transcription_*`). */
  transcribe(audio: { bytes: Buffer; name: string }): Promise<string>;
  /** Where a saved voice note is read back from (through the confined primitive). */
  paths: PathPolicy;
  log: Logger;
}

/** Takes platform messages in for one core, and answers their senders. */
export class Reception {
  constructor(private readonly deps: ReceptionDeps) {}

  /** See {@link ChannelCore.receive}. */
  async receive(message: ReceivedMessage): Promise<SubmitResult | null> {
    await this.deps.names.remember(`${message.channel}:${message.userId}`, message.userName);
    try {
      return await this.take(message);
    } catch (err) {
      if (!message.acknowledged) throw err;
      // The platform will not send it again: say so rather than go quiet.
      this.deps.log.error({ err, channel: message.channel }, 'taking a message failed');
      await this.tell(message, 'failed', TAKE_FAILED).catch(() => undefined);
      return null;
    }
  }

  /**
   * Show a message in a chat through the delivery ledger (see {@link ChannelCore.say}); the chat's
   * conversation is made when it has none yet.
   */
  async say(ref: ChatRef, key: string, content: TextContent | NoticeContent): Promise<void> {
    const conv = await hotCache(this.deps.db).activeConversation(keyOf(ref), null);
    await showNotice(this.deps.db, conv.id, key, content);
    this.deps.presenter.deliver(conv.id);
  }

  /** Redraw a tapped message the ledger showed in its chat as `content` (see `ActionCore.redraw`). */
  async redraw(tapped: TappedCard, content: TextContent): Promise<void> {
    const conv = await hotCache(this.deps.db).activeConversation(keyOf(tapped.chat), null);
    await showTappedList(this.deps.db, conv.id, tapped, content);
    this.deps.presenter.deliver(conv.id);
  }

  private async take(m: ReceivedMessage): Promise<SubmitResult | null> {
    // The one access decision of a message: a stranger is answered before anything is read of it.
    if (!(await this.deps.access.isAllowed(m.channel, m.userId))) return this.pair(m);
    const { files, voice, prelude, direct: _direct, acknowledged: _acknowledged, ...message } = m;
    // A redelivery of a message taken already downloads and transcribes nothing again. A read
    // only, to save that work: whether it is a duplicate is decided by recording its key with the
    // message (`Inbound.submit`), which two deliveries at once cannot both pass.
    const fetches = (files?.length ?? 0) > 0 || voice !== undefined || prelude !== undefined;
    if (fetches && m.dedupKey && (await isInboundSeen(this.deps.db, m.dedupKey))) return { status: 'duplicate' };
    let text = message.text;
    if (voice) {
      const heard = await this.hear(m, voice);
      if (heard === null) return null;
      text = heard;
    }
    const attachments: string[] = [];
    // The files stay with this conversation: a one-to-one chat's folder, or the group thread's.
    const folder = uploadFolder(m, m.direct);
    if (files?.length) {
      const refused: Array<{ name: string; why: string }> = [];
      for (const file of files) {
        try {
          attachments.push((await file.fetch(folder)).rel);
        } catch (err) {
          refused.push({ name: file.name, why: this.refusal(err) });
        }
      }
      if (refused.length) await this.tell(m, 'file', filesRefusedMarkdown(refused));
      // Nothing of what was sent arrived: the refusal asked for it again, the model hears nothing.
      if (attachments.length === 0) return null;
      if (!text) text = `(sent ${attachments.length === 1 ? 'a file' : 'files'}: ${attachments.join(', ')})`;
    }
    if (!text) return null;
    if (prelude) text = threadPrelude(await prelude()) + text;
    return this.submit(m, { ...message, text, ...(attachments.length ? { attachments } : {}) });
  }

  /** The words of a voice note, echoed to the sender; null when it was refused (and the sender told why). */
  private async hear(m: ReceivedMessage, voice: IncomingFile): Promise<string | null> {
    if (!this.deps.config.audio.transcription_enabled) {
      await this.tell(m, 'voice', VOICE.off);
      return null;
    }
    let audio: { bytes: Buffer; name: string };
    try {
      const { abs } = await voice.fetch(uploadFolder(m, m.direct));
      // Read back by descriptor: what was saved, not what the path names by now.
      const opened = await openEntry(this.deps.paths, abs, 'read');
      try {
        audio = { bytes: await opened.handle.readFile(), name: path.basename(opened.abs) };
      } finally {
        await opened.handle.close();
      }
    } catch (err) {
      await this.tell(m, 'file', filesRefusedMarkdown([{ name: voice.name, why: this.refusal(err) }]));
      return null;
    }
    let text: string;
    try {
      text = (await this.deps.transcribe(audio)).trim();
    } catch (err) {
      this.deps.log.warn({ err, channel: m.channel }, 'transcription failed');
      await this.tell(m, 'voice', VOICE.failed(errorMessage(err)));
      return null;
    }
    await this.tell(m, 'voice', text ? VOICE.heard(text) : VOICE.silent);
    return text || null;
  }

  /** Why a file was not taken, for its sender. */
  private refusal(err: unknown): string {
    if (err instanceof UploadRefused) return err.message;
    this.deps.log.warn({ err }, 'file download failed');
    return UPLOAD.failed(errorMessage(err));
  }

  /**
   * A stranger's message: nothing of it is stored or read. Their live pairing code, or a new one
   * told to them (and the admins asked) — once: a redelivery finds its key recorded, and asking
   * again while a code is live tells nobody anything new.
   */
  private async pair(m: ReceivedMessage): Promise<SubmitResult> {
    // Nothing else is written for it, so the key is recorded on its own.
    if (m.dedupKey && !(await markInboundSeen(this.deps.db, m.dedupKey))) return { status: 'duplicate' };
    const p = await this.deps.access.requestPairing(m.channel, m.userId, m.userName ?? m.userId, m.chatKey);
    this.deps.log.info({ channel: m.channel, userId: m.userId, isNew: p.isNew }, 'unknown user asked to pair');
    if (p.isNew) {
      await this.tell(m, 'pairing', pairingCodeMarkdown(p.code, p.expiresAt));
      await this.askAdmins(m, p.code);
    }
    return { status: 'pairing_required', code: p.code, expiresAt: p.expiresAt, isNew: p.isNew };
  }

  /** Submit a let-in sender's message, then tell them about the flood limit if it dropped it. */
  private async submit(m: ReceivedMessage, message: InboundMessage): Promise<SubmitResult> {
    const result = await this.deps.inbound.submit(message);
    if (result.status === 'rate_limited' && result.notify)
      await this.tell(m, 'flood', rateLimitNotice(result.retryAfterMs));
    return result;
  }

  /**
   * Ask each admin of the sender's channel, in their direct chat with the bot, to approve a new
   * pairing code with a button. A ledger row per admin and code: durable, and shown once.
   */
  private async askAdmins(m: ReceivedMessage, code: string): Promise<void> {
    const channel = this.deps.router.list().find((c) => c.name === m.channel);
    if (!channel?.directChat) return;
    const prefix = `${m.channel}:`;
    for (const admin of this.deps.config.access.admins) {
      if (!admin.startsWith(prefix)) continue;
      const chat = channel.directChat(admin.slice(prefix.length));
      if (!chat || chat.chatKey === m.chatKey) continue;
      const content: TextContent = {
        type: 'text',
        markdown: pairingRequestMarkdown(code, m.chatKey),
        buttons: [[pairingButton(code)]],
      };
      await this.say(chat, pairingRequestKey(code, chat.chatKey), content).catch((err: unknown) =>
        this.deps.log.info({ err, admin }, 'could not ask an admin to approve a pairing'),
      );
    }
  }

  /**
   * Tell the sender of `m` something: in a direct chat a message of the chat; in a shared chat a
   * whisper to them, else a message in their direct chat where the bot may write to any member
   * (the shared chat is told where it went), else a message of the shared chat. `slot` tells apart the answers to
   * one message (a voice note is echoed, then maybe refused), so a redelivery answers once.
   */
  private async tell(m: ReceivedMessage, slot: string, markdown: string): Promise<void> {
    const content: TextContent = { type: 'text', markdown };
    const key = `${m.dedupKey ?? `said:${randomUUID()}`}:${slot}`;
    const channel = m.direct ? undefined : this.deps.router.list().find((c) => c.name === m.channel);
    const surface = channel?.surface;
    // A surface that cannot whisper here after all (a Bot API server that refused Telegram's
    // ephemeral messages) says so: the notice is then a message of the chat, as without whispers.
    if (surface?.addressOf && (await whisper(surface, surface.addressOf(m), m.userId, content, this.deps.log))) return;
    // Where the bot may write to any member directly, what is for the sender alone (a stranger's
    // pairing code) goes to their direct chat, and the group only hears where it went.
    const direct = channel?.capabilities.has('direct-to-members') ? channel.directChat?.(m.userId) : undefined;
    const chat = { channel: m.channel, chatKey: m.chatKey, threadKey: m.threadKey ?? '' };
    if (!direct) return this.say(chat, key, content);
    await this.say(direct, key, content);
    await this.say(chat, `${key}:pointer`, { type: 'text', markdown: SENT_DIRECTLY });
  }
}
