/**
 * The chat commands, one table for every channel (Telegram, Slack, the terminal chat, JSONL, the
 * web chat). A channel only maps its platform's syntax onto a name and its arguments (`/cmd@bot
 * args`, `/switchboard cmd args`, `{"type":"command"}`) and shows the answer: Markdown, plus the
 * jobs whose buttons it should draw. `/help` is generated from the table.
 *
 * Adding a command is one {@link registerCommand} call (or one entry in {@link BUILTIN_COMMANDS}):
 *
 * ```ts
 * registerCommand({
 *   name: 'usage', summary: 'Tokens and cost of this conversation',
 *   async run(ctx) { return { markdown: `…` }; },
 * });
 * ```
 */
import type { ChatRef } from '../contract/chat.js';
import type { CommandAnswer, CommandPlace } from '../contract/command.js';
import type { CommandCore } from '../contract/roles.js';
import { jobListCard } from '../delivery/cards.js';
import { HELP_HINT, JOBS_UNAVAILABLE } from '../delivery/notices.js';
import { errorMessage, SwitchboardError } from '../errors.js';
import { mcpStatusText } from '../tools/source.js';
import { rulesCommand } from './rules-command.js';

export type { CommandAnswer };

/** Everything a command handler may use: where it was typed, its arguments and the core's command role. */
export interface CommandContext extends CommandPlace {
  core: CommandCore;
  /** The text after the command name, trimmed. */
  args: string;
}

/** One command of the table. */
export interface CommandSpec {
  /** Lower-case name without the slash. */
  name: string;
  /** Argument synopsis for the help, e.g. `[name|default]`. */
  usage?: string;
  /** One line for `/help` and Telegram's command menu. */
  summary: string;
  /** Runs for people who may not use the bot yet (only `/help`); default: no. */
  open?: boolean;
  /** Left out of `/help` and the menu (aliases). */
  hidden?: boolean;
  run(ctx: CommandContext): Promise<CommandAnswer>;
}

const table = new Map<string, CommandSpec>();

/**
 * Add a command to the table (or replace one of the same name).
 * @throws Error when the name is not 1–32 characters of `a-z`, `0-9` and `_` (Telegram's rule).
 */
export function registerCommand(spec: CommandSpec): void {
  if (!/^[a-z0-9_]{1,32}$/.test(spec.name))
    throw new Error(`command name must be 1-32 of a-z, 0-9, _: ${JSON.stringify(spec.name)}`);
  table.set(spec.name, spec);
}

/** Take a command out of the table (a command offered only while something serves it). */
export function unregisterCommand(name: string): void {
  table.delete(name);
}

/** Every command, in help order. */
export function commands(): CommandSpec[] {
  return [...table.values()];
}

/** The commands to list in `/help` and in a platform's command menu. */
export function listedCommands(): CommandSpec[] {
  return commands().filter((c) => !c.hidden);
}

/** `/help`: every listed command as this channel spells it. */
export function helpMarkdown(ctx: Pick<CommandContext, 'spell' | 'hint'>): string {
  const lines = listedCommands().map((c) => `${ctx.spell(c.name)}${c.usage ? ` ${c.usage}` : ''} — ${c.summary}`);
  return ['**Commands**', ...lines, '', ctx.hint ?? HELP_HINT.any].join('\n');
}

/**
 * Run command `name` (lower case, no slash; see `ChannelCore.command`). Unknown names answer with the
 * help; people `mayUse` refuses get a refusal (pairing happens by writing a message).
 */
export async function runCommand(
  name: string,
  ctx: CommandContext,
  mayUse: (by: string) => Promise<boolean>,
): Promise<CommandAnswer> {
  const spec = table.get(name.toLowerCase());
  if (!spec) return { markdown: `Unknown command ${ctx.spell(name.toLowerCase())}.\n\n${helpMarkdown(ctx)}` };
  if (!spec.open && !(await mayUse(ctx.by))) {
    return { markdown: '⛔ You are not allowed to use this bot yet. Send me a direct message to get a pairing code.' };
  }
  return spec.run(ctx);
}

/**
 * Run `fn`; the reason when the core refused it as `not_allowed` (someone else's work in a
 * shared chat), else undefined. Other errors propagate.
 */
export async function notAllowed(fn: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    if (err instanceof SwitchboardError && err.code === 'not_allowed') return err.message;
    throw err;
  }
}

/** A code span that survives any text inside it. */
function code(text: string): string {
  const ticks = text.includes('`') ? '``' : '`';
  return `${ticks}${text}${ticks}`;
}

function fenced(text: string): string {
  return `\`\`\`\n${text.replace(/```/g, "'''")}\n\`\`\``;
}

