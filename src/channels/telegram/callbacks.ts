/**
 * Button taps: Telegram's `callback_data` decoded into a neutral action, which the core's action
 * router authorises and executes. A refusal changes nothing and is shown to the tapper alone: an
 * ephemeral message in a group, an alert elsewhere. Cards are brought up to date by the ledger
 * when the core records the decision, a tapped `/jobs` list when the core acts on the job; what is
 * left here is the platform's answer to the tap (the core itself settles an approved pairing
 * request). The tapped message goes with the tap: a card's copy the ledger did not know (a post
 * whose answer a crash lost) is brought to the outcome by the ledger.
 */
import type { Context } from 'grammy';
import { FOREIGN_BUTTON } from '../../kit/index.js';
import type { Tap } from '../../kit/index.js';
import { decodeCallback } from './callback-data.js';
import { escapeHtml } from './markdown.js';
import { addressOfContext, displayName, type InboundDeps, principalOf, refOf, updateKey } from './context.js';

/** Telegram's answer to a tap: a toast, an alert for a refusal, or nothing but the end of the spinner. */
async function toast(ctx: Context, text?: string, alert = false): Promise<void> {
  try {
    await ctx.answerCallbackQuery(text === undefined ? {} : { text, show_alert: alert });
  } catch {
    // A query older than ~15 minutes cannot be answered any more; the decision still stands.
  }
}

/**
 * A refused tap: in a group, an ephemeral message only the tapper sees, beside the card and tied
 * to the tap, which is answered silently; in a private chat, or where the server refuses
 * ephemeral messages or this one failed, the alert of before. Never a message of the chat.
 */
async function refuse(ctx: Context, deps: InboundDeps, text: string): Promise<void> {
  const address = addressOfContext(ctx);
  const from = ctx.from;
  const query = ctx.callbackQuery;
  if (address && from && query && deps.ephemeral) {
    try {
      if (await deps.ephemeral(address, from.id, escapeHtml(text), query.id)) return toast(ctx);
    } catch (err) {
      deps.log.warn(
        { err },
        'telegram: a refusal to one person failed as an ephemeral message; answering with an alert',
      );
    }
  }
  await toast(ctx, text, true);
}

/**
 * The message a tap came from, as the surface names it (`<chat id>:<message id>`): one the ledger
 * showed (every message with buttons is), so a tapped list is redrawn through it.
 */
function tappedOf(ctx: Context): Pick<Tap, 'tapped' | 'redraw'> {
  const msg = ctx.callbackQuery?.message;
  const address = addressOfContext(ctx);
  if (!msg || !address) return {};
  return { tapped: { chat: refOf(address), ref: `${msg.chat.id}:${msg.message_id}` }, redraw: true };
}

/** Handle one callback query. */
export async function handleCallback(ctx: Context, deps: InboundDeps): Promise<void> {
  const by = principalOf(ctx);
  const action = decodeCallback(ctx.callbackQuery?.data);
  if (!by || !action) {
    await refuse(ctx, deps, FOREIGN_BUTTON);
    return;
  }
  const core = deps.core();
  // A decision on a card is a conditional update: run twice, the second finds it decided. So such
  // a tap is marked seen once handled, and a crash in between replays it from the update journal
  // instead of losing it (the approval would wait for a tap already given). Other actions (run a
  // job now) must not run twice: they are marked first.
  const decides = action.kind === 'approval' || action.kind === 'question';
  if (!decides && !(await core.markInboundSeen(updateKey(ctx)))) return;
  const outcome = await core.act(action, by, { byName: displayName(ctx.from), ...tappedOf(ctx) });
  if (decides) await core.markInboundSeen(updateKey(ctx));
  if (outcome.ok) await toast(ctx, outcome.text);
  else await refuse(ctx, deps, outcome.text);
}
