/**
 * Decisions people make on a waiting turn: approve or deny a tool call (with a note), answer a
 * question, stop the turn; and approvals that run out of time. Each is a conditional update of a
 * row, so a second tap, a second process or a late decision cannot apply twice. Only the
 * requester of the turn and admins may decide.
 */
import { clearInbox, clearInboxOf } from '../store/repos/log.js';
import {
  closeQuestion,
  decideApprovalRow,
  getApproval,
  getQuestion,
  insertRule,
  openApprovals,
  pendingQuestions,
} from '../store/repos/approvals.js';
import {
  activeTurn,
  finishTurn,
  getToolCall,
  getTurn,
  openToolCalls,
  transitionToolCall,
} from '../store/repos/turns.js';
import type { Approval, Question } from '../store/schema.js';
import type { Db } from '../store/db.js';
import { recordTappedCard, showApproval, showQuestion, updateToolLine } from '../delivery/ledger.js';
import { approvalContent, approvalState, questionContent } from '../delivery/content.js';
import type { ApprovalState } from '../contract/content.js';
import type { CoreEvent } from '../contract/events.js';
import { childOfCall, childrenOf, moveAgentState } from '../store/repos/subagents.js';
import { PLAN_TOOL, planAnswerText } from './subagents.js';
import type { AccessControl } from './access.js';
import type { AnswerResult, DecideResult, DecisionInput, TappedCard } from '../contract/core.js';
import type { EngineDeps } from './deps.js';
import { literalGlob } from './rules.js';

/** What an approval card says after a decision. */
interface Resolution {
  state: Exclude<ApprovalState, 'pending'>;
  scope: 'once' | 'session' | 'always' | null;
  by: string | null;
  note?: string | null;
}

/** The one builder of `approval_resolved`. */
function resolvedEvent(a: Approval, r: Resolution): Extract<CoreEvent, { type: 'approval_resolved' }> {
  return {
    type: 'approval_resolved',
    id: a.id,
    decision: r.state,
    scope: r.scope,
    by: r.by,
    note: r.note ?? null,
    label: a.label,
  };
}

/** The one builder of `question_resolved`. */
function questionResolvedEvent(
  q: Question,
  status: 'answered' | 'superseded' | 'cancelled',
  answer: string | null,
  by: string | null,
): CoreEvent {
  return { type: 'question_resolved', id: q.id, status, answer, by };
}

/** Applies decisions to the database and wakes the conversation. */
export class Decisions {
  constructor(
    private readonly deps: EngineDeps,
    private readonly access: AccessControl,
    private readonly abort: (conversationId: string) => void,
  ) {}

  /** The requester of the turn and admins (as they are now) may decide; nobody else. */
  private async mayDecide(approval: Approval, by: string): Promise<boolean> {
    return by === approval.requester || (await this.access.isAdmin(by));
  }

  async decideApproval(input: DecisionInput): Promise<DecideResult> {
    const result = await this.decideApprovalRow(input);
    if (!result.ok && input.tapped) await this.tappedUndecided(input.id, input.tapped);
    return result;
  }

  /**
   * A tap that decided nothing (decided already, expired, not theirs): the tapped message is made
   * known to the ledger all the same, so it shows the card as it stands now and from then on.
   */
  private async tappedUndecided(id: string, tapped: TappedCard): Promise<void> {
    const a = await getApproval(this.deps.db, id);
    if (a) this.redrawTapped(await recordTappedCard(this.deps.db, tapped, approvalContent(a)));
  }

  /**
   * A tapped message made known without a decision is redrawn by the presenter like every card's
   * message, now: no event follows a refused tap to start its delivery.
   */
  private redrawTapped(conversationId: string | undefined): void {
    if (conversationId) this.deps.deliver(conversationId);
  }