/** The commands every channel has. */
export const BUILTIN_COMMANDS: CommandSpec[] = [
  {
    name: 'start',
    summary: 'Say hello and show what I can do',
    async run(ctx) {
      return { markdown: `👋 Hi! I am an assistant that can use tools. Just write to me.\n\n${helpMarkdown(ctx)}` };
    },
  },
  {
    name: 'help',
    summary: 'Show the commands',
    open: true,
    async run(ctx) {
      return { markdown: helpMarkdown(ctx) };
    },
  },
  {
    name: 'new',
    summary: 'Start a fresh conversation',
    async run(ctx) {
      if (ctx.threadPerMessage || !ctx.ref)
        return { markdown: 'Here every message outside a thread starts a new conversation.' };
      const refused = await notAllowed(() => ctx.core.newConversation(ctx.ref as ChatRef, ctx.by));
      if (refused) return { markdown: `⛔ ${refused}` };
      return { markdown: '🆕 Started a fresh conversation.' };
    },
  },
  {
    name: 'stop',
    summary: 'Cancel the running turn and clear the queue',
    async run(ctx) {
      if (!ctx.ref) return { markdown: 'Nothing is running.' };
      const ref = ctx.ref;
      const running = (await ctx.core.status(ref)).turn !== 'idle';
      let stopped = false;
      const refused = await notAllowed(async () => {
        stopped = await ctx.core.stop(ref, ctx.by);
      });
      if (refused) return { markdown: `⛔ ${refused}` };
      if (!stopped) return { markdown: 'Nothing is running.' };
      return { markdown: '⏹ Stopped.', ...(running ? { echoedByEvents: true } : {}) };
    },
  },
  {
    name: 'compact',
    summary: 'Summarise the earlier messages now',
    async run(ctx) {
      if (!ctx.ref) return { markdown: 'Nothing to summarise yet.' };
      return { markdown: await ctx.core.compact(ctx.ref, ctx.by) };
    },
  },
  {
    name: 'usage',
    summary: 'Your tokens today and this month',
    async run(ctx) {
      return { markdown: await ctx.core.usage(ctx.by) };
    },
  },
  {
    name: 'status',
    summary: 'Model, pending approvals, queue',
    async run(ctx) {
      if (!ctx.ref) return { markdown: 'No conversation here yet. Mention me to start one.' };
      const s = await ctx.core.status(ctx.ref);
      const where = ctx.ref.threadKey && ctx.threadPerMessage ? ' (latest thread)' : '';
      const lines = [
        `**Status**${where}`,
        `Model: ${code(s.model)}`,
        `Turn: ${s.turn}`,
        `Pending approvals: ${s.pendingApprovals}`,
        `Open questions: ${s.pendingQuestions}`,
        `Queued messages: ${s.queued}`,
      ];
      if (s.pendingElsewhere?.length)
        lines.push(`Waiting in other conversations: ${s.pendingElsewhere.join(', ')} (open with --conversation NAME)`);
      return { markdown: lines.join('\n') };
    },
  },
  {
    name: 'model',
    usage: '[name|default]',
    summary: 'Show or set the model',
    async run(ctx) {
      const ref = ctx.ref ?? ctx.chat;
      if (!ctx.args) {
        const s = await ctx.core.status(ref);
        return {
          markdown: `Model: ${code(s.model)}\nSet with ${ctx.spell('model')} NAME, reset with ${ctx.spell('model')} default.`,
        };
      }
      if (/\s/.test(ctx.args) || ctx.args.length > 100)
        return { markdown: `A model name is one word, e.g. ${ctx.spell('model')} gpt-4o-mini.` };
      try {
        const model = await ctx.core.setModel(ref, ctx.args === 'default' || ctx.args === 'reset' ? null : ctx.args);
        return { markdown: `Model set to ${code(model)}.` };
      } catch (err) {
        // The endpoint does not list this model (as `doctor` checks): said, nothing changed.
        return { markdown: errorMessage(err) };
      }
    },
  },
  {
    name: 'sethome',
    summary: 'Send notifications to this chat',
    async run(ctx) {
      if (!ctx.core.jobs) return { markdown: 'Notifications are not available here.' };
      await ctx.core.jobs.setHome(ctx.by, ctx.chat);
      return { markdown: '🏠 This chat now receives your notifications.' };
    },
  },
  {
    name: 'jobs',
    summary: 'Scheduled jobs: pause, resume, run now, delete',
    async run(ctx) {
      if (!ctx.core.jobs) return { markdown: JOBS_UNAVAILABLE };
      return jobListCard(await ctx.core.jobs.list(ctx.by));
    },
  },
  {
    name: 'rules',
    usage: '[revoke ID]',
    summary: 'Your stored approval rules',
    async run(ctx) {
      const r = await rulesCommand(ctx.core.rules, ctx.by, ctx.args);
      return { markdown: r.table ? fenced(r.text) : r.text };
    },
  },
  {
    name: 'mcp',
    summary: 'MCP tool servers: state and tools',
    async run(ctx) {
      return { markdown: `**MCP servers**\n${fenced(mcpStatusText(ctx.core.toolSources()))}` };
    },
  },
];

for (const spec of BUILTIN_COMMANDS) registerCommand(spec);
