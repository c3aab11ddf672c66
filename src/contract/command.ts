/**
 * A chat command and a tap as a channel hands them to the core (`core.command(name, args, place)`,
 * `core.act(action, by, tap)`) and what comes back; the commands and actions themselves run in
 * the core (`core/commands.ts`, `core/actions.ts`).
 */
import type { Button } from './actions.js';
import type { ChatRef, FullChatRef } from './chat.js';

/** Where and by whom a command was typed, as its channel tells the core (`core.command(name, args, place)`). */
export interface CommandPlace {
  /** `channel:userId` of whoever typed it. */
  by: string;
  /** The chat the command was typed in (the home chat of `/sethome`). */
  chat: FullChatRef;
  /**
   * The conversation the command acts on: usually `chat`; in a Slack channel (commands carry no
   * thread) its most recently active thread; null when there is none yet.
   */
  ref: ChatRef | null;
  /** A chat several people share (a group, a Slack channel), not a DM or a terminal. */
  shared: boolean;
  /** Every top-level message in this chat starts its own conversation (a Slack channel): `/new` has nothing to do. */
  threadPerMessage?: boolean;
  /** How this channel spells a command: `/new`, `/switchboard new`. */
  spell(name: string): string;
  /** One line on how to talk to the bot here, appended to `/help`. */
  hint?: string;
}

/** What a command answers. */
export interface CommandAnswer {
  /** Shown to the person who typed the command (Markdown, rendered like replies). */
  markdown: string;
  /** Rows of buttons under the answer (the `/jobs` list), for channels that have buttons. */
  buttons?: Button[][];
  /** The turn's own end says the same (a stopped turn): a channel printing core events may leave the answer out. */
  echoedByEvents?: boolean;
}

/** Why a decision or an answer was refused. */
export type RefusalReason = 'unknown' | 'not_allowed' | 'already_decided' | 'expired';

/** What came of a tap. */
export interface ActionOutcome {
  /** False when refused; nothing changed then. */
  ok: boolean;
  /** Why a decision or an answer was refused, for a channel that words refusals its own way (the terminals). */
  reason?: RefusalReason;
  /** A sentence for the person who tapped (a toast, an ephemeral message). */
  text: string;
}