  private async decideApprovalRow(input: DecisionInput): Promise<DecideResult> {
    const a = await getApproval(this.deps.db, input.id);
    if (!a) return { ok: false, reason: 'unknown' };
    if (!(await this.mayDecide(a, input.by))) return { ok: false, reason: 'not_allowed', approval: a };
    if (a.status === 'expired') return { ok: false, reason: 'expired', approval: a };
    if (a.status === 'pending' && a.expires_at !== null && a.expires_at <= Date.now()) {
      await this.expire(a);
      return { ok: false, reason: 'expired', approval: a };
    }
    if (a.status !== 'pending' && a.status !== 'awaiting_note')
      return { ok: false, reason: 'already_decided', approval: a };

    if (input.decision === 'approve') {
      const scope = input.scope ?? 'once';
      const resolution: Resolution = { state: 'approved', scope, by: input.by };
      const won = await this.deps.db.transaction().execute(async (trx) => {
        if (
          !(await decideApprovalRow(trx, a.id, ['pending', 'awaiting_note'], 'approved', {
            scope,
            decided_by: input.by,
          }))
        )
          return false;
        if (scope === 'session') {
          // This conversation, this tool: any path for a file tool, else only the exact arguments
          // the card showed (a shell command, an MCP input).
          await insertRule(trx, {
            tool_glob: a.tool_name,
            path_glob: null,
            args_exact: a.target_path === null ? a.grant_args : null,
            grant_version: a.grant_version,
            action: 'allow',
            priority: 0,
            conversation_id: a.conversation_id,
            created_by: input.by,
          });
        } else if (scope === 'always') {
          // Everywhere, but only this tool, the path that was asked (file tools) or else the exact
          // arguments the card showed, and the requester: what the card's "always" says.
          await insertRule(trx, {
            tool_glob: a.tool_name,
            path_glob: a.target_path === null ? null : literalGlob(a.target_path),
            args_exact: a.target_path === null ? a.grant_args : null,
            // The key of the version the card was made with: the grant covers what that card named.
            grant_version: a.grant_version,
            action: 'allow',
            priority: 0,
            conversation_id: null,
            user_id: a.requester,
            created_by: input.by,
          });
        }
        await showApproval(trx, a, resolution);
        if (input.tapped) await recordTappedCard(trx, input.tapped, approvalContent(a, resolution));
        return true;
      });
      if (!won) return { ok: false, reason: 'already_decided', approval: a };
      return this.decided(a, resolution);
    }
    if (input.awaitNote && (input.note === undefined || input.note === null)) {
      const resolution: Resolution = { state: 'awaiting_note', scope: null, by: input.by };
      if (!(await this.apply(a, ['pending'], 'awaiting_note', { decided_by: input.by }, resolution, input.tapped))) {
        return { ok: false, reason: 'already_decided', approval: a };
      }
      const updated = (await getApproval(this.deps.db, a.id)) as Approval;
      this.deps.emit(a.conversation_id, resolvedEvent(a, resolution));
      return { ok: true, approval: updated };
    }
    return this.denial(a.id, input.by, input.note ?? null, input.tapped);
  }

  /**
   * Finish a denial that was waiting for a note (`note` null = no note): the same path as any
   * other decision ({@link decideApproval}), so a denial is checked and shown one way.
   */
  finishDenial(id: string, by: string, note: string | null, tapped?: TappedCard): Promise<DecideResult> {
    return this.decideApproval({ id, decision: 'deny', by, note, ...(tapped ? { tapped } : {}) });
  }

  private async denial(id: string, by: string, note: string | null, tapped?: TappedCard): Promise<DecideResult> {
    const a = await getApproval(this.deps.db, id);
    if (!a) return { ok: false, reason: 'unknown' };
    if (!(await this.mayDecide(a, by))) return { ok: false, reason: 'not_allowed', approval: a };
    if (a.status === 'expired') return { ok: false, reason: 'expired', approval: a };
    const trimmed = note?.trim() ? note.trim().slice(0, 2000) : null;
    const resolution: Resolution = { state: approvalState('rejected'), scope: null, by, note: trimmed };
    if (
      !(await this.apply(
        a,
        ['pending', 'awaiting_note'],
        'rejected',
        { decided_by: by, note: trimmed },
        resolution,
        tapped,
      ))
    ) {
      return { ok: false, reason: 'already_decided', approval: a };
    }
    return this.decided(a, resolution);
  }

