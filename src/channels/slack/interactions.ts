/**
 * Button clicks, acknowledged first, decoded into a neutral action for the core's action router.
 * A refusal (not allowed, unknown, decided, expired, forged) is whispered to the clicker alone and
 * changes nothing; a decision updates its card through the ledger.
 */
import type { App } from '@slack/bolt';
import { FOREIGN_BUTTON, FOREIGN_WORKSPACE, TAP_FAILED, whisperPart } from '../../kit/index.js';
import { principalMention } from './blocks.js';
import { decodeAction } from './codec.js';
import type { SlackContext } from './context.js';
import type { SlackAddress } from './surface.js';

/** The fields of a `block_actions` payload used here. */
interface BlockActionBody {
  user: { id: string; team_id?: string };
  team?: { id?: string } | null;
  channel?: { id?: string };
  container?: { channel_id?: string; thread_ts?: string; message_ts?: string };
  message?: { ts?: string; thread_ts?: string };
}

/** Register the button handlers (action ids start with `sb_`). */
export function registerInteractions(app: App, ctx: SlackContext): void {
  app.action(/^sb_/, async (args) => {
    await args.ack();
    const b = args.body as unknown as BlockActionBody;
    const where: SlackAddress = {
      slackChannel: b.channel?.id ?? b.container?.channel_id ?? '',
      threadTs: b.message?.thread_ts ?? b.container?.thread_ts,
      assistantThread: false,
    };
    // The text names people as Slack mentions (`<@U…>`): sent as it is.
    const tell = (text: string) =>
      whisperPart(ctx.surface, where, b.user.id, { body: { text, blocks: [] }, text }, ctx.log);
    try {
      const text = await onClick(ctx, b, where, args.action as { action_id: string; value?: string });
      if (text) await tell(text);
    } catch (err) {
      ctx.log.error({ err }, 'slack: handling a button failed');
      await tell(TAP_FAILED);
    }
  });
}

/**
 * Run one click on a message in `where`; the sentence to tell the clicker, or null when the card
 * itself shows the outcome.
 */
async function onClick(
  ctx: SlackContext,
  b: BlockActionBody,
  where: SlackAddress,
  a: { action_id: string; value?: string },
): Promise<string | null> {
  if (!ctx.teamAllowed(b.team?.id ?? b.user.team_id)) return FOREIGN_WORKSPACE.action;
  const action = decodeAction(a.action_id, a.value);
  if (!action) {
    ctx.log.warn({ actionId: a.action_id }, 'slack: unknown button');
    return FOREIGN_BUTTON;
  }
  // The message the button was on (its `ts`, as the surface names it), so a copy of a card the
  // ledger did not know is brought to the outcome too.
  const ts = b.message?.ts ?? b.container?.message_ts;
  const chat = { channel: 'slack', chatKey: where.slackChannel, threadKey: where.threadTs ?? '' };
  const tapped = where.slackChannel && ts ? { tapped: { chat, ref: ts } } : {};
  const outcome = await ctx.core.act(action, `slack:${b.user.id}`, { nameOf: principalMention, ...tapped });
  // A decided card shows its outcome to everyone; a job action or a refusal is news for the clicker.
  return !outcome.ok || action.kind === 'job' || action.kind === 'pairing' ? outcome.text : null;
}
