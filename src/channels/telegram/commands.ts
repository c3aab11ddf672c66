/**
 * Telegram's command syntax (`/cmd@bot args`) mapped onto the core's command table; answers go
 * into the chat through the delivery ledger. Registered with `setMyCommands` at start.
 */
import type { Context } from 'grammy';
import { listedCommands, sayCommand, stopFromButton, HELP_HINT } from '../../kit/index.js';
import type { CommandPlace } from '../../kit/index.js';
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
  const place: CommandPlace = {
    by,
    chat,
    ref: chat,
    shared: ctx.chat?.type !== 'private',
    spell: (n) => `/${n}`,
    hint: HELP_HINT.telegram,
  };
  await sayCommand(core, name, args, place, `command:${updateKey(ctx)}`);
}

/**
 * Stop pressed on a draft (`stopped_message_generation`): as `/stop` by the chat's person (drafts
 * exist in private chats only, whose id is their person's).
 */
export async function stopFromDraft(ctx: Context, deps: InboundDeps): Promise<void> {
  const stop = ctx.update.stopped_message_generation;
  if (!stop) return;
  const thread = stop.message_thread_id ? { threadId: stop.message_thread_id } : {};
  const ref = refOf({ chatId: stop.chat.id, ...thread });
  await stopFromButton(
    deps.core(),
    { ...ref, threadKey: ref.threadKey ?? '' },
    `${CHANNEL}:${stop.chat.id}`,
    updateKey(ctx),
  );
}
