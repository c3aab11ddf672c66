/**
 * The core: owns the database, the tools, the turn runner and the channels; implements
 * {@link CoreApi} for channels. Per conversation one turn runs at a time; conversations run
 * concurrently. Events reach channels through a per-conversation queue so a slow platform never
 * blocks a turn.
 */
import type { Logger } from 'pino';
import type { Channel } from '../contract/channel.js';
import { type Config, isPostgresUrl } from '../config.js';
import { silentLogger } from '../log.js';
import { migrateToLatest, openStore, type Db } from '../store/db.js';
import { hotCache } from '../store/hot-cache.js';
import * as convRepo from '../store/repos/conversations.js';
import { conversationsWithInbox, pendingInbox } from '../store/repos/log.js';
import { receiveMessage, receiveStartingTurn } from '../store/repos/message-steps.js';
import { indexPendingMessages } from '../store/repos/search-index.js';
import { pruneExpiredCodes } from '../store/repos/pairing.js';
import {
  allRules,
  chatsWithPendingDecisions,
  conversationsWithDecidedWaits,
  deleteRule,
  expiredApprovals,
  getRule,
  getApproval,
  getQuestion,
  openApprovals,
  pendingQuestions,
} from '../store/repos/approvals.js';
import { deliveryCounts } from '../store/repos/deliveries.js';
import { enqueueError, enqueueNotification, type NotificationInput } from '../delivery/ledger.js';
import { Presenter } from '../delivery/presenter.js';
import { activeTurn, conversationsNeedingRunner, conversationsWithActiveTurns } from '../store/repos/turns.js';
import { heldNames } from '../store/repos/leases.js';
import * as journalRepo from '../store/repos/inbound-journal.js';
import type { JournaledUpdate } from '../store/repos/inbound-journal.js';
import type { ApprovalRule, Conversation, Question } from '../store/schema.js';
import { PathPolicy } from '../tools/path-policy.js';
import type { Plugin } from '../tools/plugin.js';
import { type SourceStatus, StaticToolSource, type ToolSource } from '../tools/source.js';
import type { AnyTool, PromptSection } from '../tools/types.js';
import { activateTool, lazyGroupsSection } from './activate-tool.js';
import { planTool, presentChildEvent, taskTool } from './subagents.js';
import { openCards } from './chat-cards.js';
import { AccessControl, isLocalChannel } from './access.js';
import { welcomePaired } from './pairing-welcome.js';
import { alwaysScopeText } from './rules.js';
import type { ChatRef, InboundMessage } from '../contract/chat.js';
import type { AnswerInput, AnswerResult, ConversationStatus, CoreApi, DecideResult, DecisionInput, JobControls, SubmitResult } from '../contract/core.js';
import type { EngineDeps } from './deps.js';
import type { CoreEvent } from '../contract/events.js';
import { LlmClient } from './llm.js';
import { LatencyClock } from './latency.js';
import { createMetrics, type CoreMetrics } from './metrics.js';
import { isDeadLocalHolder, Leases, newHolderId } from './leases.js';
import { ParkedLeases, type RunLease } from './parked-leases.js';
import { openWakeBus, type WakeBus } from '../store/wake-bus.js';
import { questionTool } from './question-tool.js';
import { ToolRegistry } from './tool-registry.js';
import { TurnRunner } from './turn-runner.js';
import { Decisions } from './decisions.js';

/**
 * Something that lives as long as the core (the job scheduler): attached when the core is built
 * (it may add channels and tools then), started after recovery, stopped first on close.
 */