  /**
   * Move an approval to `to` if it is still in `from`, and queue its card's update (and the tapped
   * message's, when the ledger did not know it) in the same transaction.
   */
  private apply(
    a: Approval,
    from: Approval['status'][],
    to: Approval['status'],
    fields: Parameters<typeof decideApprovalRow>[4],
    resolution: Resolution,
    tapped?: TappedCard,
    db: Db = this.deps.db,
  ): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      if (!(await decideApprovalRow(trx, a.id, from, to, fields))) return false;
      await showApproval(trx, a, resolution);
      if (tapped) await recordTappedCard(trx, tapped, approvalContent(a, resolution));
      return true;
    });
  }

  private async decided(a: Approval, resolution: Resolution): Promise<DecideResult> {
    this.deps.metrics.pendingApprovals.dec();
    const updated = (await getApproval(this.deps.db, a.id)) as Approval;
    this.deps.emit(a.conversation_id, resolvedEvent(a, resolution));
    this.deps.wake(a.conversation_id);
    return { ok: true, approval: updated };
  }

  async answerQuestion(input: { id: string; text: string; by: string; tapped?: TappedCard }): Promise<AnswerResult> {
    const result = await this.answerQuestionRow(input);
    if (!result.ok && input.tapped) {
      const q = await getQuestion(this.deps.db, input.id);
      if (q) this.redrawTapped(await recordTappedCard(this.deps.db, input.tapped, questionContent(q)));
    }
    return result;
  }

  private async answerQuestionRow(input: {
    id: string;
    text: string;
    by: string;
    tapped?: TappedCard;
  }): Promise<AnswerResult> {
    const q = await getQuestion(this.deps.db, input.id);
    if (!q) return { ok: false, reason: 'unknown' };
    const call = await getToolCall(this.deps.db, q.tool_call_id);
    const turn = call ? await getTurn(this.deps.db, call.turn_id) : undefined;
    if (input.by !== turn?.requester_id && !(await this.access.isAdmin(input.by)))
      return { ok: false, reason: 'not_allowed', question: q };
    if (q.status !== 'pending') return { ok: false, reason: 'already_decided', question: q };
    const answer = input.text.trim().slice(0, 4000);
    if (q.waiter) return this.answerWaited(q, answer, input.by, input.tapped);
    // A plan's review answers the `plan` call itself: accepted, rejected or annotated.
    const result =
      call?.name === PLAN_TOOL
        ? planAnswerText(answer, call.id, (await childOfCall(this.deps.db, call.id))?.agent_result ?? null)
        : `The user answered: ${answer}`;
    const won = await this.deps.db.transaction().execute(async (trx) => {
      if (!(await closeQuestion(trx, q.id, 'answered', answer, input.by))) return false;
      await transitionToolCall(trx, q.tool_call_id, ['running', 'pending'], 'done', {
        result,
        summary: answer.slice(0, 100),
        finished_at: Date.now(),
      });
      const shown = { state: 'answered' as const, answer, by: input.by };
      await showQuestion(trx, q, shown);
      if (input.tapped) await recordTappedCard(trx, input.tapped, questionContent(q, shown));
      return true;
    });
    if (!won) return { ok: false, reason: 'already_decided', question: q };
    this.deps.emit(q.conversation_id, questionResolvedEvent(q, 'answered', answer, input.by));
    this.deps.emit(q.conversation_id, {
      type: 'tool_finished',
      callId: q.tool_call_id,
      name: call?.name ?? 'ask_user_clarification',
      status: 'done',
      summary: answer.slice(0, 100),
    });
    this.deps.wake(q.conversation_id);
    const updated = await getQuestion(this.deps.db, q.id);
    return { ok: true, question: updated ?? q };
  }

  /** A running tool's question: the answer is for the tool that waits on the row, the call runs on. */
  private async answerWaited(q: Question, answer: string, by: string, tapped?: TappedCard): Promise<AnswerResult> {
    const won = await this.deps.db.transaction().execute(async (trx) => {
      if (!(await closeQuestion(trx, q.id, 'answered', answer, by))) return false;
      await showQuestion(trx, q, { state: 'answered', answer, by });
      if (tapped) await recordTappedCard(trx, tapped, questionContent(q, { state: 'answered', answer, by }));
      return true;
    });
    if (!won) return { ok: false, reason: 'already_decided', question: q };
    this.deps.emit(q.conversation_id, questionResolvedEvent(q, 'answered', answer, by));
    return { ok: true, question: (await getQuestion(this.deps.db, q.id)) ?? q };
  }

  /** Expire an overdue approval (a denial waiting for its note becomes a plain denial). */
  async expire(a: Approval): Promise<void> {
    // A denial waiting for its note is still a denial when time runs out.
    const to = a.status === 'awaiting_note' ? 'rejected' : 'expired';
    const resolution: Resolution = { state: approvalState(to), scope: null, by: a.decided_by };
    if (!(await this.apply(a, [a.status], to, {}, resolution))) return;
    this.deps.metrics.pendingApprovals.dec();
    this.deps.emit(a.conversation_id, resolvedEvent(a, resolution));
    this.deps.wake(a.conversation_id);
  }

  /**
   * Cancel a conversation's turn: abort the stream and tools, reject approvals, clear the queue
   * (with `queueOf`, only that author's queued messages: the others' then get their turn).
   */
  async stopConversation(conversationId: string, by: string, options: { queueOf?: string } = {}): Promise<boolean> {
    // Record the cancellation first, then abort: a tool that ends on the abort must find its call
    // already cancelled rather than race to record itself as done.
    const dropped =
      options.queueOf === undefined
        ? await clearInbox(this.deps.db, conversationId)
        : await clearInboxOf(this.deps.db, conversationId, options.queueOf);
    const turn = await activeTurn(this.deps.db, conversationId);
    if (!turn) {
      this.abort(conversationId);
      return dropped > 0;
    }
    await finishTurn(this.deps.db, turn.id, 'cancelled', `stopped by ${by}`);
    for (const call of await openToolCalls(this.deps.db, conversationId)) {
      const cancelled = await this.deps.db.transaction().execute(async (trx) => {
        const ok = await transitionToolCall(trx, call.id, ['pending', 'awaiting_approval', 'running'], 'cancelled', {
          result: 'Cancelled by the user.',
          summary: 'cancelled',
          finished_at: Date.now(),
        });
        // Only a line already shown is updated: a call that never started has none.
        if (ok) await updateToolLine(trx, call.id, call.name, 'cancelled', 'cancelled');
        return ok;
      });
      if (cancelled) {
        this.deps.emit(conversationId, {
          type: 'tool_finished',
          callId: call.id,
          name: call.name,
          status: 'cancelled',
          summary: 'cancelled',
        });
      }
    }
    for (const a of await openApprovals(this.deps.db, conversationId)) {
      const resolution: Resolution = { state: 'cancelled', scope: null, by };
      if (await this.apply(a, ['pending', 'awaiting_note'], 'cancelled', { decided_by: by }, resolution)) {
        this.deps.metrics.pendingApprovals.dec();
        this.deps.emit(conversationId, resolvedEvent(a, resolution));
      }
    }
    for (const q of await pendingQuestions(this.deps.db, conversationId)) {
      const closed = await this.deps.db.transaction().execute(async (trx) => {
        if (!(await closeQuestion(trx, q.id, 'cancelled', null, by))) return false;
        await showQuestion(trx, q, { state: 'cancelled', answer: null, by });
        return true;
      });
      if (closed) this.deps.emit(conversationId, questionResolvedEvent(q, 'cancelled', null, by));
    }
    this.abort(conversationId);
    this.deps.metrics.turns.inc({ status: 'cancelled' });
    this.deps.emit(conversationId, { type: 'turn_done', status: 'cancelled' });
    await this.stopChildren(conversationId, by);
    // Messages others queued behind the stopped turn are theirs: they run next.
    if (options.queueOf !== undefined) this.deps.wake(conversationId);
    return true;
  }

  /** `stop` reaches every descendant: running children are stopped, queued ones never start. */
  private async stopChildren(conversationId: string, by: string): Promise<void> {
    for (const child of await childrenOf(this.deps.db, conversationId)) {
      if (child.agent_state === 'finished') continue;
      await this.stopConversation(child.id, by);
      await moveAgentState(this.deps.db, child.id, ['queued', 'running'], 'finished', 'The sub-agent was cancelled.');
    }
  }
}
