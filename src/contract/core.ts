/**
 * The values that pass between the core and its callers: what became of a message, of a decision
 * and of an answer, elections, notifications, tool sources, people's names and a channel's memos.
 * What each caller may ask of the core is its role (see `roles.ts`): a channel's is
 * `ChannelCore`.
 */
import type { Approval, Job, Question } from '../store/schema.js';
import type { JobOp } from './actions.js';
import type { FullChatRef, ChatRef } from './chat.js';
import type { RefusalReason } from './command.js';

export type { JobOp, RefusalReason };

/**
 * Work that one instance of all sharing the database does at a time (a platform's only receiver,
 * e.g. the Telegram poller), as the instance elected for it runs it (see `core/election.ts`).
 */
export interface ElectedWork {
  /**
   * This instance was elected: begin the work, calling `election.fence()` before each action
   * (so a holder whose lease ran out while it was starved of CPU does not act beside its
   * successor). A throw gives the lease up (tried again later).
   */
  start(election: Election): Promise<void>;
  /** Another instance took the work over, or this one stands down: end the work at once. */
  stop(): Promise<void>;
}

/** This instance's place in one election. */
export interface Election {
  /** Whether this instance does the work now. */
  readonly elected: boolean;
  /**
   * Resolves true when the lease is certainly this instance's for a while yet (renewing it first
   * when the last renewal is old), false when it is not held (lost: the work is being stopped) or
   * that cannot be told now (the database failed). Call it before each action of the work.
   */
  fence(): Promise<boolean>;
  /** Stand down: stop the work if it runs here and give the lease up, so another instance takes over at once. */
  stop(): Promise<void>;
}

/** A notification for a conversation (see `enqueueNotification` in `delivery/ledger.ts`). */
export interface NotificationInput {
  /** The conversation to notify (its channel and chat come from the conversation row). */
  conversationId: string;
  /**
   * Idempotency key chosen by the caller, e.g. `notify:<job id>:<occurrence>`. A second call
   * with the same key queues nothing, so a job re-run after a crash notifies once.
   */
  key: string;
  /** Shown as a first line in bold after a bell, e.g. the job's name. */
  title: string;
  /** Markdown body, rendered like a model reply on every platform. */
  text: string;
}

/** Where a tool source stands; static sources are always `ready`. */
export type SourceState = 'ready' | 'connecting' | 'failed' | 'disconnected' | 'closed' | 'disabled';

/** What `/mcp`, `switchboard mcp list`, `/healthz` and `doctor` show for a source. */
export interface SourceStatus {
  /** `builtin`, `plugin:<name>`, `mcp:<server>`. */
  name: string;
  state: SourceState;
  /** Transport or kind, e.g. `stdio`, `http`, `sse`. */
  kind: string;
  /** Names of the tools it contributes (after naming and collision checks). */
  tools: string[];
  /** Tools refused, each with its reason (name collisions, invalid names). */
  refused?: string[];
  /** Last connection error, if any. */
  error?: string;
  /** When the next reconnect attempt is due (ms since epoch), while failed or disconnected. */
  retryAt?: number;
  /** Lazy group name when the source stays hidden until `activate_tools`. */
  lazyGroup?: string;
}

/** What channels may do with scheduled jobs (`/jobs`, `/sethome`). */
export interface JobControls {
  /** Jobs `by` may act on: their own; an admin's list has everyone's. */
  list(by: string): Promise<Job[]>;
  /** Pause, resume, run now or delete; only the owner and admins may. */
  act(jobId: string, op: JobOp, by: string): Promise<{ ok: boolean; message: string }>;
  /** Make a chat the home chat of `by`: their notifications go there. */
  setHome(by: string, address: FullChatRef): Promise<void>;
}

/** What happened to a submitted message. */
export type SubmitResult =
  | { status: 'queued'; conversationId: string }
  | { status: 'duplicate' }
  | { status: 'answered_question'; conversationId: string; questionId: string }
  | { status: 'note_recorded'; conversationId: string; approvalId: string }
  | { status: 'pairing_required'; code: string; expiresAt: number; isNew: boolean }
  /**
   * Dropped by the flood limit. `notify` is true for the first refusal of the window only: one
   * notice covers every message dropped until `retryAfterMs` has passed (a notice per message
   * would answer a flood with a flood).
   */
  | { status: 'rate_limited'; notify: boolean; retryAfterMs: number };

/** Outcome of a decision on an approval. */
export type DecideResult = { ok: true; approval: Approval } | { ok: false; reason: RefusalReason; approval?: Approval };

/** Outcome of an answer to a question. */
export type AnswerResult = { ok: true; question: Question } | { ok: false; reason: RefusalReason; question?: Question };

