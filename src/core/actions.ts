/**
 * The action router: a button tap, already decoded by its channel into a neutral {@link Action},
 * is authorised and executed here, the same for every channel. A refusal (a forged or outdated
 * button, a person who may not decide, a card decided already) changes no state and comes back
 * as a sentence for the person who tapped. Cards themselves are brought up to date by the
 * ledger when the core records the decision, so every process shows the same outcome; the tapped
 * message goes with the tap, so a copy of a card the ledger did not know is brought up to date too
 * (also after a refusal: a card decided already then shows its outcome).
 */
import type { Action, TypedDecision } from '../contract/actions.js';
import type { ActionOutcome } from '../contract/command.js';
import type { AnswerInput, DecisionInput, Tap } from '../contract/core.js';
import type { ActionCore } from '../contract/roles.js';
import { jobListCard } from '../delivery/cards.js';
import { questionContent } from '../delivery/content.js';
import { JOBS_UNAVAILABLE, PAIRING_ADMIN_ONLY, pairingRefusedText, refusalText, TAPPED } from '../delivery/notices.js';

export type { ActionOutcome };

/**
 * Authorise and execute one tap of `by` (`channel:userId`), or one decision typed at a terminal;
 * see `ChannelCore.act`.
 */
export async function runAction(
  core: ActionCore,
  action: Action | TypedDecision,
  by: string,
  tap: Tap = {},
): Promise<ActionOutcome> {
  await core.names.remember(by, tap.byName);
  const nameOf = tap.nameOf ?? ((p: string) => core.names.lookup(p));
  // Where the tap was (its message) and, for a terminal's typed decision, the chat it must belong to.
  const how = { ...(tap.tapped ? { tapped: tap.tapped } : {}), ...(tap.within ? { within: tap.within } : {}) };
  switch (action.kind) {
    case 'approval': {
      // One path for every choice: a denial without a note is a denial whose note is none.
      const { id, choice } = action;
      if (choice === 'no_note')
        return decide(core, { id, decision: 'deny', by, note: null, ...how }, TAPPED.denied, nameOf);
      if (choice === 'deny')
        return decide(core, { id, decision: 'deny', by, awaitNote: true, ...how }, TAPPED.deniedAwaitingNote, nameOf);
      return decide(core, { id, decision: 'approve', scope: choice, by, ...how }, TAPPED.approved, nameOf);
    }
    case 'denial':
      return decide(core, { id: action.id, decision: 'deny', by, note: action.note, ...how }, TAPPED.denied, nameOf);
    case 'question': {
      // The answer is looked up on the row by its position: a forged payload cannot put words in.
      const question = await core.question(action.id);
      const text = question ? questionContent(question).answers[action.index] : undefined;
      if (typeof text !== 'string') return { ok: false, reason: 'unknown', text: refusalText('unknown', 'question') };
      return answer(core, action.id, text, by, how, nameOf);
    }
    case 'answer':
      return answer(core, action.id, action.text, by, how, nameOf);
    case 'job': {
      if (!core.jobs) return { ok: false, text: JOBS_UNAVAILABLE };
      const result = await core.jobs.act(action.id, action.op, by);
      if (!result.ok) return { ok: false, text: result.message };
      // The tapped list shows the jobs as they stand now: redrawn through the ledger, so a restart
      // or a rate limit delays the edit but never loses or doubles it.
      if (tap.tapped && tap.redraw) {
        const { markdown, buttons } = jobListCard(await core.jobs.list(by));
        await core.redraw(tap.tapped, { type: 'text', markdown, ...(buttons.length ? { buttons } : {}) });
      }
      return { ok: true, text: result.message };
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

/** Decide an approval; `done` tells the person it was; a refusal names who decided it first. */
async function decide(
  core: ActionCore,
  input: DecisionInput,
  done: string,
  nameOf: (principal: string) => string | Promise<string>,
): Promise<ActionOutcome> {
  const result = await core.decide(input);
  if (result.ok) return { ok: true, text: done };
  const decidedBy = result.approval?.decided_by;
  const text = refusalText(result.reason, 'approval', decidedBy ? await nameOf(decidedBy) : null);
  return { ok: false, reason: result.reason, text };
}

/** Answer question `id` with `text` as `by`; a refusal names who answered it first. */
async function answer(
  core: ActionCore,
  id: string,
  text: string,
  by: string,
  how: Pick<AnswerInput, 'tapped' | 'within'>,
  nameOf: (principal: string) => string | Promise<string>,
): Promise<ActionOutcome> {
  const result = await core.answer({ id, text, by, ...how });
  if (result.ok) return { ok: true, text: TAPPED.answered };
  const answeredBy = result.question?.answered_by;
  const refusal = refusalText(result.reason, 'question', answeredBy ? await nameOf(answeredBy) : null);
  return { ok: false, reason: result.reason, text: refusal };
}
