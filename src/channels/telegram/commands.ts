/**
 * Telegram's command syntax (`/cmd@bot args`) mapped onto the core's command table; answers go
 * into the chat through the delivery ledger. Registered with `setMyCommands` at start.
 */
import type { Context } from 'grammy';
import { type CommandContext, listedCommands, sayCommand } from '../../core/commands.js';
import { HELP_HINT } from '../../delivery/notices.js';
import { SwitchboardError } from '../../errors.js';
import { CHANNEL, type InboundDeps, principalOf, refOf, addressOfContext, updateKey } from './context.js';

/** Commands shown in Telegram's menu: the listed commands of the table. */
export function botCommands(): Array<{ command: string; description: string }> {
  return listedCommands().map((c) => ({
    command: c.name,
    description: c.usage ? `${c.summary}: /${c.name} ${c.usage}` : c.summary,
  }));
}

/** Split `/cmd@bot args` into its parts; null when the text is not a command. */
export function parseCommand(text: string): { name: string; bot: string | null; args: string } | null {
  const m = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{3,64}))?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return null;
  return { name: (m[1] as string).toLowerCase(), bot: m[2] ?? null, args: (m[3] ?? '').trim() };
}

/** Run a command for an allowed user; the answer is a ledger row of the chat. */
export async function runCommand(ctx: Context, deps: InboundDeps, name: string, args: string): Promise<void> {
  const address = addressOfContext(ctx);
  const by = principalOf(ctx);
  if (!address || !by) return;
  const ref = refOf(address);
  const core = deps.core();
  const chat = { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' };
  const context: CommandContext = {
    core,
    by,
    args,
    chat,
    ref: chat,
    shared: ctx.chat?.type !== 'private',
    spell: (n) => `/${n}`,
    hint: HELP_HINT.telegram,
  };
  await sayCommand(name, context, `command:${updateKey(ctx)}`);
}

/**
 * Stop pressed on a draft (`stopped_message_generation`): the chat's turn stops as by `/stop`,
 * by the same rules (the core's). The stopped reply says so itself; only a refusal is answered.
 * Drafts exist in private chats only, whose id is their person's.
 */
export async function stopFromDraft(ctx: Context, deps: InboundDeps): Promise<void> {
  const stop = ctx.update.stopped_message_generation;
  if (!stop) return;
  const core = deps.core();
  const userId = String(stop.chat.id);
  const by = `${CHANNEL}:${userId}`;
  if (!(await core.isAllowed(CHANNEL, userId)) && !(await core.isAdmin(by))) return;
  if (!(await core.markInboundSeen(updateKey(ctx)))) return;
  const ref = refOf({ chatId: stop.chat.id, ...(stop.message_thread_id ? { threadId: stop.message_thread_id } : {}) });
  try {
    await core.stop(ref, by);
  } catch (err) {
    if (!(err instanceof SwitchboardError && err.code === 'not_allowed')) throw err;
    const chat = { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' };
    await core.say(chat, `command:${updateKey(ctx)}`, { type: 'text', markdown: `⛔ ${err.message}` });
  }
}
