/**
 * The core: opens the store, builds the engine (see `assembly.ts`), hands each channel its
 * {@link ChannelCore} role (see `roles.ts`) and serves in-process callers (the job service, the
 * command line, tests) by handing each call to the part that does the job. Per
 * conversation one turn runs at a time; conversations run concurrently; events reach channels
 * through a queue per conversation so a slow platform never blocks a turn.
 *
 * The parts: `routing.ts` (which channel serves a conversation here), `inbound.ts` (a message on
 * its way in), `scheduler.ts` (runs, leases and wake-ups across instances), `maintenance.ts`
 * (recovery and the sweep), `fanout.ts` (events to listeners and channels), `conversation-ops.ts`
 * (what commands and buttons do to a conversation), `reception.ts` (a platform message's files,
 * voice and answers to its sender), `lifecycle.ts` (start and shutdown).
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { NoticeContent, TextContent } from '../contract/content.js';
import { enqueueNotification, type NotificationInput } from '../delivery/ledger.js';
import type { Presenter } from '../delivery/presenter.js';
import { silentLogger } from '../log.js';
import { type Db, migrateToLatest, openStore } from '../store/db.js';
import * as convRepo from '../store/repos/conversations.js';
import { SettingsMemo } from './memo.js';
import type { ApprovalRule, Conversation } from '../store/schema.js';
import type { PathPolicy } from '../tools/path-policy.js';
import type { SourceStatus } from '../tools/source.js';
import type { AccessControl } from './access.js';
import type { ChatRef, InboundMessage, ReceivedMessage } from '../contract/chat.js';
import type {
  AnswerInput,
  AnswerResult,
  ConversationStatus,
  DecideResult,
  DecisionInput,
  ElectedWork,
  JobControls,
  Memo,
  PairingOutcome,
  SubmitResult,
  Tap,
} from '../contract/core.js';
import { type AssemblyOptions, assembleCore, type CoreParts } from './assembly.js';
import type { Channel } from '../contract/channel.js';
import { type ConversationOps, keyOf } from './conversation-ops.js';
import type { CoreEvent } from '../contract/events.js';
import { stand } from './election.js';
import type { EventListener } from './fanout.js';
import type { Leases } from './leases.js';
import { CoreLifecycle } from './lifecycle.js';
import type { LlmClient } from './llm.js';
import type { CoreMetrics } from '../metrics.js';
import type { ToolRegistry } from './tool-registry.js';
import type { NameDirectory } from './names.js';
import type { Action, TypedDecision } from '../contract/actions.js';
import type { ActionOutcome, CommandAnswer, CommandPlace } from '../contract/command.js';
import type { ActionCore, ChannelCore, CommandCore } from '../contract/roles.js';
import { runAction } from './actions.js';
import { runCommand } from './commands.js';
import { actionCore, channelCore, commandCore } from './roles.js';

export type { EventListener } from './fanout.js';

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
export interface CoreOptions extends AssemblyOptions {
  config: Config;
  log?: Logger;
  /** An already-open database (tests); otherwise opened from `store.database_url`. */
  db?: Db;
  /** SQLite opened here commits in groups (`store/group-commit.ts`): the process's one connection. */
  groupCommit?: boolean;
  /** Services started with the core and stopped before it closes. */
  services?: CoreService[];
  /** Called on close (e.g. reaping background processes). */
  onClose?: Array<() => Promise<void>>;
  /** How often expiries and cross-process decisions are checked; default 1000 ms. */
  sweepIntervalMs?: number;
  /** How long shutdown waits for running turns before aborting them; default 5000 ms. */
  shutdownGraceMs?: number;
}

/** The channel-neutral core. */
export class Core {
  readonly registry: ToolRegistry;
  readonly metrics: CoreMetrics;
  readonly paths: PathPolicy;
  readonly llm: LlmClient;
  readonly access: AccessControl;
  /** This instance's leases (conversation turns, elections, ledger rows being sent). */
  readonly leases: Leases;
  /** Drives every channel with a surface from the delivery ledger. */
  readonly presenter: Presenter;
  /** Set by the job service when it attaches. */
  jobs?: JobControls;
  private readonly parts: CoreParts;
  /** People's display names, for cards and action outcomes on every channel. */
  readonly names: NameDirectory;
  private readonly lifecycle: CoreLifecycle;
  private readonly memos = new Map<string, SettingsMemo>();
  /** What a chat command may use of the core (see `roles.ts`). */
  private readonly commandRole: CommandCore;
  /** What a button's action may use of the core. */
  private readonly actionRole: ActionCore;
  /** What a channel may use of the core: handed to each channel at start (tests watch it too). */
  readonly channelRole: ChannelCore;

