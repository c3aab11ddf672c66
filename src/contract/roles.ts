/**
 * Role interfaces: what each kind of caller needs from the core, and no more. The core builds one
 * object per role (see `core/roles.ts`) and hands it to the code of that role, so a channel, a
 * chat command or a button's action cannot reach the rest of the core. A channel gets a
 * {@link ChannelCore}: it runs commands and actions through `core.command(...)` and
 * `core.act(...)` and never imports them.
 */
import type { ApprovalRule, Conversation, JournaledUpdate, Question } from '../store/schema.js';
import type { Action, TypedDecision } from './actions.js';
import type { ChatRef, ReceivedMessage } from './chat.js';
import type { ActionOutcome, CommandAnswer, CommandPlace } from './command.js';
import type { NoticeContent, TextContent } from './content.js';
import type {
  AnswerInput,
  AnswerResult,
  ConversationControls,
  ConversationStatus,
  DecideResult,
  DecisionInput,
  ElectedWork,
  Election,
  JobControls,
  Memo,
  PairingOutcome,
  PeopleNames,
  SourceStatus,
  SubmitResult,
  Tap,
  TappedCard,
} from './core.js';

/**
 * The core as a channel sees it: the three ways in (a message, a command, a tap), saying something
 * in a chat, and the few look-ups and stores a platform connection needs. Ten members at most
 * (`test/architecture/channel-core.test.ts`): what a channel needs beyond them goes through
 * `command` or `act`, or is a member of one of the narrow groups below.
 */
export interface ChannelCore {
  /**
   * Take a user's message, the one way in for every message: download its files and transcribe
   * its voice note (for senders who are let in), then the access check, the flood limit,
   * de-duplication by `dedupKey`, and answer or queue; tell the sender what needs telling (a
   * pairing code, with a request to the admins; the flood notice; a refused file or voice note).
   * A typed note after a denial, or a typed answer to an open question, is taken as that.
   * @returns what became of it, or null when it was not taken (nothing arrived to read).
   */
  receive(message: ReceivedMessage): Promise<SubmitResult | null>;
  /**
   * Run chat command `name` (lower case, no slash) typed at `place` with its `args`: unknown names
   * answer with the help; people who may not use the bot get a refusal (pairing happens by writing
   * a message). The answer is for the channel to show (see the kit's `sayAnswer`).
   */
  command(name: string, args: string, place: CommandPlace): Promise<CommandAnswer>;
  /**
   * A button tap of `by` (`channel:userId`), decoded by its channel, or a decision typed at a
   * terminal: authorised and executed (see `core/actions.ts`). A refusal changes nothing and comes
   * back as a sentence (and its reason).
   */
  act(action: Action | TypedDecision, by: string, tap?: Tap): Promise<ActionOutcome>;
  /**
   * Show a message in a chat through the delivery ledger: durable, and in order with the chat's
   * other messages (a command's answer, a refusal). `key` names the message: use the platform
   * update's key, so a redelivered update answers once; saying again under a key shown before
   * edits that message.
   */
  say(ref: ChatRef, key: string, content: TextContent | NoticeContent): Promise<void>;
  /** People's display names, the same on every channel: cards name people, taps and mentions teach names. */
  readonly names: PeopleNames;
  /**
   * Whether a principal (`channel:userId`) may use the bot now: let in, or an admin. A command or a
   * platform button of someone who may not is not the channel's to run (a stranger's message goes
   * to `receive`, which pairs them).
   */
  mayUse(principal: string): Promise<boolean>;
  /**
   * Record an inbound key (a platform update's); false when it was seen before, so a redelivered
   * command or tap that does not go through `receive` is handled once.
   */
  markInboundSeen(key: string): Promise<boolean>;
  /** A chat's conversations: which one is active, stopping it, starting afresh, its state. */
  readonly chats: ChatControls;
  /** What a channel keeps in the database every instance shares (memos, an update journal, elections). */
  readonly store: ChannelStore;
  /** What an admin page shows and changes beyond cards and commands (the web chat's). */
  readonly admin: AdminControls;
}

