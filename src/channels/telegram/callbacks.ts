/**
 * Button taps. The callback data names the database row, so taps work after a restart. The core
 * decides who may tap; a refusal becomes an alert and changes nothing. The card itself is edited
 * when the core emits the resolution event (so every process renders the same outcome).
 */
import { type Context, InlineKeyboard } from 'grammy';
import { questionContent } from '../../delivery/content.js';
import type { Approval } from '../../store/schema.js';
import { decodeCallback, encodeCallback } from './callback-data.js';
import { refusalText, resolvedApprovalHtml } from './cards.js';
import { type InboundDeps, principalOf, updateKey } from './context.js';
import { jobsMessageFor } from './jobs.js';
import { escapeHtml } from './markdown.js';

async function answer(ctx: Context, text: string, alert = false): Promise<void> {
  try {
    await ctx.answerCallbackQuery({ text, show_alert: alert });
  } catch {
    // A query older than ~15 minutes cannot be answered any more; the decision still stands.
  }
}

/** When a tap meets an already decided card that still shows buttons, bring the card up to date. */
async function refreshDecidedCard(ctx: Context, deps: InboundDeps, approval: Approval | undefined): Promise<void> {
  const msg = ctx.callbackQuery?.message;
  if (!approval || !msg || approval.status === 'pending' || approval.status === 'awaiting_note') return;
  const decision = approval.status === 'rejected' ? 'denied' : approval.status;
  const html = resolvedApprovalHtml(approval.label, decision, approval.scope, deps.names.nameOf(approval.decided_by), approval.note);
  const target = { chatId: msg.chat.id };
  await deps.outbox.serial(target, () => deps.outbox.editHtml(target, msg.message_id, html, null)).catch(() => undefined);
}

/** Handle one callback query. */
export async function handleCallback(ctx: Context, deps: InboundDeps): Promise<void> {
  const by = principalOf(ctx);
  const action = decodeCallback(ctx.callbackQuery?.data);
  if (!by || !action) {
    await answer(ctx, 'This button is not mine or is outdated.', true);
    return;
  }
  const core = deps.core();
  if (!(await core.markInboundSeen(updateKey(ctx)))) return;
  if (action.kind === 'approval') {
    const result =
      action.choice === 'no_note'
        ? await core.finishDenial(action.id, by, null)
        : action.choice === 'deny'
          ? await core.decideApproval({ id: action.id, decision: 'deny', by, awaitNote: true })
          : await core.decideApproval({ id: action.id, decision: 'approve', scope: action.choice, by });
    if (result.ok) {
      const done = action.choice === 'deny' ? 'Denied. Send a note, or tap “No note”.' : action.choice === 'no_note' ? 'Denied.' : 'Approved.';
      await answer(ctx, done);
      return;
    }
    await answer(ctx, refusalText(result.reason), true);
    if (result.reason === 'already_decided' || result.reason === 'expired') await refreshDecidedCard(ctx, deps, result.approval);
    return;
  }
  if (action.kind === 'question') {
    const question = await core.getQuestion(action.id);
    const text = question ? questionContent(question).answers[action.index] : undefined;
    if (typeof text !== 'string') {
      await answer(ctx, refusalText('unknown'), true);
      return;
    }
    const result = await core.answerQuestion({ id: action.id, text, by });
    await answer(ctx, result.ok ? 'Answered.' : refusalText(result.reason), !result.ok);
    return;
  }
  if (action.kind === 'job') {
    const result = core.jobs ? await core.jobs.act(action.id, action.op, by) : { ok: false, message: 'Scheduled jobs are not available here.' };
    await answer(ctx, result.message, !result.ok);
    const msg = ctx.callbackQuery?.message;
    if (result.ok && msg) {
      // Show the list as it is now (state, next run) in place of the tapped one.
      const { html, keyboard } = await jobsMessageFor(core.jobs, by);
      const target = { chatId: msg.chat.id };
      await deps.outbox.serial(target, () => deps.outbox.editHtml(target, msg.message_id, html, keyboard ?? null)).catch(() => undefined);
    }
    return;
  }
  // Pairing approval from an admin's DM.
  if (!core.isAdmin(by)) {
    await answer(ctx, refusalText('not_allowed'), true);
    return;
  }
  const result = await core.approvePairing(action.code, by);
  if (!result.ok) {
    await answer(ctx, `Cannot pair: ${result.reason}`, true);
    return;
  }
  await answer(ctx, 'Paired.');
  const msg = ctx.callbackQuery?.message;
  if (msg) {
    const target = { chatId: msg.chat.id };
    const html = `✅ Paired ${escapeHtml(result.channel)} user <code>${escapeHtml(result.userId)}</code> (by ${escapeHtml(deps.names.nameOf(by))}).`;
    await deps.outbox.serial(target, () => deps.outbox.editHtml(target, msg.message_id, html, null)).catch(() => undefined);
  }
  if (result.channel === 'telegram') {
    const userChat = { chatId: Number(result.userId) };
    await deps.outbox
      .serial(userChat, () => deps.outbox.sendHtml(userChat, '✅ You have been let in. Write to me any time.'))
      .catch((err) => deps.log.info({ err }, 'telegram: could not tell the paired user'));
  }
}

/** Keyboard of the admin pairing DM. */
export function pairingKeyboard(code: string): InlineKeyboard {
  return new InlineKeyboard().text(`✅ Approve ${code}`, encodeCallback({ kind: 'pairing', code }));
}
