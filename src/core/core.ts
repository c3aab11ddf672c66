/**
 * The core: owns the database, the tools, the turn runner and the channels; implements
 * {@link CoreApi} for channels. Per conversation one turn runs at a time; conversations run
 * concurrently. Events reach channels through a per-conversation queue so a slow platform never
 * blocks a turn.
 */
import type { Logger } from 'pino';
import type { Channel } from '../channels/channel.js';
import { sqlitePathFromUrl, type Config } from '../config.js';
import { silentLogger } from '../log.js';
import { migrateToLatest, openSqlite, type Db } from '../store/db.js';
import * as convRepo from '../store/repos/conversations.js';
import { clearInbox, enqueueInbox, pendingInbox, conversationsWithInbox } from '../store/repos/log.js';
import {
  closeQuestion,
  conversationsWithDecidedWaits,
  decideApprovalRow,
  expiredApprovals,
  getApproval,
  getQuestion,
  insertRule,
  openApprovals,
  pendingQuestions,
  setApprovalCardRef,
  setQuestionCardRef,
} from '../store/repos/approvals.js';
import { activeTurn, conversationsWithActiveTurns, finishTurn, getToolCall, openToolCalls, transitionToolCall } from '../store/repos/turns.js';
import type { Approval, Conversation } from '../store/schema.js';
import { PathPolicy } from '../tools/path-policy.js';
import type { Plugin } from '../tools/plugin.js';
import type { AnyTool, PromptSection } from '../tools/types.js';
import { AccessControl } from './access.js';
import type {
  AnswerResult,
  ConversationRef,
  ConversationStatus,
  CoreApi,
  DecideResult,
  DecisionInput,
  InboundMessage,
  SubmitResult,
} from './api.js';
import type { EngineDeps } from './deps.js';
import type { CoreEvent } from './events.js';
import { LlmClient } from './llm.js';
import { createMetrics, type CoreMetrics } from './metrics.js';
import { questionTool } from './question-tool.js';
import { ToolRegistry } from './tool-registry.js';
import { TurnRunner } from './turn-runner.js';

/** Options of {@link Core.open}. */
export interface CoreOptions {
  config: Config;
  log?: Logger;
  /** An already-open database (tests); otherwise opened from `store.database_url`. */
  db?: Db;
  /** Tools besides the question tool (built-ins, extra tools). */
  tools?: AnyTool[];
  plugins?: Plugin[];
  promptSections?: PromptSection[];
  /** Called on close (e.g. reaping background processes). */
  onClose?: Array<() => Promise<void>>;
  /** How often expiries and cross-process decisions are checked; default 1000 ms. */
  sweepIntervalMs?: number;
  /** How long shutdown waits for running turns before aborting them; default 5000 ms. */
  shutdownGraceMs?: number;
}

/** Listener for every event of every conversation (tests, metrics, logging). */
export type EventListener = (conversationId: string, event: CoreEvent) => void;

