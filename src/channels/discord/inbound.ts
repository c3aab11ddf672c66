/**
 * Incoming messages. A DM is one conversation; in a server a message mentioning the bot starts a
 * thread on itself, which is that conversation, and the bot's threads are answered afterwards
 * without a mention; other chatter and bots are ignored. `/command` text in a DM or a thread of
 * the bot runs through the command table; everything else goes to `core.receive` keyed
 * `discord:message:<id>`, so a message the gateway replays is taken once.
 */
import { type ChatRef, type CommandPlace, sayCommand } from '../../kit/index.js';
import type { GatewayMessageCreateDispatchData } from '@discordjs/core';
import { CHANNEL, conversationRef, type DiscordContext, displayName, refOf, THREADS } from './context.js';
import { HELP } from './commands.js';
import { incomingFile } from './files.js';

/** Remove the bot's mention from a message. */
export function stripMention(text: string, botId: string): string {
  return text.replace(new RegExp(`\\s*<@!?${botId}>\\s*`, 'g'), ' ').trim();
}

/** `/name args` → its parts; null when the text is not a command. */
export function parseCommand(text: string): { name: string; args: string } | null {
  const m = /^\/([A-Za-z0-9_]{1,32})(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: (m[1] as string).toLowerCase(), args: (m[2] ?? '').trim() } : null;
}

/** The conversation of a message, or null when it is not for the bot. */
async function conversationOf(ctx: DiscordContext, m: GatewayMessageCreateDispatchData): Promise<ChatRef | null> {
  const core = ctx.core();
  if (!m.guild_id) ctx.surface.knowDm(m.author.id, m.channel_id);
  const known = await conversationRef(core, m.channel_id, !!m.guild_id, m.author.id);
  if (known || !m.mentions.some((u) => u.id === ctx.botId())) return known;
  // A stranger gets no thread: the core answers them in the channel itself.
  if (!(await core.mayUse(`${CHANNEL}:${m.author.id}`))) return refOf(m.channel_id, m.channel_id);
  const thread = await ctx.surface.openThread(m.channel_id, m.id, stripMention(m.content, ctx.botId()));
  core.store.memo(THREADS).set(thread, m.channel_id);
  return refOf(m.channel_id, thread);
}

/** Handle one MESSAGE_CREATE (queued per Discord channel by the caller). */
export async function onMessage(ctx: DiscordContext, m: GatewayMessageCreateDispatchData): Promise<void> {
  if (m.author.bot || m.webhook_id || m.author.id === ctx.botId()) return;
  const core = ctx.core();
  const by = `${CHANNEL}:${m.author.id}`;
  const name = displayName(m.author);
  const ref = await conversationOf(ctx, m);
  // A member's name is worth knowing before they address the bot (they may tap a card).
  if (!ref) return core.names.remember(by, name);
  const dedupKey = `${CHANNEL}:message:${m.id}`;
  const direct = !m.guild_id;
  const text = stripMention(m.content, ctx.botId());
  // Commands are typed in a DM or a thread of the bot; in a guild channel itself (a stranger's
  // mention) the text is a message like any other.
  const command = ref.threadKey !== ref.chatKey ? parseCommand(text) : null;
  if (command && (await core.mayUse(by))) {
    if (!(await core.markInboundSeen(dedupKey))) return;
    const chat = { ...ref, threadKey: ref.threadKey ?? '' };
    const place: CommandPlace = {
      by,
      chat,
      ref: chat,
      shared: !direct,
      spell: (n) => `/${n}`,
      hint: HELP,
    };
    await sayCommand(core, command.name, command.args, place, `command:${dedupKey}`);
    return;
  }
  await core.receive({
    ...ref,
    userId: m.author.id,
    userName: name,
    dedupKey,
    direct,
    text,
    ...(m.attachments.length
      ? { files: m.attachments.map((a) => incomingFile(a, ctx.paths, ctx.config.max_download_bytes)) }
      : {}),
  });
}
