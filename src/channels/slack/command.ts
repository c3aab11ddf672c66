/**
 * `/switchboard <command> [args]` mapped onto the core's command table. In a DM it acts on the DM
 * conversation; in a channel (slash commands carry no thread) on the most recently active thread.
 * The answer is ephemeral: the HTTP answer Slack waits for when ready within 2 s, else a follow-up.
 */
import type { App } from '@slack/bolt';
import {
  answerOrFailure,
  answerParts,
  COMMAND_WORKING,
  commandWords,
  FOREIGN_WORKSPACE,
  HELP_HINT,
  latestThread,
  whisper,
  settledWithin,
} from '../../kit/index.js';
import type { CommandAnswer, CommandPlace } from '../../kit/index.js';
import type { SlackContext } from './context.js';
import type { CardMessage } from './blocks.js';
import { slackEmitter } from './emitter.js';

/** Answer slower work with a follow-up instead of holding the 3 s acknowledgement. */
const ACK_BUDGET_MS = 2_000;

interface CommandPayload {
  user_id: string;
  channel_id: string;
  team_id?: string;
  text?: string;
}

/** An answer as the HTTP answer Slack waits for: shown to the caller alone (mrkdwn sections, buttons), kept by no one. */
function ephemeral(answer: CommandAnswer) {
  const messages = answerParts(slackEmitter, answer).map((p) => p.body as CardMessage);
  const blocks = messages.flatMap((m) => m.blocks).slice(0, 50);
  const text = messages.map((m) => m.text).join('\n');
  return { response_type: 'ephemeral' as const, text, ...(blocks.length ? { blocks: blocks as never } : {}) };
}

/** Run one command and return the answer. */
export async function runCommand(ctx: SlackContext, cmd: CommandPayload): Promise<CommandAnswer> {
  const { name, args } = commandWords(cmd.text);
  if (name !== 'help' && !ctx.teamAllowed(cmd.team_id)) return { markdown: FOREIGN_WORKSPACE.command };
  const dm = cmd.channel_id.startsWith('D');
  const chat = { channel: 'slack', chatKey: cmd.channel_id, threadKey: '' };
  const place: CommandPlace = {
    by: `slack:${cmd.user_id}`,
    chat,
    // A DM is one conversation; in a channel the command acts on its latest thread.
    ref: name === 'help' ? null : dm ? chat : await latestThread(ctx.core, 'slack', cmd.channel_id),
    shared: !dm,
    threadPerMessage: !dm,
    spell: (n) => `/switchboard ${n}`,
    hint: HELP_HINT.slack,
  };
  return ctx.core.command(name, args, place);
}

/** Register `/switchboard`. */
export function registerCommand(app: App, ctx: SlackContext): void {
  app.command('/switchboard', async ({ ack, command: payload }) => {
    const cmd = payload as unknown as CommandPayload;
    const work = answerOrFailure(runCommand(ctx, cmd), ctx.log);
    if (await settledWithin(work, ACK_BUDGET_MS)) return ack(ephemeral(await work));
    await ack({ response_type: 'ephemeral', text: COMMAND_WORKING });
    const done = await work;
    await whisper(
      ctx.surface,
      { slackChannel: cmd.channel_id, assistantThread: false },
      cmd.user_id,
      { type: 'text', markdown: done.markdown },
      ctx.log,
    );
  });
}
