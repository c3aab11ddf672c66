/**
 * Slash commands of the terminal chat: `/quit` (the terminal's own) and the core's command table.
 * They work at every prompt (an open approval, a denial note, a question), so `/stop` and `/quit`
 * are never trapped behind "please answer y/n".
 */
import { commands, listedCommands } from '../../kit/index.js';
import type { ChatRef, ChannelCore } from '../../kit/index.js';

/** The one-line help shown at start. */
export function consoleHelp(): string {
  return `Commands: ${listedCommands()
    .map((c) => `/${c.name}`)
    .join(', ')}, /quit. Anything else goes to the model.`;
}

/** What a command needs from the console channel. */
export interface CommandHost {
  printLine(text: string): void;
  /** Print Markdown as the terminal shows it. */
  printMarkdown(markdown: string): void;
  /** The last line of /help: how to talk to the model and leave. */
  readonly helpHint: string;
  ref(): ChatRef;
  quit(): Promise<void>;
  readonly prompts: unknown[];
}

/**
 * Run `line` if it is a known command.
 * @returns false when it is not a command (the line goes on to the prompt or the model).
 */
export async function runCommand(
  host: CommandHost,
  core: ChannelCore,
  line: string,
  principal: string,
): Promise<boolean> {
  const m = /^\/([A-Za-z0-9_]+)(?:\s+([\s\S]*))?$/.exec(line);
  if (!m) return false;
  const name = (m[1] as string).toLowerCase();
  if (name === 'quit' || name === 'exit') {
    await host.quit();
    return true;
  }
  // An unknown word after a slash is a message ("/etc/hosts is missing"), not a command.
  if (!commands().some((c) => c.name === name)) return false;
  const ref = host.ref();
  const answer = await core.command(name, (m[2] ?? '').trim(), {
    by: principal,
    chat: { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' },
    ref,
    shared: false,
    spell: (n) => `/${n}`,
    hint: host.helpHint,
  });
  // Stopped or started afresh: the open prompts belong to a turn that is over.
  if (name === 'stop' || name === 'new') host.prompts.length = 0;
  if (!answer.echoedByEvents) host.printMarkdown(answer.markdown);
  return true;
}
