/**
 * Button clicks on approval and question cards. The click is acknowledged first; the decision
 * goes to the core, which checks who may decide. A refusal (not allowed, unknown, already
 * decided, expired) is told to the clicker alone with an ephemeral message and changes nothing;
 * a decision makes the core emit `approval_resolved` / `question_resolved`, which updates the card.
 */
import type { App } from '@slack/bolt';
import type { RefusalReason } from '../../contract/core.js';
import { ACTION, principalMention } from './blocks.js';
import type { SlackContext } from './context.js';
import { jobOpOf } from './jobs.js';

/** The fields of a `block_actions` payload used here. */
interface BlockActionBody {
  user: { id: string; team_id?: string };
  team?: { id?: string } | null;
  channel?: { id?: string };
  container?: { channel_id?: string; thread_ts?: string; message_ts?: string };
  message?: { ts?: string; thread_ts?: string };
}

/** Text for a refused click. */
export function refusalText(kind: 'approval' | 'question', reason: RefusalReason, decidedBy?: string | null): string {
  const what = kind === 'approval' ? 'request' : 'question';
  switch (reason) {
    case 'not_allowed':
      return kind === 'approval'
        ? ':no_entry: Only the person who started this turn (or an admin) can decide this request.'
        : ':no_entry: Only the person who started this turn (or an admin) can answer this question.';
    case 'unknown':
      return `:grey_question: I can't find this ${what} any more.`;
    case 'already_decided':
      return `:information_source: This ${what} was already ${kind === 'approval' ? 'decided' : 'answered'}${decidedBy ? ` by ${principalMention(decidedBy)}` : ''}.`;
    case 'expired':
      return `:hourglass: This ${what} has expired.`;
  }
}

const APPROVE_SCOPES: Record<string, 'once' | 'session' | 'always'> = {
  [ACTION.approveOnce]: 'once',
  [ACTION.approveSession]: 'session',
  [ACTION.approveAlways]: 'always',
};

/** Register the button handlers (action ids start with `sb_`). */
export function registerInteractions(app: App, ctx: SlackContext): void {
  app.action(/^sb_/, async (args) => {
    await args.ack();
    try {
      await onClick(ctx, args.body as unknown as BlockActionBody, args.action as { action_id: string; value?: string });
    } catch (err) {
      ctx.log.error({ err }, 'slack: handling a button failed');
      const b = args.body as unknown as BlockActionBody;
      await ctx.api
        .ephemeral(b.channel?.id ?? b.container?.channel_id ?? '', b.user.id, ':warning: Something went wrong; please try again.', b.message?.thread_ts)
        .catch(() => undefined);
    }
  });
}

/** Decide an approval or answer a question for one click. */
async function onClick(ctx: SlackContext, b: BlockActionBody, a: { action_id: string; value?: string }): Promise<void> {
  const user = b.user.id;
  const channel = b.channel?.id ?? b.container?.channel_id ?? '';
  const threadTs = b.message?.thread_ts ?? b.container?.thread_ts;
  const tell = (text: string) =>
    ctx.api.ephemeral(channel, user, text, threadTs).catch((err) => ctx.log.warn({ err }, 'slack: ephemeral failed'));
  if (!ctx.teamAllowed(b.team?.id ?? b.user.team_id)) {
    await tell(':no_entry: This bot does not take decisions from this workspace.');
    return;
  }
  const by = `slack:${user}`;
  const value = a.value ?? '';
  const { core } = ctx;
  if (a.action_id in APPROVE_SCOPES || a.action_id === ACTION.deny || a.action_id === ACTION.denyNoNote) {
    const result =
      a.action_id === ACTION.denyNoNote
        ? await core.finishDenial(value, by, null)
        : a.action_id === ACTION.deny
          ? await core.decideApproval({ id: value, decision: 'deny', by, awaitNote: true })
          : await core.decideApproval({ id: value, decision: 'approve', scope: APPROVE_SCOPES[a.action_id], by });
    if (!result.ok) await tell(refusalText('approval', result.reason, result.approval?.decided_by));
    return;
  }
  const op = jobOpOf(a.action_id);
  if (op) {
    const result = core.jobs ? await core.jobs.act(value, op, by) : { ok: false, message: 'Scheduled jobs are not available here.' };
    await tell(result.ok ? `:white_check_mark: ${result.message}` : `:no_entry: ${result.message}`);
    return;
  }
  if (a.action_id.startsWith(ACTION.answer)) {
    let parsed: { id?: string; a?: string };
    try {
      parsed = JSON.parse(value) as { id?: string; a?: string };
    } catch {
      parsed = {};
    }
    if (!parsed.id || typeof parsed.a !== 'string') {
      await tell(refusalText('question', 'unknown'));
      return;
    }
    const result = await core.answerQuestion({ id: parsed.id, text: parsed.a, by });
    if (!result.ok) await tell(refusalText('question', result.reason, result.question?.answered_by));
    return;
  }
  ctx.log.warn({ actionId: a.action_id }, 'slack: unknown button');
}
