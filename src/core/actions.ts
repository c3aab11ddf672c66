/**
 * The action router: a button tap, already decoded by its channel into a neutral {@link Action},
 * is authorised and executed here, the same for every channel. A refusal (a forged or outdated
 * button, a person who may not decide, a card decided already) changes no state and comes back
 * as a sentence for the person who tapped. Cards themselves are brought up to date by the
 * ledger when the core records the decision, so every process shows the same outcome; the tapped
 * message goes with the tap, so a copy of a card the ledger did not know is brought up to date too
 * (also after a refusal: a card decided already then shows its outcome).
 */
import type { Action } from '../contract/actions.js';
import type { CoreApi, TappedCard } from '../contract/core.js';
import { jobListCard } from '../delivery/cards.js';
import { questionContent } from '../delivery/content.js';
import { JOBS_UNAVAILABLE, PAIRING_ADMIN_ONLY, pairingRefusedText, refusalText, TAPPED } from '../delivery/notices.js';

/** What came of a tap. */
export interface ActionOutcome {
  /** False when refused; nothing changed then. */
  ok: boolean;
  /** A sentence for the person who tapped (a toast, an ephemeral message). */
  text: string;
  /** After a job action: the list as it stands now, to show in place of the tapped one. */
  jobs?: ReturnType<typeof jobListCard>;
}

/** Options of {@link runAction}. */
export interface ActionOptions {
  /** How a channel names a principal in a sentence (a Slack mention); default: the core's name directory. */
  nameOf?: (principal: string) => string | Promise<string>;
  /** The tapping person's display name as the platform gives it with the tap; remembered by the core. */
  byName?: string;
  /** The message the button was on (see {@link TappedCard}). */
  tapped?: TappedCard;
}

/** Authorise and execute one tap of `by` (`channel:userId`). */
export async function runAction(
  core: CoreApi,
  action: Action,
  by: string,
  options: ActionOptions = {},
): Promise<ActionOutcome> {
  await core.names.remember(by, options.byName);
  const nameOf = options.nameOf ?? ((p: string) => core.names.lookup(p));
  switch (action.kind) {
    case 'approval': {
      const tapped = options.tapped ? { tapped: options.tapped } : {};
      const result =
        action.choice === 'no_note'
          ? await core.finishDenial(action.id, by, null, options.tapped)
          : action.choice === 'deny'
            ? await core.decideApproval({ id: action.id, decision: 'deny', by, awaitNote: true, ...tapped })
            : await core.decideApproval({ id: action.id, decision: 'approve', scope: action.choice, by, ...tapped });
      if (result.ok) {
        const text =
          action.choice === 'deny'
            ? TAPPED.deniedAwaitingNote
            : action.choice === 'no_note'
              ? TAPPED.denied
              : TAPPED.approved;
        return { ok: true, text };
      }
      const decidedBy = result.approval?.decided_by;
      return { ok: false, text: refusalText(result.reason, 'approval', decidedBy ? await nameOf(decidedBy) : null) };
    }
    case 'question': {
      // The answer is looked up on the row by its position: a forged payload cannot put words in.
      const question = await core.getQuestion(action.id);
      const text = question ? questionContent(question).answers[action.index] : undefined;
      if (typeof text !== 'string') return { ok: false, text: refusalText('unknown', 'question') };
      const result = await core.answerQuestion({
        id: action.id,
        text,
        by,
        ...(options.tapped ? { tapped: options.tapped } : {}),
      });
      if (result.ok) return { ok: true, text: TAPPED.answered };
      const answeredBy = result.question?.answered_by;
      return { ok: false, text: refusalText(result.reason, 'question', answeredBy ? await nameOf(answeredBy) : null) };
    }
    case 'job': {
      if (!core.jobs) return { ok: false, text: JOBS_UNAVAILABLE };
      const result = await core.jobs.act(action.id, action.op, by);
      if (!result.ok) return { ok: false, text: result.message };
      return { ok: true, text: result.message, jobs: jobListCard(await core.jobs.list(by)) };
    }
    case 'pairing': {
      if (!(await core.isAdmin(by))) return { ok: false, text: PAIRING_ADMIN_ONLY };
      const result = await core.approvePairing(action.code, by);
      if (!result.ok) return { ok: false, text: pairingRefusedText(result.reason) };
      // The core settled the admin's request already (Core.approvePairing); the tapper is told.
      return { ok: true, text: TAPPED.paired };
    }
  }
}
