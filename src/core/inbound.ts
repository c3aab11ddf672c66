/**
 * A let-in sender's message on its way in: the flood limit, de-duplication, then one of: the note
 * a denial waits for, the answer to an open question, or a message for the turn, queued in the
 * inbox or (for an idle chat whose lease this process keeps) starting its turn in the receipt's
 * own transaction. Who may write, and their name, were decided before (`reception.ts`, the one
 * way in): this trusts its caller on both.
 */
import type { Db } from '../store/db.js';
import { hotCache } from '../store/hot-cache.js';
import * as convRepo from '../store/repos/conversations.js';
import { type IncomingMessage, receiveMessage, receiveStartingTurn } from '../store/repos/message-steps.js';
import { activeTurn } from '../store/repos/turns.js';
import type { Conversation } from '../store/schema.js';
import type { AccessControl } from './access.js';
import type { InboundMessage } from '../contract/chat.js';
import type { SubmitResult } from '../contract/core.js';
import { openCards } from './chat-cards.js';
import type { Decisions } from './decisions.js';
import type { LatencyClock } from './latency.js';
import type { ChannelRouter } from './routing.js';
import type { RunScheduler } from './scheduler.js';
import type { TurnRunner } from './turn-runner.js';

/** What taking a message in needs from the rest of the core. */
export interface InboundDeps {
  db: Db;
  access: AccessControl;
  latency: LatencyClock;
  router: ChannelRouter;
  scheduler: RunScheduler;
  runner: TurnRunner;
  decisions: Decisions;
}

/** Takes users' messages in for one core. */
export class Inbound {
  /** Conversations whose turn a message is starting on receipt right now (see {@link submit}). */
  private readonly startingOnReceipt = new Set<string>();

  constructor(private readonly deps: InboundDeps) {}

  /**
   * Submit the message of a sender who is let in (the caller decided that, and remembered their
   * name): the flood limit, de-duplication, then answer or queue.
   */
  async submit(message: InboundMessage): Promise<SubmitResult> {
    const { db, access, latency, scheduler } = this.deps;
    const principal = `${message.channel}:${message.userId}`;
    // The key is recorded with what the message leads to: with the inbox row in one commit when it
    // is queued (the common case), on its own before any other outcome.
    let keyRecorded = false;
    const seenFirst = async () => {
      if (!message.dedupKey || keyRecorded) return true;
      keyRecorded = true;
      return convRepo.markInboundSeen(db, message.dedupKey);
    };
    // The local operator owns the machine: a flood limit there only loses their own messages.
    if (!access.isLocal(message.channel)) {
      const limited = access.rateLimit(principal);
      if (!limited.ok && !(await seenFirst())) return { status: 'duplicate' };
      if (!limited.ok) return { status: 'rate_limited', notify: limited.notify, retryAfterMs: limited.retryAfterMs };
    }
    const key = { channel: message.channel, chatKey: message.chatKey, threadKey: message.threadKey ?? '' };
    const conv = await hotCache(db).activeConversation(key, principal);
    const incoming = {
      dedupKey: message.dedupKey,
      conversationId: conv.id,
      authorId: principal,
      text: message.text,
      attachments: message.attachments,
    };
    // An idle chat this process runs (the usual case) starts its turn in the receipt's own
    // transaction, which looks for an unfinished turn itself: one look-up, not two. Only when it
    // finds one does the message take the way below, as for a chat with a turn in progress.
    if (this.canStartOnReceipt(conv)) {
      const started = await this.startOnReceipt(conv, incoming);
      if (started) return started;
    }

    // Notes and answers only exist while a turn is unfinished: skip both look-ups otherwise.
    const unfinished = await activeTurn(db, conv.id);
    if (unfinished) {
      // Sub-agents' cards live in this chat too: a typed note or answer may be for one of them.
      const { approvals, questions } = await openCards(db, conv.id);
      const waitingNote = approvals.find((a) => a.status === 'awaiting_note' && a.decided_by === principal);
      if (waitingNote) {
        if (!(await seenFirst())) return { status: 'duplicate' };
        const r = await this.deps.decisions.finishDenial(waitingNote.id, principal, message.text);
        if (r.ok) return { status: 'note_recorded', conversationId: conv.id, approvalId: waitingNote.id };
      }
      const question = questions.at(-1);
      if (question) {
        if (!(await seenFirst())) return { status: 'duplicate' };
        const r = await this.deps.decisions.answerQuestion({ id: question.id, text: message.text, by: principal });
        if (r.ok) return { status: 'answered_question', conversationId: conv.id, questionId: question.id };
      }
    }
    if (!unfinished && this.canStartOnReceipt(conv)) {
      const started = await this.startOnReceipt(conv, incoming);
      if (started) return started;
    }
    if (!(await receiveMessage(db, { ...incoming, dedupKey: keyRecorded ? undefined : message.dedupKey })))
      return { status: 'duplicate' };
    latency.received(conv.id);
    scheduler.wake(conv.id);
    return { status: 'queued', conversationId: conv.id };
  }

  /**
   * Record the message and start its turn with it, in one transaction; undefined (nothing
   * written) when the conversation has an unfinished turn after all.
   */
  private async startOnReceipt(conv: Conversation, incoming: IncomingMessage): Promise<SubmitResult | undefined> {
    const { db, latency, scheduler } = this.deps;
    this.startingOnReceipt.add(conv.id);
    let started: Awaited<ReturnType<typeof receiveStartingTurn>>;
    try {
      started = await receiveStartingTurn(db, incoming);
    } finally {
      this.startingOnReceipt.delete(conv.id);
    }
    if (started === 'unfinished') return undefined;
    if (!started) return { status: 'duplicate' };
    latency.received(conv.id);
    // A run that began meanwhile (a sweep, a decision) may have found the turn already: then it
    // is only asked to run once more, and finds the turn again by itself.
    if (!scheduler.isRunning(conv.id)) this.deps.runner.startedOnReceipt(conv.id, started);
    scheduler.runHere(conv.id);
    return { status: 'queued', conversationId: conv.id };
  }

  /**
   * Whether a message for an idle conversation may start its turn in its receipt's transaction:
   * this process holds the conversation's lease (parked after its last turn, so no other process
   * can start a turn), runs nothing for it and is not starting one for it already, and serves its
   * channel with no further say (`runsHere`). Otherwise the message is queued in the inbox and the
   * runner starts the turn, as always.
   */
  private canStartOnReceipt(conv: Conversation): boolean {
    const { scheduler } = this.deps;
    if (scheduler.closing || !scheduler.parkedLeases?.holds(conv.id)) return false;
    if (scheduler.isRunning(conv.id) || this.startingOnReceipt.has(conv.id)) return false;
    const channel = this.deps.router.channelFor(conv);
    return channel !== undefined && !channel.runsHere;
  }
}
