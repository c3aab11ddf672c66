/**
 * Button taps: Telegram's `callback_data` decoded into a neutral action, which the core's action
 * router authorises and executes. A refusal becomes an alert and changes nothing. Cards are
 * brought up to date by the ledger when the core records the decision; what is left here is the
 * platform's answer to the tap (a toast) and replacing a tapped list in place (the core itself
 * settles an approved pairing request). The tapped message goes with the tap: a card's copy the
 * ledger did not know (a post whose answer a crash lost) is brought to the outcome by the ledger.
 */
import type { Context } from 'grammy';
import type { TappedCard } from '../../contract/core.js';
import type { Part } from '../../contract/surface.js';
import { parseMarkdown } from '../../delivery/render.js';
import { runAction } from '../../core/actions.js';
import { decodeCallback } from './callback-data.js';
import { addressOfContext, displayName, type InboundDeps, principalOf, refOf, updateKey } from './context.js';
import { FOREIGN_BUTTON } from '../../delivery/notices.js';

/** Telegram's answer to a tap: a toast, or an alert for a refusal (never stored; it is no message). */
async function toast(ctx: Context, text: string, alert = false): Promise<void> {
  try {
    await ctx.answerCallbackQuery({ text, show_alert: alert });
  } catch {
    // A query older than ~15 minutes cannot be answered any more; the decision still stands.
  }
}

/** Replace the tapped message (a list) with `parts[0]`, through the surface; best effort. */
async function replaceTapped(ctx: Context, deps: InboundDeps, parts: Part[]): Promise<void> {
  const msg = ctx.callbackQuery?.message;
  const part = parts[0];
  if (!msg || !part) return;
  await deps.surface
    .edit({ chatId: msg.chat.id }, String(msg.message_id), part)
    .catch((err) => deps.log.debug({ err }, 'telegram: tapped message not replaced'));
}

/** The message a tap came from, as the surface names it (`<chat id>:<message id>`). */
function tappedOf(ctx: Context): { tapped?: TappedCard } {
  const msg = ctx.callbackQuery?.message;
  const address = addressOfContext(ctx);
  if (!msg || !address) return {};
  return { tapped: { chat: refOf(address), ref: `${msg.chat.id}:${msg.message_id}` } };
}

/** Handle one callback query. */
export async function handleCallback(ctx: Context, deps: InboundDeps): Promise<void> {
  const by = principalOf(ctx);
  const action = decodeCallback(ctx.callbackQuery?.data);
  if (!by || !action) {
    await toast(ctx, FOREIGN_BUTTON, true);
    return;
  }
  const core = deps.core();
  // A decision on a card is a conditional update: run twice, the second finds it decided. So such
  // a tap is marked seen once handled, and a crash in between replays it from the update journal
  // instead of losing it (the approval would wait for a tap already given). Other actions (run a
  // job now) must not run twice: they are marked first.
  const decides = action.kind === 'approval' || action.kind === 'question';
  if (!decides && !(await core.markInboundSeen(updateKey(ctx)))) return;
  const outcome = await runAction(core, action, by, { byName: displayName(ctx.from), ...tappedOf(ctx) });
  if (decides) await core.markInboundSeen(updateKey(ctx));
  await toast(ctx, outcome.text, !outcome.ok);
  if (outcome.jobs)
    await replaceTapped(
      ctx,
      deps,
      deps.surface.emitter.markdown(parseMarkdown(outcome.jobs.markdown), undefined, outcome.jobs.buttons),
    );
}
