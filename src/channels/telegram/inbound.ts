/**
 * Incoming messages: decides whether the bot is addressed (groups: mention, reply or command),
 * runs commands, downloads files and voice notes, and submits everything else to the core,
 * which does the access check, de-duplication and queueing. Nothing here calls the model.
 */
import { Composer, type Context } from 'grammy';
import type { Message, MessageEntity } from 'grammy/types';
import type { InboundMessage } from '../../contract/chat.js';
import type { SubmitResult } from '../../contract/core.js';
import { errorMessage } from '../../errors.js';
import { handleCallback, pairingButton, pairingRequestKey } from './callbacks.js';
import { parseCommand, runCommand } from './commands.js';
import { CHANNEL, type InboundDeps, principalOf, refOf, addressOfContext, updateKey } from './context.js';
import { TelegramFileError, downloadToUploads } from './files.js';
import type { Button } from '../../contract/actions.js';
import { fileRefusedMarkdown, pairingCodeMarkdown, pairingRequestMarkdown, rateLimitNotice, VOICE } from '../../delivery/notices.js';
import type { TelegramAddress } from './html-sender.js';

/** Bot identity needed to tell whether a group message is meant for us. */
export interface BotIdentity {
  id: number;
  username: string;
}

function entitiesOf(msg: Message): MessageEntity[] {
  return msg.entities ?? msg.caption_entities ?? [];
}

/** Whether a group message addresses the bot: a mention, a reply to the bot, or a command. */
export function isAddressed(msg: Message, me: BotIdentity): boolean {
  if (msg.chat.type === 'private') return true;
  if (msg.reply_to_message?.from?.id === me.id) return true;
  const text = msg.text ?? msg.caption ?? '';
  const handle = `@${me.username}`.toLowerCase();
  for (const e of entitiesOf(msg)) {
    const piece = text.slice(e.offset, e.offset + e.length).toLowerCase();
    if (e.type === 'mention' && piece === handle) return true;
    if (e.type === 'text_mention' && e.user?.id === me.id) return true;
    if (e.type === 'bot_command' && e.offset === 0) {
      const at = piece.indexOf('@');
      if (at < 0 || piece.slice(at) === handle) return true;
    }
  }
  return false;
}

/** Remove `@botname` from the text sent to the model. */
function stripMention(text: string, me: BotIdentity): string {
  return text.replace(new RegExp(`@${me.username}\\b`, 'gi'), '').replace(/\s{2,}/g, ' ').trim();
}

/** The inbound composer: callback queries and messages. */
export function inboundComposer(deps: InboundDeps, me: () => BotIdentity): Composer<Context> {
  const composer = new Composer<Context>();
  composer.use(async (ctx, next) => {
    deps.names.remember(ctx.from);
    await next();
  });
  composer.on('callback_query:data', (ctx) => handleCallback(ctx, deps));
  composer.on('message', (ctx) => handleMessage(ctx, deps, me()));
  return composer;
}

/**
 * Answer in the chat through the delivery ledger (durable, in order with the chat's replies).
 * `slot` tells apart the answers to one update (a voice note is echoed, then maybe refused).
 */
async function reply(deps: InboundDeps, ctx: Context, target: TelegramAddress, slot: string, markdown: string, buttons?: Button[][]): Promise<void> {
  await deps.core().say(refOf(target), `${updateKey(ctx)}:${slot}`, { type: 'text', markdown, ...(buttons ? { buttons } : {}) });
}

async function handleMessage(ctx: Context, deps: InboundDeps, me: BotIdentity): Promise<void> {
  const msg = ctx.message;
  const target = addressOfContext(ctx);
  const by = principalOf(ctx);
  if (!msg || !target || !by || !ctx.from || ctx.from.is_bot) return;
  if (!isAddressed(msg, me)) return;
  const core = deps.core();
  const userId = String(ctx.from.id);
  const base = { ...refOf(target), userId, userName: deps.names.nameOf(by), dedupKey: updateKey(ctx) };
  const allowed = await core.isAllowed(CHANNEL, userId);

  const command = msg.text ? parseCommand(msg.text) : null;
  if (command && allowed) {
    if (command.bot && command.bot.toLowerCase() !== me.username.toLowerCase()) return;
    if (!(await core.markInboundSeen(updateKey(ctx)))) return;
    await runCommand(ctx, deps, command.name, command.args);
    return;
  }
  if (!allowed) {
    // Unknown users get a pairing code and nothing else: no downloads, no transcription.
    await settle(deps, ctx, target, await core.submit({ ...base, text: msg.text ?? msg.caption ?? '(media)' }));
    return;
  }

  if (msg.voice) {
    await handleVoice(ctx, deps, target, base);
    return;
  }
  // Audio and video files are files like any document; only voice notes are transcribed.
  const doc = msg.document ?? msg.audio ?? msg.video;
  const photo = msg.photo?.[msg.photo.length - 1];
  if (doc || photo) {
    const fileId = (doc?.file_id ?? photo?.file_id) as string;
    const fileName = doc?.file_name ?? (photo ? `photo-${msg.message_id}.jpg` : `file-${msg.message_id}`);
    let rel: string;
    try {
      ({ rel } = await download(ctx, deps, fileId, doc?.file_size ?? photo?.file_size, fileName));
    } catch (err) {
      await fileFailure(deps, ctx, target, err);
      return;
    }
    const caption = stripMention(msg.caption ?? '', me);
    const text = caption || `(sent a file: ${rel})`;
    await settle(deps, ctx, target, await core.submit({ ...base, text, attachments: [rel] }));
    return;
  }
  if (msg.text === undefined) return;
  const text = stripMention(msg.text, me);
  if (!text) return;
  await settle(deps, ctx, target, await core.submit({ ...base, text }));
}

