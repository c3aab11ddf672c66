/**
 * The slash command `/switchboard new|stop|status|jobs|sethome|rules|help`. In a DM it acts on the DM conversation;
 * in a channel (slash commands carry no thread) `stop` and `status` act on the channel's most
 * recently active thread conversation. The answer is ephemeral, sent with the acknowledgement
 * when it is ready within two seconds, else as a follow-up ephemeral message.
 */
import type { App } from '@slack/bolt';
import type { ChatRef } from '../../contract/chat.js';
import type { CardMessage } from './blocks.js';
import { rulesCommand } from '../../core/rules-command.js';
import { mcpStatusText } from '../../tools/source.js';
import type { SlackContext } from './context.js';
import { jobsMessage } from './jobs.js';

/** Answer slower work with a follow-up instead of holding the 3 s acknowledgement. */
const ACK_BUDGET_MS = 2_000;

/** Usage text of the command. */
export const COMMAND_HELP = [
  '*switchboard* — talk to me in a DM, or @mention me in a channel (I answer in the thread).',
  '`/switchboard new` — start a fresh conversation (in a DM)',
  '`/switchboard stop` — stop the running turn, drop queued messages, cancel pending approvals',
  '`/switchboard status` — model, turn state, pending approvals and questions',
  '`/switchboard jobs` — scheduled jobs, with pause / resume / run now / delete buttons',
  '`/switchboard sethome` — send your notifications to this channel',
  '`/switchboard rules [revoke ID]` — your stored approval rules ("always" grants)',
  '`/switchboard mcp` — MCP tool servers: state and tools',
  '`/switchboard help` — this text',
].join('\n');

interface CommandPayload {
  user_id: string;
  channel_id: string;
  team_id?: string;
  text?: string;
}

/** The conversation a command applies to, or null when a channel has none. */
async function refFor(ctx: SlackContext, cmd: CommandPayload): Promise<ChatRef | null> {
  if (cmd.channel_id.startsWith('D')) return { channel: 'slack', chatKey: cmd.channel_id, threadKey: '' };
  const row = await ctx.core.latestConversation('slack', cmd.channel_id);
  return row ? { channel: 'slack', chatKey: cmd.channel_id, threadKey: row.thread_key } : null;
}

/** Run one command and return the answer text (or blocks). */
export async function runCommand(ctx: SlackContext, cmd: CommandPayload): Promise<string | CardMessage> {
  const [sub = 'help', ...rest] = (cmd.text ?? '').trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (sub === 'help') return COMMAND_HELP;
  if (!ctx.teamAllowed(cmd.team_id)) return ':no_entry: This bot does not serve this workspace.';
  const { core } = ctx;
  const by = `slack:${cmd.user_id}`;
  if (!((await core.isAllowed('slack', cmd.user_id)) || core.isAdmin(by))) {
    return ':no_entry: You are not allowed to use this bot yet. Send me a direct message to get a pairing code.';
  }
  const ref = await refFor(ctx, cmd);
  switch (sub) {
    case 'new':
      if (!cmd.channel_id.startsWith('D')) return 'In channels every @mention outside a thread starts a new conversation.';
      await core.newConversation(ref as ChatRef, by);
      return ':sparkles: Started a new conversation. Your next message begins afresh.';
    case 'stop':
      if (!ref) return 'Nothing is running here.';
      return (await core.stop(ref, by)) ? ':octagonal_sign: Stopped.' : 'Nothing was running.';
    case 'status': {
      if (!ref) return 'No conversation in this channel yet. @mention me to start one.';
      const s = await core.status(ref);
      const where = ref.threadKey ? ' (latest thread)' : '';
      return [
        `*Status*${where}`,
        `model: \`${s.model}\` · turn: ${s.turn}`,
        `pending approvals: ${s.pendingApprovals} · questions: ${s.pendingQuestions} · queued messages: ${s.queued}`,
      ].join('\n');
    }
    case 'jobs':
      return jobsMessage(core.jobs, by);
    case 'sethome':
      if (!core.jobs) return 'Notifications are not available here.';
      await core.jobs.setHome(by, { channel: 'slack', chatKey: cmd.channel_id, threadKey: '' });
      return ':house: This channel now receives your notifications.';
    case 'rules': {
      const r = await rulesCommand(core, by, rest.join(' '));
      return r.table ? `\`\`\`\n${r.text}\n\`\`\`` : r.text;
    }
    case 'mcp':
      return `*MCP servers*\n\`\`\`\n${mcpStatusText(core.toolSources())}\n\`\`\``;
    default:
      return `Unknown command \`${sub.replace(/[`<>&]/g, '')}\`.\n${COMMAND_HELP}`;
  }
}

/** Register `/switchboard`. */
export function registerCommand(app: App, ctx: SlackContext, command = '/switchboard'): void {
  app.command(command, async ({ ack, command: payload }) => {
    const cmd = payload as unknown as CommandPayload;
    const work = runCommand(ctx, cmd).catch((err: unknown) => {
      ctx.log.error({ err }, 'slack: command failed');
      return `:warning: That failed: ${(err as Error).message}`;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), ACK_BUDGET_MS);
    });
    const answer = await Promise.race([work, late]);
    clearTimeout(timer);
    if (answer !== null) {
      await ack(typeof answer === 'string' ? { response_type: 'ephemeral', text: answer } : { response_type: 'ephemeral', text: answer.text, blocks: answer.blocks as never });
      return;
    }
    await ack({ response_type: 'ephemeral', text: 'Working on it…' });
    const done = await work;
    const text = typeof done === 'string' ? done : done.text;
    await ctx.api.ephemeral(cmd.channel_id, cmd.user_id, text).catch((err) => ctx.log.warn({ err }, 'slack: command follow-up failed'));
  });
}