export interface CoreService {
  attach(core: Core): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Options of {@link Core.open}. */
export interface CoreOptions {
  config: Config;
  log?: Logger;
  /** An already-open database (tests); otherwise opened from `store.database_url`. */
  db?: Db;
  /** Tools besides the question tool (built-ins, extra tools). */
  tools?: AnyTool[];
  plugins?: Plugin[];
  /** Further tool sources (MCP servers), after the built-ins and plugins. */
  sources?: ToolSource[];
  promptSections?: PromptSection[];
  /** Services started with the core and stopped before it closes. */
  services?: CoreService[];
  /** Called on close (e.g. reaping background processes). */
  onClose?: Array<() => Promise<void>>;
  /** How often expiries and cross-process decisions are checked; default 1000 ms. */
  sweepIntervalMs?: number;
  /** This instance's name in lease rows; default: host, pid and a random part. */
  holderId?: string;
  /** How long shutdown waits for running turns before aborting them; default 5000 ms. */
  shutdownGraceMs?: number;
}

/** Platforms redeliver within minutes (Slack) or never re-use ids (Telegram): a week is ample. */
const INBOUND_KEY_TTL_MS = 7 * 24 * 3600_000;
const PRUNE_INTERVAL_MS = 3600_000;

/** Events after which a terminal channel's rows are settled (a turn ends or waits, or a notice). */
const SETTLE_ON = new Set<CoreEvent['type']>(['turn_done', 'approval_requested', 'question', 'notification', 'error']);

/** Listener for every event of every conversation (tests, metrics, logging). */
export type EventListener = (conversationId: string, event: CoreEvent) => void;

function keyOf(ref: ChatRef): convRepo.ConversationKey {
  return { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' };
}

/** The channel-neutral core. */
export class Core implements CoreApi {
  readonly registry: ToolRegistry;
  readonly metrics: CoreMetrics = createMetrics();
  private readonly latency = new LatencyClock(this.metrics.messageLatency);
  readonly paths: PathPolicy;
  readonly llm: LlmClient;
  readonly access: AccessControl;
  /** This instance's leases (conversation turns; the Telegram poller claims its own). */
  readonly leases: Leases;
  private readonly channels = new Map<string, Channel>();
  private readonly runner: TurnRunner;
  private readonly decisions: Decisions;
  /** Drives every channel with a surface from the delivery ledger. */
  readonly presenter: Presenter;
  private readonly running = new Map<string, Promise<void>>();
  /** Wake-ups still looking up whether to run here or tell other instances (PostgreSQL). */
  private readonly waking = new Set<Promise<void>>();
  private readonly dirty = new Set<string>();
  /** Conversations whose turn a message is starting on receipt right now (see `submit`). */
  private readonly startingOnReceipt = new Set<string>();
  private readonly deliveries = new Map<string, Promise<void>>();
  private readonly listeners = new Set<EventListener>();
  /** Set by the job service when it attaches. */
  jobs?: JobControls;
  private sweeper: NodeJS.Timeout | null = null;
  private wakeBus: WakeBus | null = null;
  /** Conversation leases held a moment after their turn (SQLite only: see parked-leases.ts). */
  private parkedLeases: ParkedLeases | null = null;
  /** Settles once every tool source made its first connection attempt; turns wait for it. */
  private toolsReady: Promise<void> = Promise.resolve();
  private lastPrune = 0;
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
    this.leases = new Leases(db, options.holderId ?? newHolderId(), config.store.lease_seconds * 1000, this.metrics, log.child({ part: 'leases' }));
    if (!isPostgresUrl(config.store.database_url)) this.parkedLeases = new ParkedLeases(this.leases, (id) => this.kick(id), log.child({ part: 'leases' }));
    this.registry = new ToolRegistry(log.child({ part: 'tools' }));
    this.presenter = new Presenter({
      db,
      log: log.child({ part: 'delivery' }),
      metrics: this.metrics,
      abandonAfterMs: config.delivery.abandon_after_seconds * 1000,
      conversation: (id) => this.conversation(id),
      channelFor: (conv) => this.serving(conv),
      claims: { holder: this.leases.holder, ttlMs: config.store.lease_seconds * 1000, holderGone: isDeadLocalHolder },
      onShown: (id, final) => {
        this.latency.mark(id, 'first_shown');
        if (final) this.latency.mark(id, 'final_shown');
      },
    });
    this.metrics.bindDeliveryCounts(() => deliveryCounts(db));
    this.registry.register(questionTool);
    if (config.subagents.max_depth > 0) {
      this.registry.register(taskTool);
      this.registry.register(planTool);
    }
    this.registry.addSource(new StaticToolSource('builtin', options.tools ?? []));
    for (const plugin of options.plugins ?? []) {
      const tools = plugin.tools(config).map((tool) => ({ ...tool, meta: { ...tool.meta, source: tool.meta.source ?? `plugin:${plugin.name}` } }));
      this.registry.addSource(new StaticToolSource(`plugin:${plugin.name}`, tools));
    }
    for (const source of options.sources ?? []) this.registry.addSource(source);
    const sections = [...(options.promptSections ?? [])];
    if (this.registry.lazyGroups().length > 0) {
      this.registry.register(activateTool(this.registry));
      sections.push(lazyGroupsSection(this.registry));
    }
    this.registry.onChange(() => {
      if (!this.closing) this.registry.recordKnown(this.db).catch((err) => this.log.warn({ err }, 'recording known tools failed'));
    });
    const deps: EngineDeps = {
      db,
      config,
      log,
      llm: this.llm,
      registry: this.registry,
      paths: this.paths,
      metrics: this.metrics,
      latency: this.latency,
      promptSections: sections,
      emit: (id, event) => this.emit(id, event),
      conversation: (id) => this.conversation(id),
      chatOf: (conv) => this.chatOf(conv),
      channelFor: (conv) => this.servingChat(conv),
      kick: (id) => this.wake(id),
      sendFile: async (conv, callId, file) => this.presenter.sendFile(await this.chatOf(conv), callId, file),
      isClosing: () => this.closing,
    };
    this.runner = new TurnRunner(deps);
    this.decisions = new Decisions(deps, this.access, (id) => this.runner.abort(id));
    for (const service of options.services ?? []) service.attach(this);
  }

  /** Open the database, apply migrations (a failure stops start-up) and build the core. */
  static async open(options: CoreOptions): Promise<Core> {
    const log = options.log ?? silentLogger();
    const db = options.db ?? openStore(options.config.store);
    await migrateToLatest(db);
    const core = new Core(options.config, db, log, options);
    // Built-ins and plugins join the catalog now (a name clash between them throws here);
    // outside sources (MCP) connect in start().
    await core.registry.refresh();
    return core;
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
    // Tool sources connect while the channels start; each bounds its own wait and never throws.
    const tools = this.registry.connectAll();
    this.toolsReady = tools.catch((err) => this.log.error({ err }, 'tool sources failed to start'));
    this.presenter.holdUntilRecovered();
    for (const channel of this.channels.values()) await channel.start(this);
    if (isPostgresUrl(this.config.store.database_url)) {
      this.wakeBus = await openWakeBus(this.db, this.config.store.database_url, this.leases.holder.replace(/\s/g, '_'), (id) => this.onWake(id), this.log);
    }
    await tools;
    await this.registry.recordKnown(this.db);
    await this.recover();
    for (const service of this.options.services ?? []) await service.start();
    const interval = this.options.sweepIntervalMs ?? 1000;
    this.sweeper = setInterval(() => {
      this.sweep().catch((err) => this.log.error({ err }, 'sweep failed'));
    }, interval);
    this.sweeper.unref();
  }

  /** The channel that serves a conversation in this process, if any (see {@link Channel.serves}). */
  private serving(conv: Conversation): Channel | undefined {
    const channel = this.channels.get(conv.channel);
    if (!channel) return undefined;
    return (channel.serves?.(conv) ?? true) ? channel : undefined;
  }

  /** {@link serving} for any conversation: a sub-agent is served where its root chat is. */
  private async servingChat(conv: Conversation): Promise<Channel | undefined> {
    return this.serving(conv.parent_id ? await this.chatOf(conv) : conv);
  }

  /** Whether this process serves a conversation (its channel is here and serves it). */
  private async serves(conversationId: string): Promise<boolean> {
    const conv = await this.conversation(conversationId);
    return !!conv && this.serving(conv) !== undefined;
  }

  private async recover(): Promise<void> {
    // Undelivered rows first: they are queued on each conversation's chain before anything a
    // resumed turn shows, so the chat keeps its order across the restart.
    await this.presenter.recover((id) => this.serves(id));
    const ids = new Set([...(await conversationsWithActiveTurns(this.db)), ...(await conversationsWithInbox(this.db))]);
    for (const id of ids) {
      const conv = await this.conversation(id);
      if (!conv || !(await this.servingChat(conv))) continue;
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
        alwaysCovers: alwaysScopeText(a.tool_name, a.target_path),
        replay: true,
      });
    }
    for (const q of await pendingQuestions(this.db, conversationId)) {
      this.emit(conversationId, {
        type: 'question',
        id: q.id,
        question: q.question,
        suggestedAnswers: JSON.parse(q.suggested_answers) as string[],
        replay: true,
      });
    }
  }

  /** Expire overdue approvals; resume turns whose approvals another process decided. */
  async sweep(): Promise<void> {
    if (this.closing) return;
    for (const a of await expiredApprovals(this.db, Date.now())) await this.decisions.expire(a);
    // The search index is filled here, in batches, instead of per inserted message.
    await indexPendingMessages(this.db).catch((err) => this.log.warn({ err }, 'search indexing failed; retrying next sweep'));
    await this.presenter.sweep((id) => this.serves(id));
    // Work no instance holds: decided approvals (possibly decided elsewhere), and turns or queued
    // messages whose lease ran out (the instance running them died).
    const candidates = [...new Set([...(await conversationsWithDecidedWaits(this.db)), ...(await conversationsNeedingRunner(this.db))])].filter(
      (id) => !this.running.has(id),
    );
    const held = await heldNames(this.db, candidates.map((id) => `conv:${id}`));
    for (const id of candidates) {
      if (held.has(`conv:${id}`)) continue;
      const conv = await this.conversation(id);
      if (conv && (await this.servingChat(conv))) this.kick(id);
    }
    await welcomePaired({
      db: this.db,
      serves: (channel, conv) => this.channels.has(channel) && (!conv || this.serving(conv) !== undefined),
      emit: (id, event) => this.emit(id, event),
    });
    if (Date.now() - this.lastPrune > PRUNE_INTERVAL_MS) {
      this.lastPrune = Date.now();
      await convRepo.pruneInboundKeys(this.db, Date.now() - INBOUND_KEY_TTL_MS);
      await pruneExpiredCodes(this.db, Date.now());
    }
  }

  /**
   * Work for a conversation recorded here (a message, a decision): run it here when this instance
   * serves its channel (the lease decides between instances), else tell the other instances
   * (PostgreSQL), one of which serves it.
   */
  private wake(conversationId: string): void {
    if (!this.wakeBus) {
      this.kick(conversationId);
      return;
    }
    const bus = this.wakeBus;
    // Tracked until it has kicked (or notified): `idle()` must not report idle in between.
    const waking = this.conversation(conversationId)
      .then(async (conv) => {
        if (conv && this.serving(conv)) this.kick(conversationId);
        else await bus.notify(conversationId);
      })
      .catch((err) => this.log.warn({ err }, 'wake-up notification failed; the sweep will find the work'))
      .finally(() => this.waking.delete(waking));
    this.waking.add(waking);
  }

  /** Another instance recorded work for a conversation. */
  private onWake(conversationId: string): void {
    if (this.closing) return;
    void this.conversation(conversationId)
      .then((conv) => {
        if (conv && this.serving(conv)) this.kick(conversationId);
      })
      .catch((err) => this.log.warn({ err }, 'wake-up failed; the sweep will find the work'));
  }

  /** Schedule a conversation's runner; a second kick while it runs makes it run once more. */
  kick(conversationId: string): void {
    if (this.closing) return;
    if (this.running.has(conversationId)) {
      this.dirty.add(conversationId);
      return;
    }
    const task = (async () => {
      // A message that arrives while MCP servers are still connecting waits for their tools.
      await this.toolsReady;
      do {
        this.dirty.delete(conversationId);
        // One instance at a time runs a conversation: the lease row decides which. When another
        // holds it, that one re-checks the queue after giving it up, so nothing is stranded.
        const held = this.parkedLeases?.take(conversationId) ?? (await this.claimConversation(conversationId));
        if (!held) return;
        const { lease, stopRenewing } = held;
        let advanced = false;
        let waiting = false;
        try {
          advanced = await this.runner.run(conversationId);
        } finally {
          if (advanced && !this.closing && this.parkedLeases) {
            // Kept a moment for the chat's next message (SQLite: see parked-leases.ts).
            this.parkedLeases.park(conversationId, held);
          } else {
            stopRenewing();
            // Messages another instance queued while this one held the lease need a turn (checked
            // in the release itself). Only after a turn was advanced: a conversation this process
            // does not run would otherwise loop here.
            if (advanced && !this.closing) waiting = await this.leases.releaseConversation(lease, conversationId);
            else await this.leases.release(lease);
          }
        }
        if (waiting) this.dirty.add(conversationId);
      } while (this.dirty.has(conversationId) && !this.closing);
    })()
      .catch(async (err) => {
        this.log.error({ err, conversationId }, 'turn runner crashed');
        const message = `internal error: ${(err as Error).message}`;
        await enqueueError(this.db, conversationId, message).catch((e) => this.log.error({ err: e }, 'could not queue the error line'));
        this.emit(conversationId, { type: 'error', message });
      })
      .finally(() => this.running.delete(conversationId));
    this.running.set(conversationId, task);
  }

  /** Claim a conversation's lease for a run and keep it renewed; null when another instance holds it. */
  private async claimConversation(conversationId: string): Promise<RunLease | null> {
    const claimedAt = Date.now();
    const lease = await this.leases.claim(`conv:${conversationId}`);
    if (!lease) return null;
    const held: RunLease = { lease, stopRenewing: () => {}, confirmedAt: claimedAt };
    held.stopRenewing = this.leases.keepAlive(
      lease,
      () => {
        this.runner.abort(conversationId);
        this.parkedLeases?.lost(conversationId, lease);
      },
      (since) => {
        held.confirmedAt = since;
      },
    );
    return held;
  }

  /** Resolves when no conversation is running (tests, benchmarks, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.waking.size > 0) await Promise.allSettled([...this.waking, ...this.running.values()]);
    await Promise.allSettled([...this.deliveries.values()]);
    await this.presenter.idle();
  }

  /** A conversation row, from memory while no process has changed one (see `store/hot-cache.ts`). */
  private conversation(id: string): Promise<Conversation | undefined> {
    return hotCache(this.db).conversation(id);
  }

  /** The chat a conversation's messages appear in: a sub-agent's goes up to its root conversation. */
  private async chatOf(conv: Conversation): Promise<Conversation> {
    let current = conv;
    while (current.parent_id) {
      const parent = await this.conversation(current.parent_id);
      if (!parent) break;
      current = parent;
    }
    return current;
  }

  /**
   * Queue an event for the conversation's channel; listeners see it at once. A channel with a
   * surface gets it through the presenter (live updates; everything else is a ledger row
   * already); a terminal channel prints it. A sub-agent's events go to its root chat, labelled
   * with the child (or dropped when they are its answer to the parent).
   */
  emit(conversationId: string, event: CoreEvent): void {
    if (event.type === 'turn_done') this.latency.turnEnded(conversationId, event.status);
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
        const channel = conv && (await this.servingChat(conv));
        if (!conv || !channel) return;
        const chat = conv.parent_id ? await this.chatOf(conv) : conv;
        const shown = conv.parent_id ? presentChildEvent(conv, event) : event;
        if (!shown) return;
        if (channel.surface) this.presenter.onEvent(chat, channel.surface, shown);
        else if (channel.deliver) {
          await channel.deliver(chat, shown);
          // Printed: the rows it stands for are shown (the terminal has no messages to edit later).
          // Settled once per step that waits or ends, not per event: one update instead of many.
          if (SETTLE_ON.has(shown.type)) this.presenter.kick(chat.id);
          // A printed event is shown; the presenter times what it posts and edits itself.
          if (event.type === 'delta' || event.type === 'reply') this.latency.mark(conversationId, 'first_shown');
          else if (event.type === 'turn_done' && event.status === 'done') this.latency.mark(conversationId, 'final_shown');
        }
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
    // The key is recorded with what the message leads to: with the inbox row in one commit when it
    // is queued (the common case), on its own before any other outcome.
    let keyRecorded = false;
    const seenFirst = async () => {
      if (!message.dedupKey || keyRecorded) return true;
      keyRecorded = true;
      return convRepo.markInboundSeen(this.db, message.dedupKey);
    };
    if (!(await this.access.isAllowed(message.channel, message.userId))) {
      if (!(await seenFirst())) return { status: 'duplicate' };
      const p = await this.access.requestPairing(message.channel, message.userId, message.userName ?? message.userId, message.chatKey);
      this.log.info({ channel: message.channel, userId: message.userId, isNew: p.isNew }, 'unknown user asked to pair');
      return { status: 'pairing_required', code: p.code, expiresAt: p.expiresAt, isNew: p.isNew };
    }
    // The local operator owns the machine: a flood limit there only loses their own messages.
    if (!isLocalChannel(message.channel)) {
      const limited = this.access.rateLimit(principal);
      if (!limited.ok && !(await seenFirst())) return { status: 'duplicate' };
      if (!limited.ok) return { status: 'rate_limited', notify: limited.notify, retryAfterMs: limited.retryAfterMs };
    }
    const conv = await hotCache(this.db).activeConversation(keyOf(message), principal);

    // Notes and answers only exist while a turn is unfinished: skip both look-ups otherwise.
    const unfinished = await activeTurn(this.db, conv.id);
    if (unfinished) {
      // Sub-agents' cards live in this chat too: a typed note or answer may be for one of them.
      const { approvals, questions } = await openCards(this.db, conv.id);
      const waitingNote = approvals.find((a) => a.status === 'awaiting_note' && a.decided_by === principal);
      if (waitingNote) {
        if (!(await seenFirst())) return { status: 'duplicate' };
        const r = await this.finishDenial(waitingNote.id, principal, message.text);
        if (r.ok) return { status: 'note_recorded', conversationId: conv.id, approvalId: waitingNote.id };
      }
      const question = questions.at(-1);
      if (question) {
        if (!(await seenFirst())) return { status: 'duplicate' };
        const r = await this.answerQuestion({ id: question.id, text: message.text, by: principal });
        if (r.ok) return { status: 'answered_question', conversationId: conv.id, questionId: question.id };
      }
    }
    const incoming = { dedupKey: keyRecorded ? undefined : message.dedupKey, conversationId: conv.id, authorId: principal, text: message.text, attachments: message.attachments };
    if (!unfinished && this.canStartOnReceipt(conv)) {
      this.startingOnReceipt.add(conv.id);
      let started: Awaited<ReturnType<typeof receiveStartingTurn>>;
      try {
        started = await receiveStartingTurn(this.db, incoming);
      } finally {
        this.startingOnReceipt.delete(conv.id);
      }
      if (!started) return { status: 'duplicate' };
      this.latency.received(conv.id);
      // A run that began meanwhile (a sweep, a decision) may have found the turn already: then it
      // is only asked to run once more, and finds the turn again by itself.
      if (started !== 'queued' && !this.running.has(conv.id)) this.runner.startedOnReceipt(conv.id, started);
      this.kick(conv.id);
      return { status: 'queued', conversationId: conv.id };
    }
    if (!(await receiveMessage(this.db, incoming))) return { status: 'duplicate' };
    this.latency.received(conv.id);
    this.wake(conv.id);
    return { status: 'queued', conversationId: conv.id };
  }

  /**
   * Whether a message for an idle conversation may start its turn in its receipt's transaction:
   * this process holds the conversation's lease (parked after its last turn, so no other process
   * can start a turn), runs nothing for it and is not starting one for it already, and serves its
   * channel with no further say (`accepts`). Otherwise the message is queued in the inbox and the
   * runner starts the turn, as always.
   */
  private canStartOnReceipt(conv: Conversation): boolean {
    if (this.closing || !this.parkedLeases?.holds(conv.id)) return false;
    if (this.running.has(conv.id) || this.startingOnReceipt.has(conv.id)) return false;
    const channel = this.serving(conv);
    return channel !== undefined && !channel.accepts;
  }

  async decideApproval(input: DecisionInput): Promise<DecideResult> {
    if (input.within && !(await this.belongsTo('approval', input.id, input.within))) return { ok: false, reason: 'unknown' };
    return this.decisions.decideApproval(input);
  }

  finishDenial(id: string, by: string, note: string | null): Promise<DecideResult> {
    return this.decisions.finishDenial(id, by, note);
  }

  async answerQuestion(input: AnswerInput): Promise<AnswerResult> {
    if (input.within && !(await this.belongsTo('question', input.id, input.within))) return { ok: false, reason: 'unknown' };
    return this.decisions.answerQuestion(input);
  }

  /** Whether an approval or question belongs to the active conversation of `ref`. */
  private async belongsTo(kind: 'approval' | 'question', id: string, ref: ChatRef): Promise<boolean> {
    const conv = await convRepo.findActiveConversation(this.db, keyOf(ref));
    if (!conv) return false;
    const row = kind === 'approval' ? await getApproval(this.db, id) : await getQuestion(this.db, id);
    return row?.conversation_id === conv.id;
  }

  /** Cancel a conversation's turn: abort the stream and tools, reject approvals, clear the queue. */
  stopConversation(conversationId: string, by: string): Promise<boolean> {
    return this.decisions.stopConversation(conversationId, by);
  }

  async stop(ref: ChatRef, by: string): Promise<boolean> {
    const conv = await convRepo.findActiveConversation(this.db, keyOf(ref));
    if (!conv) return false;
    return this.stopConversation(conv.id, by);
  }

  async newConversation(ref: ChatRef, by: string): Promise<void> {
    const conv = await convRepo.findActiveConversation(this.db, keyOf(ref));
    if (!conv) return;
    await this.stopConversation(conv.id, by);
    await convRepo.archiveConversation(this.db, conv.id);
    hotCache(this.db).forgetConversation(conv.id);
  }

  async status(ref: ChatRef): Promise<ConversationStatus> {
    const conv = await convRepo.findActiveConversation(this.db, keyOf(ref));
    // A terminal session shows only its own conversation; it says where else decisions wait.
    const elsewhere = isLocalChannel(ref.channel) ? { pendingElsewhere: await chatsWithPendingDecisions(this.db, ref.channel, conv?.id ?? null) } : {};
    if (!conv) {
      return { conversationId: null, model: this.config.llm.model, turn: 'idle', pendingApprovals: 0, pendingQuestions: 0, queued: 0, ...elsewhere };
    }
    // A sub-agent's cards are in this chat too, so they count here.
    const [turn, { approvals, questions }, inbox] = await Promise.all([activeTurn(this.db, conv.id), openCards(this.db, conv.id), pendingInbox(this.db, conv.id)]);
    return {
      conversationId: conv.id,
      model: conv.model ?? this.config.llm.model,
      turn: turn ? (turn.status === 'waiting' ? 'waiting' : 'running') : 'idle',
      pendingApprovals: approvals.length,
      pendingQuestions: questions.length,
      queued: inbox.length,
      ...elsewhere,
    };
  }

  async setModel(ref: ChatRef, model: string | null): Promise<string> {
    const conv = await convRepo.ensureConversation(this.db, keyOf(ref), null);
    const value = model?.trim() ? model.trim() : null;
    await convRepo.setConversationModel(this.db, conv.id, value);
    hotCache(this.db).forgetConversation(conv.id);
    return value ?? this.config.llm.model;
  }

  findConversation(ref: ChatRef): Promise<Conversation | undefined> {
    return convRepo.findActiveConversation(this.db, keyOf(ref));
  }

  getConversation(id: string): Promise<Conversation | undefined> {
    return this.conversation(id);
  }

  latestConversation(channel: string, chatKey: string): Promise<Conversation | undefined> {
    return convRepo.latestConversation(this.db, channel, chatKey);
  }

  getQuestion(id: string): Promise<Question | undefined> {
    return getQuestion(this.db, id);
  }

  markInboundSeen(key: string): Promise<boolean> {
    return convRepo.markInboundSeen(this.db, key);
  }

  isInboundSeen(key: string): Promise<boolean> {
    return convRepo.isInboundSeen(this.db, key);
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

  /** Admins and the local operator see and revoke every rule; others only their own grants. */
  private seesAllRules(by: string): boolean {
    return this.isAdmin(by) || isLocalChannel(by.split(':')[0] ?? '');
  }

  listRules(by: string): Promise<ApprovalRule[]> {
    return allRules(this.db, this.seesAllRules(by) ? undefined : by);
  }

  async revokeRule(id: number, by: string): Promise<{ ok: true; rule: ApprovalRule } | { ok: false; reason: string }> {
    const rule = await getRule(this.db, id);
    if (!rule || (!this.seesAllRules(by) && rule.user_id !== by)) return { ok: false, reason: `no rule #${id} of yours` };
    if (!(await deleteRule(this.db, id))) return { ok: false, reason: `no rule #${id}` };
    return { ok: true, rule };
  }

  async notify(input: NotificationInput): Promise<boolean> {
    const queued = await enqueueNotification(this.db, input);
    if (queued) this.emit(input.conversationId, { type: 'notification', text: input.text, source: input.title });
    return queued;
  }

  /** Deliver a conversation's open ledger rows now (e.g. after `enqueueNotification` in a transaction). */
  kickDeliveries(conversationId: string): void {
    this.presenter.kick(conversationId);
  }

  journalUpdates(source: string, updates: JournaledUpdate[]): Promise<void> {
    return journalRepo.journalUpdates(this.db, source, updates);
  }

  forgetUpdates(source: string, ids: number[]): Promise<void> {
    return journalRepo.forgetUpdates(this.db, source, ids);
  }

  journaledUpdates(source: string): Promise<JournaledUpdate[]> {
    return journalRepo.journaledUpdates(this.db, source);
  }

  getSetting(key: string): Promise<string | undefined> {
    return convRepo.getSetting(this.db, key);
  }

  setSetting(key: string, value: string): Promise<void> {
    return convRepo.setSetting(this.db, key, value);
  }

  toolSources(): SourceStatus[] {
    return this.registry.statuses();
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
    for (const service of this.options.services ?? []) await service.stop().catch((err) => this.log.warn({ err }, 'service stop failed'));
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
    // Rows still open are delivered by the next start.
    await Promise.race([this.presenter.idle(), new Promise((r) => setTimeout(r, 2000).unref())]);
    this.presenter.close();
    await this.registry.closeAll();
    for (const hook of this.options.onClose ?? []) await hook().catch((err) => this.log.warn({ err }, 'close hook failed'));
    await this.parkedLeases?.releaseAll();
    this.closed = true;
    this.leases.close();
    await this.wakeBus?.close();
    await this.db.destroy();
  }
}