function keyOf(ref: ConversationRef): convRepo.ConversationKey {
  return { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' };
}

/** The channel-neutral core. */
export class Core implements CoreApi {
  readonly registry = new ToolRegistry();
  readonly metrics: CoreMetrics = createMetrics();
  readonly paths: PathPolicy;
  readonly llm: LlmClient;
  readonly access: AccessControl;
  private readonly channels = new Map<string, Channel>();
  private readonly runner: TurnRunner;
  private readonly running = new Map<string, Promise<void>>();
  private readonly dirty = new Set<string>();
  private readonly deliveries = new Map<string, Promise<void>>();
  private readonly conversations = new Map<string, Conversation>();
  private readonly listeners = new Set<EventListener>();
  private sweeper: NodeJS.Timeout | null = null;
  private closing = false;
  private closed = false;

  private constructor(
    readonly config: Config,
    readonly db: Db,
    readonly log: Logger,
    private readonly options: CoreOptions,
  ) {
    this.paths = new PathPolicy({
      root: config.workspace.root,
      extraReadRoots: config.workspace.extra_read_roots,
      extraWriteRoots: config.workspace.extra_write_roots,
      denyGlobs: config.workspace.deny_globs,
    });
    this.llm = new LlmClient(config, log.child({ part: 'llm' }));
    this.access = new AccessControl(db, config);
    this.registry.register(questionTool);
    for (const tool of options.tools ?? []) this.registry.register(tool);
    for (const plugin of options.plugins ?? []) for (const tool of plugin.tools(config)) this.registry.register({ ...tool, meta: { ...tool.meta, source: tool.meta.source ?? `plugin:${plugin.name}` } });
    const deps: EngineDeps = {
      db,
      config,
      log,
      llm: this.llm,
      registry: this.registry,
      paths: this.paths,
      metrics: this.metrics,
      promptSections: options.promptSections ?? [],
      emit: (id, event) => this.emit(id, event),
      channelFor: (conv) => this.channels.get(conv.channel),
      kick: (id) => this.kick(id),
      isClosing: () => this.closing,
    };
    this.runner = new TurnRunner(deps);
  }

  /** Open the database, apply migrations (a failure stops start-up) and build the core. */
  static async open(options: CoreOptions): Promise<Core> {
    const log = options.log ?? silentLogger();
    const db = options.db ?? openSqlite(sqlitePathFromUrl(options.config.store.database_url));
    await migrateToLatest(db);
    return new Core(options.config, db, log, options);
  }

  /** Serve conversations of this channel in this process. */
  addChannel(channel: Channel): void {
    this.channels.set(channel.name, channel);
  }

  /** Every registered channel. */
  listChannels(): Channel[] {
    return [...this.channels.values()];
  }

  /** Observe every event (returns an unsubscribe function). */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Start channels, then recover: re-emit pending approvals and questions, resume unfinished
   * turns and answer queued messages; then check expiries and outside decisions periodically.
   */
  async start(): Promise<void> {
    await this.registry.recordKnown(this.db);
    for (const channel of this.channels.values()) await channel.start(this);
    await this.recover();
    const interval = this.options.sweepIntervalMs ?? 1000;
    this.sweeper = setInterval(() => {
      this.sweep().catch((err) => this.log.error({ err }, 'sweep failed'));
    }, interval);
    this.sweeper.unref();
  }

  private async recover(): Promise<void> {
    const ids = new Set([...(await conversationsWithActiveTurns(this.db)), ...(await conversationsWithInbox(this.db))]);
    for (const id of ids) {
      const conv = await this.conversation(id);
      if (!conv || !this.channels.has(conv.channel)) continue;
      await this.replayPending(id);
      this.kick(id);
    }
  }

  /** Emit `approval_requested` / `question` again for everything still pending in a conversation. */
  async replayPending(conversationId: string): Promise<void> {
    for (const a of await openApprovals(this.db, conversationId)) {
      if (a.status !== 'pending') continue;
      this.emit(conversationId, {
        type: 'approval_requested',
        id: a.id,
        callId: a.tool_call_id,
        tool: a.tool_name,
        label: a.label,
        preview: a.preview,
        requester: a.requester,
        replay: true,
        cardRef: a.card_ref,
      });
    }
    for (const q of await pendingQuestions(this.db, conversationId)) {
      this.emit(conversationId, {
        type: 'question',
        id: q.id,
        question: q.question,
        suggestedAnswers: JSON.parse(q.suggested_answers) as string[],
        replay: true,
        cardRef: q.card_ref,
      });
    }
  }

  /** Expire overdue approvals; resume turns whose approvals another process decided. */
  async sweep(): Promise<void> {
    if (this.closing) return;
    for (const a of await expiredApprovals(this.db, Date.now())) await this.expire(a);
    for (const id of await conversationsWithDecidedWaits(this.db)) {
      const conv = await this.conversation(id);
      if (conv && this.channels.has(conv.channel)) this.kick(id);
    }
  }

  private async expire(a: Approval): Promise<void> {
    // A denial waiting for its note is still a denial when time runs out.
    const to = a.status === 'awaiting_note' ? 'rejected' : 'expired';
    if (!(await decideApprovalRow(this.db, a.id, [a.status], to, {}))) return;
    this.metrics.pendingApprovals.dec();
    this.emit(a.conversation_id, {
      type: 'approval_resolved',
      id: a.id,
      decision: to === 'rejected' ? 'denied' : 'expired',
      scope: null,
      by: a.decided_by,
      cardRef: a.card_ref,
      label: a.label,
    });
    this.kick(a.conversation_id);
  }

  /** Schedule a conversation's runner; a second kick while it runs makes it run once more. */
  kick(conversationId: string): void {
    if (this.closing) return;
    if (this.running.has(conversationId)) {
      this.dirty.add(conversationId);
      return;
    }
    const task = (async () => {
      do {
        this.dirty.delete(conversationId);
        await this.runner.run(conversationId);
      } while (this.dirty.has(conversationId) && !this.closing);
    })()
      .catch((err) => {
        this.log.error({ err, conversationId }, 'turn runner crashed');
        this.emit(conversationId, { type: 'error', message: `internal error: ${(err as Error).message}` });
      })
      .finally(() => this.running.delete(conversationId));
    this.running.set(conversationId, task);
  }

  /** Resolves when no conversation is running (tests, benchmarks, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
    await Promise.allSettled([...this.deliveries.values()]);
  }

  private async conversation(id: string): Promise<Conversation | undefined> {
    const cached = this.conversations.get(id);
    if (cached) return cached;
    const row = await convRepo.getConversation(this.db, id);
    if (row) this.conversations.set(id, row);
    return row;
  }

  /** Queue an event for the conversation's channel; listeners see it at once. */
  emit(conversationId: string, event: CoreEvent): void {
    for (const l of this.listeners) {
      try {
        l(conversationId, event);
      } catch (err) {
        this.log.warn({ err }, 'event listener failed');
      }
    }
    const previous = this.deliveries.get(conversationId) ?? Promise.resolve();
    const next = previous
      .then(async () => {
        const conv = await this.conversation(conversationId);
        const channel = conv && this.channels.get(conv.channel);
        if (conv && channel) await channel.deliver(conv, event);
      })
      .catch((err) => this.log.warn({ err, conversationId, event: event.type }, 'channel delivery failed'));
    this.deliveries.set(conversationId, next);
    void next.finally(() => {
      if (this.deliveries.get(conversationId) === next) this.deliveries.delete(conversationId);
    });
  }

  // ---- CoreApi -----------------------------------------------------------------------------

  async submit(message: InboundMessage): Promise<SubmitResult> {
    const principal = `${message.channel}:${message.userId}`;
    if (message.dedupKey && !(await convRepo.markInboundSeen(this.db, message.dedupKey))) return { status: 'duplicate' };
    if (!(await this.access.isAllowed(message.channel, message.userId))) {
      const p = await this.access.requestPairing(message.channel, message.userId, message.userName ?? message.userId, message.chatKey);
      this.log.info({ channel: message.channel, userId: message.userId, isNew: p.isNew }, 'unknown user asked to pair');
      return { status: 'pairing_required', code: p.code, expiresAt: p.expiresAt, isNew: p.isNew };
    }
    const limited = this.access.rateLimit(principal);
    if (!limited.ok) return { status: 'rate_limited', notify: limited.notify };
    const conv = await convRepo.ensureConversation(this.db, keyOf(message), principal);
    this.conversations.set(conv.id, conv);

    const waitingNote = (await openApprovals(this.db, conv.id)).find((a) => a.status === 'awaiting_note' && a.decided_by === principal);
    if (waitingNote) {
      const r = await this.finishDenial(waitingNote.id, principal, message.text);
      if (r.ok) return { status: 'note_recorded', conversationId: conv.id, approvalId: waitingNote.id };
    }
    const question = (await pendingQuestions(this.db, conv.id)).at(-1);
    if (question) {
      const r = await this.answerQuestion({ id: question.id, text: message.text, by: principal });
      if (r.ok) return { status: 'answered_question', conversationId: conv.id, questionId: question.id };
    }
    await enqueueInbox(this.db, { conversationId: conv.id, authorId: principal, text: message.text, attachments: message.attachments });
    this.kick(conv.id);
    return { status: 'queued', conversationId: conv.id };
  }

  /** The requester of the turn and admins may decide; nobody else. */
  private mayDecide(approval: Approval, by: string): boolean {
    return by === approval.requester || this.access.isAdmin(by);
  }

  async decideApproval(input: DecisionInput): Promise<DecideResult> {
    const a = await getApproval(this.db, input.id);
    if (!a) return { ok: false, reason: 'unknown' };
    if (!this.mayDecide(a, input.by)) return { ok: false, reason: 'not_allowed', approval: a };
    if (a.status === 'expired') return { ok: false, reason: 'expired', approval: a };
    if (a.status === 'pending' && a.expires_at !== null && a.expires_at <= Date.now()) {
      await this.expire(a);
      return { ok: false, reason: 'expired', approval: a };
    }
    if (a.status !== 'pending' && a.status !== 'awaiting_note') return { ok: false, reason: 'already_decided', approval: a };

    if (input.decision === 'approve') {
      const scope = input.scope ?? 'once';
      if (!(await decideApprovalRow(this.db, a.id, ['pending', 'awaiting_note'], 'approved', { scope, decided_by: input.by }))) {
        return { ok: false, reason: 'already_decided', approval: a };
      }
      if (scope !== 'once') {
        await insertRule(this.db, {
          tool_glob: a.tool_name,
          path_glob: null,
          action: 'allow',
          priority: 0,
          conversation_id: scope === 'session' ? a.conversation_id : null,
          created_by: input.by,
        });
      }
      return this.decided(a, 'approved', scope, input.by, null);
    }
    if (input.awaitNote && (input.note === undefined || input.note === null)) {
      if (!(await decideApprovalRow(this.db, a.id, ['pending'], 'awaiting_note', { decided_by: input.by }))) {
        return { ok: false, reason: 'already_decided', approval: a };
      }
      const updated = (await getApproval(this.db, a.id)) as Approval;
      this.emit(a.conversation_id, {
        type: 'approval_resolved',
        id: a.id,
        decision: 'awaiting_note',
        scope: null,
        by: input.by,
        cardRef: updated.card_ref,
        label: a.label,
      });
      return { ok: true, approval: updated };
    }
    return this.finishDenial(a.id, input.by, input.note ?? null);
  }

  async finishDenial(id: string, by: string, note: string | null): Promise<DecideResult> {
    const a = await getApproval(this.db, id);
    if (!a) return { ok: false, reason: 'unknown' };
    if (!this.mayDecide(a, by)) return { ok: false, reason: 'not_allowed', approval: a };
    if (a.status === 'expired') return { ok: false, reason: 'expired', approval: a };
    const trimmed = note?.trim() ? note.trim().slice(0, 2000) : null;
    if (!(await decideApprovalRow(this.db, a.id, ['pending', 'awaiting_note'], 'rejected', { decided_by: by, note: trimmed }))) {
      return { ok: false, reason: 'already_decided', approval: a };
    }
    return this.decided(a, 'denied', null, by, trimmed);
  }

  private async decided(
    a: Approval,
    decision: 'approved' | 'denied',
    scope: 'once' | 'session' | 'always' | null,
    by: string,
    note: string | null,
  ): Promise<DecideResult> {
    this.metrics.pendingApprovals.dec();
    const updated = (await getApproval(this.db, a.id)) as Approval;
    this.emit(a.conversation_id, {
      type: 'approval_resolved',
      id: a.id,
      decision,
      scope,
      by,
      note,
      cardRef: updated.card_ref,
      label: a.label,
    });
    this.kick(a.conversation_id);
    return { ok: true, approval: updated };
  }

  async answerQuestion(input: { id: string; text: string; by: string }): Promise<AnswerResult> {
    const q = await getQuestion(this.db, input.id);
    if (!q) return { ok: false, reason: 'unknown' };
    const call = await getToolCall(this.db, q.tool_call_id);
    const turn = call ? await this.db.selectFrom('turns').select('requester_id').where('id', '=', call.turn_id).executeTakeFirst() : undefined;
    if (input.by !== turn?.requester_id && !this.access.isAdmin(input.by)) return { ok: false, reason: 'not_allowed', question: q };
    if (q.status !== 'pending') return { ok: false, reason: 'already_decided', question: q };
    const answer = input.text.trim().slice(0, 4000);
    if (!(await closeQuestion(this.db, q.id, 'answered', answer, input.by))) return { ok: false, reason: 'already_decided', question: q };
    await transitionToolCall(this.db, q.tool_call_id, ['running', 'pending'], 'done', {
      result: `The user answered: ${answer}`,
      summary: answer.slice(0, 100),
      finished_at: Date.now(),
    });
    this.emit(q.conversation_id, { type: 'question_resolved', id: q.id, status: 'answered', answer, by: input.by, cardRef: q.card_ref });
    this.emit(q.conversation_id, { type: 'tool_finished', callId: q.tool_call_id, name: 'ask_user_clarification', status: 'done', summary: answer.slice(0, 100) });
    this.kick(q.conversation_id);
    const updated = await getQuestion(this.db, q.id);
    return { ok: true, question: updated ?? q };
  }

  async stop(ref: ConversationRef, by: string): Promise<boolean> {
    const conv = await convRepo.findActiveConversation(this.db, keyOf(ref));
    if (!conv) return false;
    return this.stopConversation(conv.id, by);
  }

  /** Cancel a conversation's turn: abort the stream and tools, reject approvals, clear the queue. */
  async stopConversation(conversationId: string, by: string): Promise<boolean> {
    // Record the cancellation first, then abort: a tool that ends on the abort must find its call
    // already cancelled rather than race to record itself as done.
    const dropped = await clearInbox(this.db, conversationId);
    const turn = await activeTurn(this.db, conversationId);
    if (!turn) {
      this.runner.abort(conversationId);
      return dropped > 0;
    }
    await finishTurn(this.db, turn.id, 'cancelled', `stopped by ${by}`);
    for (const call of await openToolCalls(this.db, conversationId)) {
      if (await transitionToolCall(this.db, call.id, ['pending', 'awaiting_approval', 'running'], 'cancelled', {
        result: 'Cancelled by the user.',
        summary: 'cancelled',
        finished_at: Date.now(),
      })) {
        this.emit(conversationId, { type: 'tool_finished', callId: call.id, name: call.name, status: 'cancelled', summary: 'cancelled' });
      }
    }
    for (const a of await openApprovals(this.db, conversationId)) {
      if (await decideApprovalRow(this.db, a.id, ['pending', 'awaiting_note'], 'cancelled', { decided_by: by })) {
        this.metrics.pendingApprovals.dec();
        this.emit(conversationId, { type: 'approval_resolved', id: a.id, decision: 'cancelled', scope: null, by, cardRef: a.card_ref, label: a.label });
      }
    }
    for (const q of await pendingQuestions(this.db, conversationId)) {
      if (await closeQuestion(this.db, q.id, 'cancelled', null, by)) {
        this.emit(conversationId, { type: 'question_resolved', id: q.id, status: 'cancelled', answer: null, by, cardRef: q.card_ref });
      }
    }
    this.runner.abort(conversationId);
    this.metrics.turns.inc({ status: 'cancelled' });
    this.emit(conversationId, { type: 'turn_done', status: 'cancelled' });
    return true;
  }

  async newConversation(ref: ConversationRef, by: string): Promise<void> {
    const conv = await convRepo.findActiveConversation(this.db, keyOf(ref));
    if (!conv) return;
    await this.stopConversation(conv.id, by);
    await convRepo.archiveConversation(this.db, conv.id);
    this.conversations.delete(conv.id);
  }

  async status(ref: ConversationRef): Promise<ConversationStatus> {
    const conv = await convRepo.findActiveConversation(this.db, keyOf(ref));
    if (!conv) {
      return { conversationId: null, model: this.config.llm.model, turn: 'idle', pendingApprovals: 0, pendingQuestions: 0, queued: 0 };
    }
    const [turn, approvals, questions, inbox] = await Promise.all([
      activeTurn(this.db, conv.id),
      openApprovals(this.db, conv.id),
      pendingQuestions(this.db, conv.id),
      pendingInbox(this.db, conv.id),
    ]);
    return {
      conversationId: conv.id,
      model: conv.model ?? this.config.llm.model,
      turn: turn ? (turn.status === 'waiting' ? 'waiting' : 'running') : 'idle',
      pendingApprovals: approvals.length,
      pendingQuestions: questions.length,
      queued: inbox.length,
    };
  }

  async setModel(ref: ConversationRef, model: string | null): Promise<string> {
    const conv = await convRepo.ensureConversation(this.db, keyOf(ref), null);
    const value = model?.trim() ? model.trim() : null;
    await convRepo.setConversationModel(this.db, conv.id, value);
    this.conversations.delete(conv.id);
    return value ?? this.config.llm.model;
  }

  findConversation(ref: ConversationRef): Promise<Conversation | undefined> {
    return convRepo.findActiveConversation(this.db, keyOf(ref));
  }

  getConversation(id: string): Promise<Conversation | undefined> {
    return this.conversation(id);
  }

  async setCardRef(kind: 'approval' | 'question', id: string, ref: string): Promise<void> {
    if (kind === 'approval') await setApprovalCardRef(this.db, id, ref);
    else await setQuestionCardRef(this.db, id, ref);
  }

  markInboundSeen(key: string): Promise<boolean> {
    return convRepo.markInboundSeen(this.db, key);
  }

  isAllowed(channel: string, userId: string): Promise<boolean> {
    return this.access.isAllowed(channel, userId);
  }

  isAdmin(principal: string): boolean {
    return this.access.isAdmin(principal);
  }

  approvePairing(code: string, by: string): ReturnType<CoreApi['approvePairing']> {
    return this.access.approvePairing(code, by);
  }

  async notify(conversationId: string, text: string, source: string): Promise<void> {
    this.emit(conversationId, { type: 'notification', text, source });
  }

  getSetting(key: string): Promise<string | undefined> {
    return convRepo.getSetting(this.db, key);
  }

  setSetting(key: string, value: string): Promise<void> {
    return convRepo.setSetting(this.db, key, value);
  }

  transcribe(absPath: string): Promise<string> {
    return this.llm.transcribe(absPath);
  }

  /**
   * Stop taking work, give running turns `shutdownGraceMs` to reach a safe point, abort the rest
   * (their state stays in the database for recovery), stop channels and close the database.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const channel of this.channels.values()) {
      await channel.stop().catch((err) => this.log.warn({ err, channel: channel.name }, 'channel stop failed'));
    }
    const grace = this.options.shutdownGraceMs ?? 5000;
    const all = Promise.allSettled([...this.running.values()]);
    const timer = new Promise((resolve) => setTimeout(resolve, grace).unref());
    await Promise.race([all, timer]);
    this.runner.abortAll();
    await Promise.race([Promise.allSettled([...this.running.values()]), new Promise((r) => setTimeout(r, 2000).unref())]);
    await Promise.race([Promise.allSettled([...this.deliveries.values()]), new Promise((r) => setTimeout(r, 2000).unref())]);
    for (const hook of this.options.onClose ?? []) await hook().catch((err) => this.log.warn({ err }, 'close hook failed'));
    this.closed = true;
    await this.db.destroy();
  }
}