/**
 * The platform message a card's button was tapped on: the chat it is in and its reference as the
 * channel's surface names it (Telegram `<chat id>:<message id>`, a Slack `ts`). A card can show
 * in a message its ledger row does not hold (a post a crash left unanswered, sent again): the tap
 * makes that message known, so it is brought to the card's outcome like the others.
 */
export interface TappedCard {
  chat: ChatRef;
  ref: string;
}

/** How a tap came (`core.act(action, by, tap)`), besides who tapped what. */
export interface Tap {
  /** The message the button was on (see {@link TappedCard}). */
  tapped?: TappedCard;
  /**
   * The tapped message is one the ledger showed in its chat (a `/jobs` list said there, not one
   * shown to the tapper alone): after a job action the core redraws it through the ledger.
   */
  redraw?: boolean;
  /** The tapping person's display name as the platform gives it with the tap; remembered by the core. */
  byName?: string;
  /** How a channel names a principal in a sentence (a Slack mention); default: the core's name directory. */
  nameOf?: (principal: string) => string | Promise<string>;
  /**
   * Refuse (as `unknown`) unless the card belongs to the active conversation of this chat (the
   * terminal sessions, which take card ids as typed, not from a message of theirs).
   */
  within?: ChatRef;
}

/** A user's decision on an approval card. */
export interface DecisionInput {
  id: string;
  decision: 'approve' | 'deny';
  /** For approvals; defaults to `once`. */
  scope?: 'once' | 'session' | 'always';
  /** `channel:userId` of whoever tapped. */
  by: string;
  /** Text passed to the model with a denial. */
  note?: string | null;
  /** Deny, but wait for the requester's next message as the note (or a `no_note` tap). */
  awaitNote?: boolean;
  /** Refuse (as `unknown`) unless the approval belongs to this conversation (terminal sessions). */
  within?: ChatRef /** The message the button was tapped on, when the decision came from a tap. */;
  tapped?: TappedCard;
}

/** An answer to a question. */
export interface AnswerInput {
  id: string;
  text: string;
  /** `channel:userId` of whoever answered. */
  by: string;
  /** Refuse (as `unknown`) unless the question belongs to this conversation (terminal sessions). */
  within?: ChatRef /** The message the button was tapped on, when the answer came from a tap. */;
  tapped?: TappedCard;
}

/** What `/status` shows. */
export interface ConversationStatus {
  conversationId: string | null;
  model: string;
  turn: 'idle' | 'running' | 'waiting';
  pendingApprovals: number;
  pendingQuestions: number;
  queued: number;
  /** Terminal channels only: other conversations with approvals or questions waiting (by name). */
  pendingElsewhere?: string[];
}

/** What became of an admin's approval of a pairing code: the paired user, or why not. */
export type PairingOutcome = { ok: true; channel: string; userId: string } | { ok: false; reason: string };

/** How people are named in sentences (cards, action outcomes), the same on every channel. */
export interface PeopleNames {
  /**
   * How to name a principal (`channel:userId`): the name it last came with (see {@link remember}),
   * else its raw user id; `'someone'` for nobody. Answers from memory (for drawing cards); a name
   * this process does not hold yet is looked up in the store in the background, so a later call
   * knows it.
   */
  nameOf(principal: string | null | undefined): string;
  /** As {@link nameOf}, asking the store for a name this process does not hold (another instance learned it). */
  lookup(principal: string | null | undefined): Promise<string>;
  /**
   * Remember a principal's display name (kept in the store for every instance). Every message
   * through `receive` is remembered with its `userName` already; a channel calls this
   * for a name it learns otherwise (a tap, a message that does not address the bot). Never throws.
   */
  remember(principal: string, name: string | null | undefined): Promise<void>;
}

/** Small values a channel remembers per chat across restarts (see `core/memo.ts`). */
export interface Memo {
  /** The value saved under `key`, if any. */
  get(key: string): Promise<string | undefined>;
  /** Remember `value` under `key` (saved in the background). */
  set(key: string, value: string): void;
}

/** What the conversation commands (`/stop`, `/new`, `/status`, `/compact`, `/usage`, `/model`) do. */
export interface ConversationControls {
  /** Cancel the running turn, reject pending approvals, clear the queue. True when something stopped. */
  stop(ref: ChatRef, by: string): Promise<boolean>;
  /** Archive the active conversation so the next message starts afresh. */
  newConversation(ref: ChatRef, by: string): Promise<void>;
  /** Model, turn state, pending approvals and queue length. */
  status(ref: ChatRef): Promise<ConversationStatus>;
  /** Fold the chat's earlier turns into its summary now; one line to show. */
  compact(ref: ChatRef, by: string): Promise<string>;
  /** The tokens `by` used today and this month (UTC); a short text to show. */
  usage(by: string): Promise<string>;
  /** Set (or with null, reset) the model of a conversation; the model now in use. */
  setModel(ref: ChatRef, model: string | null): Promise<string>;
}
