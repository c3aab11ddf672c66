/**
 * Button taps: Telegram's `callback_data` decoded into a neutral action, which the core's action
 * router authorises and executes. A refusal becomes an alert and changes nothing. Cards are
 * brought up to date by the ledger when the core records the decision; what is left here is the
 * platform's answer to the tap (a toast) and replacing a tapped list or stale card in place (the
 * core itself settles an approved pairing request).
 */
import type { Context } from 'grammy';
import type { Part } from '../../contract/surface.js';
import { approvalContent } from '../../delivery/content.js';
import { parseMarkdown } from '../../delivery/render.js';
import { runAction } from '../../core/actions.js';
import { decodeCallback } from './callback-data.js';
import { displayName, type InboundDeps, principalOf, updateKey } from './context.js';
import { FOREIGN_BUTTON } from '../../delivery/notices.js';

/** Telegram's answer to a tap: a toast, or an alert for a refusal (never stored; it is no message). */
async function toast(ctx: Context, text: string, alert = false): Promise<void> {
  try {
    await ctx.answerCallbackQuery({ text, show_alert: alert });
  } catch {
    // A query older than ~15 minutes cannot be answered any more; the decision still stands.
  }
}

/** Replace the tapped message (a list, a stale card) with `parts[0]`, through the surface; best effort. */
async function replaceTapped(ctx: Context, deps: InboundDeps, parts: Part[]): Promise<void> {
  const msg = ctx.callbackQuery?.message;
  const part = parts[0];
  if (!msg || !part) return;
  await deps.surface
    .edit({ chatId: msg.chat.id }, String(msg.message_id), part)
    .catch((err) => deps.log.debug({ err }, 'telegram: tapped message not replaced'));
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
  if (!(await core.markInboundSeen(updateKey(ctx)))) return;
  const outcome = await runAction(core, action, by, { byName: displayName(ctx.from) });
  await toast(ctx, outcome.text, !outcome.ok);
  const a = outcome.decided;
  if (a && a.status !== 'pending' && a.status !== 'awaiting_note') {
    // A tap on a card decided elsewhere that still shows buttons: bring the card up to date.
    await replaceTapped(ctx, deps, deps.surface.emitter.approval(approvalContent(a)));
  }
  if (outcome.jobs)
    await replaceTapped(
      ctx,
      deps,
      deps.surface.emitter.markdown(parseMarkdown(outcome.jobs.markdown), undefined, outcome.jobs.buttons),
    );
}