  private constructor(
    readonly config: Config,
    readonly db: Db,
    readonly log: Logger,
    options: CoreOptions,
  ) {
    this.parts = assembleCore(config, db, log, options);
    ({
      registry: this.registry,
      metrics: this.metrics,
      paths: this.paths,
      llm: this.llm,
      access: this.access,
      leases: this.leases,
      presenter: this.presenter,
      names: this.names,
    } = this.parts);
    this.lifecycle = new CoreLifecycle(this.parts, options, db, log);
    const sources = {
      parts: this.parts,
      db,
      config,
      log,
      names: this.names,
      jobs: () => this.jobs,
      toolSources: () => this.toolSources(),
      say: this.say.bind(this),
      memo: this.memo.bind(this),
      elect: (name: string, work: ElectedWork) => stand(this.leases, name, work, log),
    };
    this.commandRole = commandCore(sources);
    this.actionRole = actionCore(sources);
    this.channelRole = channelCore(sources, this, (by) => this.mayUse(by));
    for (const service of options.services ?? []) service.attach(this);
  }

  /** Open the database, apply migrations (a failure stops start-up) and build the core. */
  static async open(options: CoreOptions): Promise<Core> {
    const log = options.log ?? silentLogger();
    const db = options.db ?? openStore(options.config.store, { groupCommit: options.groupCommit });
    await migrateToLatest(db);
    const core = new Core(options.config, db, log, options);
    await core.names.load();
    // Built-ins and plugins join the catalog now (a name clash between them throws here);
    // outside sources (MCP) connect in start().
    await core.registry.refresh();
    return core;
  }

  /** Serve conversations of this channel in this process. */
  addChannel(channel: Channel): void {
    this.parts.router.add(channel);
  }

  /** Every registered channel. */
  listChannels(): Channel[] {
    return this.parts.router.list();
  }

  /** Observe every event (returns an unsubscribe function). */
  subscribe(listener: EventListener): () => void {
    return this.parts.fanout.subscribe(listener);
  }

  /** Start channels, recover, then sweep periodically (see `lifecycle.ts`). */
  start(): Promise<void> {
    return this.lifecycle.start(this.channelRole);
  }

  /** Expire overdue approvals; resume turns whose approvals another process decided. */
  sweep(): Promise<void> {
    return this.parts.maintenance.sweep();
  }

  /** Schedule a conversation's runner; a second call while it runs makes it run once more. */
  runHere(conversationId: string): void {
    this.parts.scheduler.runHere(conversationId);
  }

  /** Resolves when no conversation is running (tests, benchmarks, shutdown). */
  async idle(): Promise<void> {
    await this.parts.scheduler.idle();
    await this.parts.fanout.settled();
    await this.presenter.idle();
  }

  /** Queue an event for the conversation's channel; listeners see it at once (see `fanout.ts`). */
  emit(conversationId: string, event: CoreEvent): void {
    this.parts.fanout.emit(conversationId, event);
  }

  /**
   * A text message from an in-process caller that holds the core itself (tests, benchmarks): the
   * one way in ({@link receive}: the same access, name and duplicate decisions), with no files and
   * a one-to-one chat (`direct`) unless told otherwise. Channels call {@link receive}.
   * @throws when there was nothing to take (an empty text).
   */
  async submit(message: Omit<InboundMessage, 'attachments'> & { direct?: boolean }): Promise<SubmitResult> {
    const result = await this.parts.reception.receive({ ...message, direct: message.direct ?? true });
    if (!result) throw new Error('nothing to submit: the message has no text');
    return result;
  }

  /** Take a platform message (see `ChannelCore.receive`). */
  receive(message: ReceivedMessage): Promise<SubmitResult | null> {
    return this.parts.reception.receive(message);
  }

  /** Decide an approval; with `within`, only one shown in that chat. Only the requester and admins may. */
  decideApproval(input: DecisionInput): Promise<DecideResult> {
    return this.parts.ops.decideApproval(input);
  }

  /** Run a chat command (see {@link ChannelCore.command}). */
  command(name: string, args: string, place: CommandPlace): Promise<CommandAnswer> {
    return runCommand(name, { ...place, core: this.commandRole, args }, (by) => this.mayUse(by));
  }

  /** Whether a principal may use the bot now: an admin, or let in (see {@link ChannelCore.mayUse}). */
  async mayUse(by: string): Promise<boolean> {
    const at = by.indexOf(':');
    return (await this.access.isAdmin(by)) || (await this.access.isAllowed(by.slice(0, at), by.slice(at + 1)));
  }

