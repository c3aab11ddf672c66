/**
 * What the chat commands and buttons do to a conversation, by its platform address: stop its turn,
 * start afresh, show its status, set its model, list and revoke approval rules, and decide or answer
 * a card only when it belongs to the addressed conversation (terminal sessions).
 */
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { hotCache } from '../store/hot-cache.js';
import {
  allRules,
  chatsWithPendingDecisions,
  deleteRule,
  getApproval,
  getQuestion,
  getRule,
} from '../store/repos/approvals.js';
import * as convRepo from '../store/repos/conversations.js';
import { deliveryByKey } from '../store/repos/deliveries.js';
import { reportCardKey } from '../delivery/ledger.js';
import { clearInboxOf, pendingInbox, queuedAuthors } from '../store/repos/log.js';
import { SwitchboardError } from '../errors.js';
import { activeTurn } from '../store/repos/turns.js';
import type { ApprovalRule } from '../store/schema.js';
import type { AccessControl } from './access.js';
import type { ChatRef, FullChatRef } from '../contract/chat.js';
import type { AnswerInput, AnswerResult, ConversationStatus, DecideResult, DecisionInput } from '../contract/core.js';
import { openCards } from './chat-cards.js';
import { assertModelListed, endpointOf } from './model-check.js';
import type { Decisions } from './decisions.js';

/** Longest parent chain followed from a sub-agent up to its chat (trees are far shallower). */
const MAX_TREE_DEPTH = 32;