/** A chat's conversations, by their platform address (see {@link ChannelCore.chats}). */
export interface ChatControls {
  /** The active conversation of a chat's thread, if any. */
  find(ref: ChatRef): Promise<Conversation | undefined>;
  /** A conversation by id (a core event names only its conversation). */
  get(id: string): Promise<Conversation | undefined>;
  /** The most recently active conversation in a chat (any thread), if any: where a Slack command acts. */
  latest(channel: string, chatKey: string): Promise<Conversation | undefined>;
  /** Model, turn state, pending approvals and queue length. */
  status(ref: ChatRef): Promise<ConversationStatus>;
  /**
   * Cancel the running turn, reject pending approvals, clear the queue, as `/stop` does; true when
   * something stopped.
   * @throws SwitchboardError `not_allowed` when the running turn is someone else's
   */
  stop(ref: ChatRef, by: string): Promise<boolean>;
  /** Archive the active conversation so the next message starts afresh, as `/new` does. */
  newConversation(ref: ChatRef, by: string): Promise<void>;
}

/** What a channel keeps in the shared database (see {@link ChannelCore.store}). */
export interface ChannelStore {
  /** The channel's memory named `name` (e.g. `slack.dm_thread`): one per name, kept across restarts. */
  memo(name: string): Memo;
  /**
   * The inbound journal of a platform (`source`): updates fetched but not yet handled, replayed
   * after a crash (see the Telegram channel's `UpdateJournal`).
   */
  readonly journal: InboundJournal;
  /**
   * Stand for the election `name` (a lease name such as `telegram-poller:<bot id>`): of all
   * instances sharing the database, the one elected runs `work`; the others stand by and one of
   * them takes over within seconds when it stops or dies. Resolves after the first try.
   */
  elect(name: string, work: ElectedWork): Promise<Election>;
}

/** Updates of a platform (`source`) fetched but not yet handled (see {@link ChannelStore.journal}). */
export interface InboundJournal {
  /** Record fetched updates (resolves once written). */
  journalUpdates(source: string, updates: JournaledUpdate[]): Promise<void>;
  /** Forget handled updates. */
  forgetUpdates(source: string, ids: number[]): Promise<void>;
  /** The updates still journaled, oldest first. */
  journaledUpdates(source: string): Promise<JournaledUpdate[]>;
}

/** What an admin page shows and changes (see {@link ChannelCore.admin}). */
export interface AdminControls {
  /** The stored approval rules: listed, and revoked by the admin. */
  readonly rules: RuleControls;
  /** Scheduled jobs; absent when the core runs without the job service. */
  readonly jobs?: JobControls;
  /** State of every tool source (built-ins, plugins, MCP servers). */
  toolSources(): SourceStatus[];
}

/** The stored approval rules, as `/rules` shows and revokes them. */
export interface RuleControls {
  /** Rules `by` may see: every rule for admins and the local operator, else their own grants. */
  list(by: string): Promise<ApprovalRule[]>;
  /** Delete a stored rule; its user, admins and the local operator may. */
  revoke(id: number, by: string): Promise<{ ok: true; rule: ApprovalRule } | { ok: false; reason: string }>;
}

/** What a chat command may ask of the core (the table in `core/commands.ts`). */
export interface CommandCore extends ConversationControls {
  readonly rules: RuleControls;
  /** Scheduled jobs and home chats; absent when the core runs without the job service. */
  readonly jobs?: JobControls;
  /** State of every tool source (built-ins, plugins, MCP servers) for `/mcp`. */
  toolSources(): SourceStatus[];
  /** Take a message as its sender's, the way every message comes in (`/prompt` sends an MCP prompt's text so). */
  receive(message: ReceivedMessage): Promise<SubmitResult | null>;
}

/** What a button's action may ask of the core (the router in `core/actions.ts`). */
export interface ActionCore {
  /** People's display names (the tapper's is remembered; deciders are named in refusals). */
  readonly names: PeopleNames;
  /**
   * Decide an approval (approve, deny awaiting a note, deny with or without one); only the requester
   * and admins may. With `within`, refused as unknown unless the card belongs to that chat.
   */
  decide(input: DecisionInput): Promise<DecideResult>;
  /** A question row: a suggested answer is read from it by its position. */
  question(id: string): Promise<Question | undefined>;
  /** Answer a question; with `within`, refused as unknown unless the card belongs to that chat. */
  answer(input: AnswerInput): Promise<AnswerResult>;
  /** Whether a principal is an admin now (pairing buttons are theirs). */
  isAdmin(principal: string): Promise<boolean>;
  /** Approve a pairing code; the paired user or a reason. */
  approvePairing(code: string, by: string): Promise<PairingOutcome>;
  /** Scheduled jobs; absent when the core runs without the job service. */
  readonly jobs?: JobControls;
  /** Redraw a tapped message the ledger showed (a `/jobs` list) as `content`, through the ledger. */
  redraw(tapped: TappedCard, content: TextContent): Promise<void>;
}