/** Download a file the user sent into the workspace `uploads/` folder, within the size cap. */
function download(ctx: Context, deps: InboundDeps, fileId: string, declaredSize: number | undefined, fileName: string) {
  return downloadToUploads({
    api: ctx.api,
    apiRoot: deps.config.telegram.api_root,
    token: deps.config.telegram.bot_token ?? '',
    paths: deps.paths,
    fileId,
    declaredSize,
    fileName,
    maxBytes: deps.config.telegram.max_download_bytes,
  });
}

async function handleVoice(ctx: Context, deps: InboundDeps, target: TelegramAddress, base: Omit<InboundMessage, 'text'>): Promise<void> {
  const msg = ctx.message as Message;
  if (!deps.config.audio.transcription_enabled) {
    await reply(deps, ctx, target, 'voice', VOICE.off);
    return;
  }
  const media = msg.voice as { file_id: string; file_size?: number };
  let abs: string;
  try {
    ({ abs } = await download(ctx, deps, media.file_id, media.file_size, `voice-${msg.message_id}.ogg`));
  } catch (err) {
    await fileFailure(deps, ctx, target, err);
    return;
  }
  let text: string;
  try {
    text = (await deps.core().transcribe(abs)).trim();
  } catch (err) {
    deps.log.warn({ err }, 'telegram: transcription failed');
    await reply(deps, ctx, target, 'voice', VOICE.failed(errorMessage(err)));
    return;
  }
  if (!text) {
    await reply(deps, ctx, target, 'voice', VOICE.silent);
    return;
  }
  await reply(deps, ctx, target, 'voice', VOICE.heard(text));
  await settle(deps, ctx, target, await deps.core().submit({ ...base, text }));
}

async function fileFailure(deps: InboundDeps, ctx: Context, target: TelegramAddress, err: unknown): Promise<void> {
  if (!(err instanceof TelegramFileError)) deps.log.warn({ err }, 'telegram: file download failed');
  await reply(deps, ctx, target, 'file', fileRefusedMarkdown(err instanceof TelegramFileError ? err.message : `I could not fetch that file: ${errorMessage(err)}`));
}

/** React to what the core did with a message: pairing codes and rate-limit notices. */
async function settle(deps: InboundDeps, ctx: Context, target: TelegramAddress, result: SubmitResult): Promise<void> {
  if (result.status === 'pairing_required') {
    if (!result.isNew) return;
    await reply(deps, ctx, target, 'pairing', pairingCodeMarkdown(result.code, result.expiresAt));
    await notifyAdmins(deps, target, result.code);
    return;
  }
  if (result.status === 'rate_limited' && result.notify) await reply(deps, ctx, target, 'flood', rateLimitNotice(result.retryAfterMs));
}

/** Ask every Telegram admin (in their DM with the bot) to approve a pairing code, with a button. */
async function notifyAdmins(deps: InboundDeps, from: TelegramAddress, code: string): Promise<void> {
  const admins = deps.config.access.admins.filter((a) => a.startsWith(`${CHANNEL}:`)).map((a) => Number(a.slice(CHANNEL.length + 1)));
  for (const adminId of admins) {
    if (!Number.isSafeInteger(adminId) || adminId === from.chatId) continue;
    const admin = refOf({ chatId: adminId });
    await deps
      .core()
      .say(admin, pairingRequestKey(code, adminId), { type: 'text', markdown: pairingRequestMarkdown(code, String(from.chatId)), buttons: [[pairingButton(code)]] })
      .catch((err) => deps.log.info({ err, adminId }, 'telegram: could not notify admin about pairing'));
  }
}