/** The conversation key of a platform address (no thread = the empty thread). */
export function keyOf(ref: ChatRef): FullChatRef {
  return { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' };
}

/** What the operations need from the rest of the core. */
export interface ConversationOpsDeps {
  db: Db;
  config: Config;
  access: AccessControl;
  decisions: Decisions;
  /** The endpoint's model list, to refuse a name it does not offer (as `doctor` does). */
  listModels?: () => Promise<string[] | null>;
}

/** Commands and decisions on the active conversation of a platform address. */
export class ConversationOps {
  constructor(private readonly deps: ConversationOpsDeps) {}

  /** Decide an approval; with `within`, refused as unknown unless it belongs to that conversation. */
  async decideApproval(input: DecisionInput): Promise<DecideResult> {
    if (input.within && !(await this.belongsTo('approval', input.id, input.within)))
      return { ok: false, reason: 'unknown' };
    return this.deps.decisions.decideApproval(input);
  }

  /** Answer a question; with `within`, refused as unknown unless it belongs to that conversation. */
  async answerQuestion(input: AnswerInput): Promise<AnswerResult> {
    if (input.within && !(await this.belongsTo('question', input.id, input.within)))
      return { ok: false, reason: 'unknown' };
    return this.deps.decisions.answerQuestion(input);
  }

  /**
   * Whether an approval or question is shown in the active conversation of `ref`, so that it may
   * be decided there (who may decide it is the decision's own check): its own, a sub-agent's
   * below it (their cards show in the chat at the top of the tree), or a card copied into it —
   * a job run's, whose own conversation (`job:<id>`) nobody reads (see `jobs/report-cards.ts`).
   */
  private async belongsTo(kind: 'approval' | 'question', id: string, ref: ChatRef): Promise<boolean> {
    const { db } = this.deps;
    const conv = await convRepo.findActiveConversation(db, keyOf(ref));
    if (!conv) return false;
    const row = kind === 'approval' ? await getApproval(db, id) : await getQuestion(db, id);
    if (!row) return false;
    if (row.conversation_id === conv.id) return true;
    // A sub-agent's card: its conversation descends from this one.
    let current = await hotCache(db).conversation(row.conversation_id);
    for (let depth = 0; current?.parent_id && depth < MAX_TREE_DEPTH; depth++) {
      if (current.parent_id === conv.id) return true;
      current = await hotCache(db).conversation(current.parent_id);
    }
    // A copy of the card kept in this conversation's ledger.
    return (await deliveryByKey(db, reportCardKey(id)))?.conversation_id === conv.id;
  }

  /**
   * Whoever may cancel everything in a conversation: admins and the local operator; anyone else
   * only what they started (their own turn, their own queued messages) — in groups too.
   */
  private async mayStopAnything(by: string): Promise<boolean> {
    return this.deps.access.isLocal(by.split(':')[0] ?? '') || (await this.deps.access.isAdmin(by));
  }

  /**
   * Cancel the active conversation's turn; true when something stopped. Someone who is not an
   * admin stops only what they started: their own turn (messages others queued behind it stay and
   * run next) or, while someone else's turn runs, just their own queued messages.
   * @throws SwitchboardError `not_allowed` when the running turn is someone else's (the text says
   *   whose, and how many of the caller's own queued messages were dropped)
   */
  async stop(ref: ChatRef, by: string): Promise<boolean> {
    const { db, decisions } = this.deps;
    const conv = await convRepo.findActiveConversation(db, keyOf(ref));
    if (!conv) return false;
    if (await this.mayStopAnything(by)) return decisions.stopConversation(conv.id, by);
    const turn = await activeTurn(db, conv.id);
    if (turn && turn.requester_id !== by) {
      const dropped = await clearInboxOf(db, conv.id, by);
      const own =
        dropped > 0 ? ` Your ${dropped === 1 ? 'queued message was' : `${dropped} queued messages were`} dropped.` : '';
      throw new SwitchboardError(
        'not_allowed',
        `Not stopped: the running turn was started by ${turn.requester_id}; only they or an admin can stop it.${own}`,
      );
    }
    return decisions.stopConversation(conv.id, by, { queueOf: by });
  }

  /**
   * Stop and archive the active conversation so the next message starts afresh. While someone
   * else's turn runs or their messages wait, only they or an admin may (it would cancel their work).
   * @throws SwitchboardError `not_allowed` naming whose work is in the way
   */
  async newConversation(ref: ChatRef, by: string): Promise<void> {
    const { db, decisions } = this.deps;
    const conv = await convRepo.findActiveConversation(db, keyOf(ref));
    if (!conv) return;
    if (!(await this.mayStopAnything(by))) {
      const turn = await activeTurn(db, conv.id);
      const owners = new Set([...(turn ? [turn.requester_id] : []), ...(await queuedAuthors(db, conv.id))]);
      owners.delete(by);
      if (owners.size > 0) {
        const whose = [...owners].join(', ');
        throw new SwitchboardError(
          'not_allowed',
          `Not started afresh: work of ${whose} is running or queued here; only they or an admin can start a new conversation now.`,
        );
      }
    }
    await decisions.stopConversation(conv.id, by);
    await convRepo.archiveConversation(db, conv.id);
    hotCache(db).forgetConversation(conv.id);
  }

  /** Model, turn state, open cards and queue length of the active conversation. */
  async status(ref: ChatRef): Promise<ConversationStatus> {
    const { db, config } = this.deps;
    const conv = await convRepo.findActiveConversation(db, keyOf(ref));
    // A terminal session shows only its own conversation; it says where else decisions wait.
    const elsewhere = this.deps.access.isLocal(ref.channel)
      ? { pendingElsewhere: await chatsWithPendingDecisions(db, ref.channel, conv?.id ?? null) }
      : {};
    if (!conv) {
      return {
        conversationId: null,
        model: config.llm.model,
        turn: 'idle',
        pendingApprovals: 0,
        pendingQuestions: 0,
        queued: 0,
        ...elsewhere,
      };
    }
    // A sub-agent's cards are in this chat too, so they count here.
    const [turn, { approvals, questions }, inbox] = await Promise.all([
      activeTurn(db, conv.id),
      openCards(db, conv.id),
      pendingInbox(db, conv.id),
    ]);
    return {
      conversationId: conv.id,
      model: conv.model ?? config.llm.model,
      turn: turn ? (turn.status === 'waiting' ? 'waiting' : 'running') : 'idle',
      pendingApprovals: approvals.length,
      pendingQuestions: questions.length,
      queued: inbox.length,
      ...elsewhere,
    };
  }

  /**
   * Set (or with null or blank, reset) the conversation's model; returns the model now in force.
   * @throws SwitchboardError `model_unknown` when the endpoint lists its models and not this one
   */
  async setModel(ref: ChatRef, model: string | null): Promise<string> {
    const { db, config, listModels } = this.deps;
    const value = model?.trim() ? model.trim() : null;
    if (value && listModels) await assertModelListed(listModels, value, endpointOf(config));
    const conv = await convRepo.ensureConversation(db, keyOf(ref), null);
    await convRepo.setConversationModel(db, conv.id, value);
    hotCache(db).forgetConversation(conv.id);
    return value ?? config.llm.model;
  }

  /** Admins and the local operator see and revoke every rule; others only their own grants. */
  private async seesAllRules(by: string): Promise<boolean> {
    return this.deps.access.isLocal(by.split(':')[0] ?? '') || (await this.deps.access.isAdmin(by));
  }

  /** The stored approval rules `by` may see. */
  async listRules(by: string): Promise<ApprovalRule[]> {
    return allRules(this.deps.db, (await this.seesAllRules(by)) ? undefined : by);
  }

  /** Delete a stored rule; its user, admins and the local operator may. */
  async revokeRule(id: number, by: string): Promise<{ ok: true; rule: ApprovalRule } | { ok: false; reason: string }> {
    const { db } = this.deps;
    const rule = await getRule(db, id);
    if (!rule || (rule.user_id !== by && !(await this.seesAllRules(by))))
      return { ok: false, reason: `no rule #${id} of yours` };
    if (!(await deleteRule(db, id))) return { ok: false, reason: `no rule #${id}` };
    return { ok: true, rule };
  }
}
