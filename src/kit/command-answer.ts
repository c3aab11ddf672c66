/**
 * Showing a command's answer and the platform Stop button: glue a channel uses around
 * `core.command(...)` (the commands themselves run in the core).
 */
import type { Logger } from 'pino';
import type { ChatRef, FullChatRef } from '../contract/chat.js';
import type { ChannelCore } from '../contract/roles.js';
import type { CommandAnswer, CommandPlace } from '../contract/command.js';
import type { Emitter, Part } from '../contract/surface.js';
import { notAllowed } from '../core/commands.js';
import { commandFailedText } from '../delivery/notices.js';
import { parseMarkdown } from '../delivery/render.js';
import { errorMessage } from '../errors.js';

/** Options of {@link sayAnswer}. */
export interface SayAnswerOptions {
  /** Say nothing when the turn's own end says the same (a channel that shows a stopped turn). */
  omitEchoed?: boolean;
}

/**
 * Say a command's answer in the chat it was typed in (`chat`), through the delivery ledger under
 * `key` — the way every channel whose answers are messages of the chat shows them. Use the typed
 * message's own key (a platform update's), so a redelivered command answers once.
 */
export async function sayAnswer(
  core: Pick<ChannelCore, 'say'>,
  chat: FullChatRef,
  answer: CommandAnswer,
  key: string,
  options: SayAnswerOptions = {},
): Promise<void> {
  if (options.omitEchoed && answer.echoedByEvents) return;
  await core.say(chat, key, {
    type: 'text',
    markdown: answer.markdown,
    ...(answer.buttons?.length ? { buttons: answer.buttons } : {}),
  });
}

/**
 * Run command `name` through the core and say its answer as {@link sayAnswer} does.
 * @returns the answer, said already.
 */
export async function sayCommand(
  core: Pick<ChannelCore, 'command' | 'say'>,
  name: string,
  args: string,
  place: CommandPlace,
  key: string,
  options: SayAnswerOptions = {},
): Promise<CommandAnswer> {
  const answer = await core.command(name, args, place);
  await sayAnswer(core, place.chat, answer, key, options);
  return answer;
}

/**
 * A platform's own Stop button (Telegram's on a draft) pressed by `by` in `chat`: the turn stops
 * as by `/stop`, by the same rules. The stopped reply says so itself, so only a refusal is said
 * (under `key`, the press's own); a press by someone who may not use the bot does nothing.
 */
export async function stopFromButton(
  core: Pick<ChannelCore, 'mayUse' | 'markInboundSeen' | 'chats' | 'say'>,
  chat: FullChatRef,
  by: string,
  key: string,
): Promise<void> {
  if (!(await core.mayUse(by))) return;
  if (!(await core.markInboundSeen(key))) return;
  const refused = await notAllowed(() => core.chats.stop(chat, by));
  if (refused) await core.say(chat, `command:${key}`, { type: 'text', markdown: `⛔ ${refused}` });
}

/**
 * A command's answer, or, when running it failed, the failure as the answer (logged on `log`):
 * a command answered to one person (a slash command) still answers its caller.
 */
export function answerOrFailure(work: Promise<CommandAnswer>, log: Logger): Promise<CommandAnswer> {
  return work.catch((err: unknown): CommandAnswer => {
    log.error({ err }, 'command failed');
    return { markdown: commandFailedText(errorMessage(err)) };
  });
}

/** An answer (a command's, a tapped list's) as the parts `emitter` draws: its Markdown, its buttons under it. */
export function answerParts(
  emitter: Pick<Emitter, 'markdown'>,
  answer: Pick<CommandAnswer, 'markdown' | 'buttons'>,
): Part[] {
  return emitter.markdown(parseMarkdown(answer.markdown), undefined, answer.buttons);
}

/**
 * A command typed as `<name> [args]` after the platform's own command (`/switchboard new Berlin`):
 * its name in lower case (`help` when the text is empty) and the rest, trimmed.
 */
export function commandWords(text: string | undefined): { name: string; args: string } {
  const trimmed = (text ?? '').trim();
  const [first = 'help'] = trimmed.split(/\s+/).filter(Boolean);
  return { name: first.toLowerCase(), args: trimmed.slice(first.length).trim() };
}

/**
 * The conversation a command typed in a shared channel itself acts on (a platform command carries
 * no thread there): the channel's most recently active thread, or null when it has none.
 */
export async function latestThread(
  core: Pick<ChannelCore, 'chats'>,
  channel: string,
  chatKey: string,
): Promise<ChatRef | null> {
  const row = await core.chats.latest(channel, chatKey);
  return row ? { channel, chatKey, threadKey: row.thread_key } : null;
}
