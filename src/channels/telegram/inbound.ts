/**
 * Incoming messages: decides whether the bot is addressed (groups: mention, reply or command),
 * runs commands, and hands everything else to the core as a message with its files and voice
 * note (`core.receive`), which lets the sender in or not, downloads, transcribes, de-duplicates,
 * queues and tells the sender what needs telling. Nothing here calls the model.
 */
import { Composer, type Context } from 'grammy';
import type { Message, MessageEntity } from 'grammy/types';
import type { IncomingFile } from '../../kit/index.js';
import { handleCallback } from './callbacks.js';
import { parseCommand, runCommand, stopFromDraft } from './commands.js';
import { displayName, type InboundDeps, principalOf, refOf, addressOfContext, updateKey } from './context.js';
import { downloadToUploads } from './files.js';

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
  return text
    .replace(new RegExp(`@${me.username}\\b`, 'gi'), '')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** The inbound composer: callback queries and messages. */
export function inboundComposer(deps: InboundDeps, me: () => BotIdentity): Composer<Context> {
  const composer = new Composer<Context>();
  composer.on('callback_query:data', (ctx) => handleCallback(ctx, deps));
  composer.on('message', (ctx) => handleMessage(ctx, deps, me()));
  composer.on('stopped_message_generation', (ctx) => stopFromDraft(ctx, deps));
  return composer;
}

async function handleMessage(ctx: Context, deps: InboundDeps, me: BotIdentity): Promise<void> {
  const msg = ctx.message;
  const address = addressOfContext(ctx);
  const by = principalOf(ctx);
  if (!msg || !address || !by || !ctx.from || ctx.from.is_bot) return;
  const core = deps.core();
  const name = displayName(ctx.from);
  // A group member's name is worth knowing before they address the bot (they may tap a card).
  if (!isAddressed(msg, me)) return core.names.remember(by, name);
  const userId = String(ctx.from.id);
  const command = msg.text ? parseCommand(msg.text) : null;
  if (command && (await core.mayUse(by))) {
    if (command.bot && command.bot.toLowerCase() !== me.username.toLowerCase()) return;
    if (!(await core.markInboundSeen(updateKey(ctx)))) return;
    await runCommand(ctx, deps, command.name, command.args);
    return;
  }
  // Audio and video files are files like any document; only voice notes are transcribed.
  const doc = msg.document ?? msg.audio ?? msg.video;
  const photo = msg.photo?.[msg.photo.length - 1];
  const media = doc ?? photo;
  // The core fetches files only for a sender it lets in, and the voice note only to transcribe it.
  await core.receive({
    ...refOf(address),
    userId,
    ...(name ? { userName: name } : {}),
    dedupKey: updateKey(ctx),
    direct: msg.chat.type === 'private',
    text: stripMention(msg.text ?? msg.caption ?? '', me),
    ...(msg.voice ? { voice: incoming(ctx, deps, msg.voice, `voice-${msg.message_id}.ogg`) } : {}),
    ...(media
      ? {
          files: [
            incoming(
              ctx,
              deps,
              media,
              doc?.file_name ?? (photo ? `photo-${msg.message_id}.jpg` : `file-${msg.message_id}`),
            ),
          ],
        }
      : {}),
  });
}

/** A file of a message, downloaded through `getFile` into the workspace `uploads/` when the core asks. */
function incoming(
  ctx: Context,
  deps: InboundDeps,
  media: { file_id: string; file_size?: number },
  name: string,
): IncomingFile {
  return {
    name,
    fetch: (folder) =>
      downloadToUploads({
        api: ctx.api,
        apiRoot: deps.config.telegram.api_root,
        token: deps.config.telegram.bot_token ?? '',
        paths: deps.paths,
        folder,
        fileId: media.file_id,
        declaredSize: media.file_size,
        fileName: name,
        maxBytes: deps.config.telegram.max_download_bytes,
      }),
  };
}
