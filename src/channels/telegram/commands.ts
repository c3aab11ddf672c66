/**
 * Bot commands: /start, /help, /new, /stop, /status, /model [name], /sethome, /jobs, /rules [revoke ID],
 * /mcp. They never reach the model; an unknown command gets the short help. Registered with `setMyCommands` at start.
 */
import type { Context } from 'grammy';
import { rulesCommand } from '../../core/rules-command.js';
import { escapeHtml } from './markdown.js';
import { mcpStatusText } from '../../tools/source.js';
import { type InboundDeps, principalOf, refOf, targetOfContext } from './context.js';
import { errorMessage } from '../../errors.js';
import { jobsMessageFor } from './jobs.js';

/** Commands shown in Telegram's menu. */
export const BOT_COMMANDS = [
  { command: 'start', description: 'Say hello and show what I can do' },
  { command: 'help', description: 'Show the commands' },
  { command: 'new', description: 'Start a fresh conversation' },
  { command: 'stop', description: 'Cancel the running turn and clear the queue' },
  { command: 'status', description: 'Model, pending approvals, queue' },
  { command: 'model', description: 'Show or set the model: /model [name|default]' },
  { command: 'sethome', description: 'Send notifications to this chat' },
  { command: 'jobs', description: 'Scheduled jobs: pause, resume, run now, delete' },
  { command: 'rules', description: 'Your stored approval rules: /rules [revoke ID]' },
  { command: 'mcp', description: 'MCP tool servers: state and tools' },
] as const;

/** Short help listing the commands. */
export const HELP_HTML = [
  '<b>Commands</b>',
  ...BOT_COMMANDS.map((c) => `/${c.command} — ${escapeHtml(c.description)}`),
  '',
  'Anything else you write goes to the assistant. In groups, mention me or reply to me.',
].join('\n');

/** Split `/cmd@bot args` into its parts; null when the text is not a command. */
export function parseCommand(text: string): { name: string; bot: string | null; args: string } | null {
  const m = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{3,64}))?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return null;
  return { name: (m[1] as string).toLowerCase(), bot: m[2] ?? null, args: (m[3] ?? '').trim() };
}

/** Run a command for an allowed user; replies in the chat. */
export async function runCommand(ctx: Context, deps: InboundDeps, name: string, args: string): Promise<void> {
  const target = targetOfContext(ctx);
  const by = principalOf(ctx);
  if (!target || !by) return;
  const ref = refOf(target);
  const core = deps.core();
  const reply = (html: string) => deps.outbox.serial(target, () => deps.outbox.sendHtml(target, html));
  switch (name) {
    case 'start':
      await reply(`👋 Hi! I am an assistant that can use tools. Just write to me.\n\n${HELP_HTML}`);
      return;
    case 'help':
      await reply(HELP_HTML);
      return;
    case 'new':
      await core.newConversation(ref, by);
      await reply('🆕 Started a fresh conversation.');
      return;
    case 'stop': {
      const stopped = await core.stop(ref, by);
      await reply(stopped ? '⏹ Stopped.' : 'Nothing is running.');
      return;
    }
    case 'status': {
      const s = await core.status(ref);
      await reply(
        [
          '<b>Status</b>',
          `Model: <code>${escapeHtml(s.model)}</code>`,
          `Turn: ${s.turn}`,
          `Pending approvals: ${s.pendingApprovals}`,
          `Open questions: ${s.pendingQuestions}`,
          `Queued messages: ${s.queued}`,
        ].join('\n'),
      );
      return;
    }
    case 'mcp':
      await reply(`<b>MCP servers</b>\n<pre>${escapeHtml(mcpStatusText(core.toolSources()))}</pre>`);
      return;
    case 'model': {
      if (!args) {
        const s = await core.status(ref);
        await reply(`Model: <code>${escapeHtml(s.model)}</code>\nSet with /model NAME, reset with /model default.`);
        return;
      }
      if (/\s/.test(args) || args.length > 100) {
        await reply('A model name is one word, e.g. /model gpt-4o-mini.');
        return;
      }
      let model: string;
      try {
        model = await core.setModel(ref, args === 'default' || args === 'reset' ? null : args);
      } catch (err) {
        await reply(escapeHtml(errorMessage(err)));
        return;
      }
      await reply(`Model set to <code>${escapeHtml(model)}</code>.`);
      return;
    }
    case 'rules': {
      const r = await rulesCommand(core, by, args);
      await reply(r.table ? `<pre>${escapeHtml(r.text)}</pre>` : escapeHtml(r.text));
      return;
    }
    case 'sethome':
      if (!core.jobs) {
        await reply('Notifications are not available here.');
        return;
      }
      await core.jobs.setHome(by, { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' });
      await reply('🏠 This chat now receives your notifications.');
      return;
    case 'jobs': {
      const { html, keyboard } = await jobsMessageFor(core.jobs, by);
      await deps.outbox.serial(target, () => deps.outbox.sendHtml(target, html, keyboard));
      return;
    }
    default:
      await reply(`Unknown command /${escapeHtml(name)}.\n\n${HELP_HTML}`);
  }
}