  /** Authorise and execute a tap or a typed decision (see {@link ChannelCore.act}). */
  act(action: Action | TypedDecision, by: string, tap?: Tap): Promise<ActionOutcome> {
    return runAction(this.actionRole, action, by, tap);
  }

  /** Answer a question; with `within`, only one shown in that chat. */
  answerQuestion(input: AnswerInput): Promise<AnswerResult> {
    return this.parts.ops.answerQuestion(input);
  }

  /** Cancel a conversation's turn: abort the stream and tools, reject approvals, clear the queue. */
  stopConversation(conversationId: string, by: string): Promise<boolean> {
    return this.parts.decisions.stopConversation(conversationId, by);
  }

  /** Cancel the chat's running turn, reject its approvals, clear its queue; true when something stopped. */
  stop(ref: ChatRef, by: string): Promise<boolean> {
    return this.parts.ops.stop(ref, by);
  }

  /** Archive the chat's active conversation so the next message starts afresh. */
  newConversation(ref: ChatRef, by: string): Promise<void> {
    return this.parts.ops.newConversation(ref, by);
  }

  /** Model, turn state, pending approvals and queue length of a chat. */
  status(ref: ChatRef): Promise<ConversationStatus> {
    return this.parts.ops.status(ref);
  }

  /** `/compact`: fold the chat's earlier turns into its summary now; one line to show. */
  compact(ref: ChatRef, by: string): Promise<string> {
    return this.commandRole.compact(ref, by);
  }

  /** `/usage`: the tokens `by` used today and this month (UTC); one short text to show. */
  usage(by: string): Promise<string> {
    return this.commandRole.usage(by);
  }

  /** Set (or with null, reset) a chat's model; the model now in use. */
  setModel(ref: ChatRef, model: string | null): Promise<string> {
    return this.parts.ops.setModel(ref, model);
  }

  /** Stored approval rules `by` may see. */
  listRules(by: string): Promise<ApprovalRule[]> {
    return this.parts.ops.listRules(by);
  }

  /** Delete a stored rule; its user, admins and the local operator may. */
  revokeRule(id: number, by: string): ReturnType<ConversationOps['revokeRule']> {
    return this.parts.ops.revokeRule(id, by);
  }

  /** The active conversation of a chat's thread, if any. */
  findConversation(ref: ChatRef): Promise<Conversation | undefined> {
    return convRepo.findActiveConversation(this.db, keyOf(ref));
  }

  /** A conversation by id. */
  getConversation(id: string): Promise<Conversation | undefined> {
    return this.parts.router.conversation(id);
  }

  /** Record an inbound key; false when it was seen before. */
  markInboundSeen(key: string): Promise<boolean> {
    return convRepo.markInboundSeen(this.db, key);
  }

  /** Whether a platform user may talk to the bot. */
  isAllowed(channel: string, userId: string): Promise<boolean> {
    return this.access.isAllowed(channel, userId);
  }

  /** Whether a principal (`channel:userId`) is an admin now. */
  isAdmin(principal: string): Promise<boolean> {
    return this.access.isAdmin(principal);
  }

  /** Approve a pairing code as `by` (see `pairing-request.ts`). */
  approvePairing(code: string, by: string): Promise<PairingOutcome> {
    return this.actionRole.approvePairing(code, by);
  }

  /** Show a message in a chat through the delivery ledger (see `ChannelCore.say`). */
  say(ref: ChatRef, key: string, content: TextContent | NoticeContent): Promise<void> {
    return this.parts.reception.say(ref, key, content);
  }

  /** Queue a notification into a conversation (idempotent per `key`) and deliver it at once. */
  async notify(input: NotificationInput): Promise<boolean> {
    const queued = await enqueueNotification(this.db, input);
    if (queued) this.emit(input.conversationId, { type: 'notification', text: input.text, source: input.title });
    return queued;
  }

  /** Deliver a conversation's open ledger rows now (e.g. after `enqueueNotification` in a transaction). */
  deliver(conversationId: string): void {
    this.presenter.deliver(conversationId);
  }

  /** The memory named `name` (a channel's: see `ChannelStore.memo`). */
  memo(name: string): Memo {
    return this.memos.get(name) ?? this.memos.set(name, new SettingsMemo(this.db, name, this.log)).get(name)!;
  }

  /** State of every tool source (built-ins, plugins, MCP servers). */
  toolSources(): SourceStatus[] {
    return this.registry.statuses();
  }

  /** Stop taking work, let running turns reach a safe point, close everything (see `lifecycle.ts`). */
  close(): Promise<void> {
    return this.lifecycle.close();
  }
}
