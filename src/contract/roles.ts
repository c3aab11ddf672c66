/**
 * Role interfaces: what each kind of caller needs from the core, and no more. The core builds one
 * object per role (see `core/roles.ts`) and hands it to the code of that role, so a chat command
 * or a button's action cannot reach the rest of the core. A channel's own role is
 * `CoreApi` (see `contract/core.ts`): it runs commands and actions through
 * `core.command(...)` and `core.act(...)` and never imports them.
 */
import type { ApprovalRule, Question } from '../store/schema.js';
import type { ReceivedMessage } from './chat.js';
import type {
  AnswerInput,
  AnswerResult,
  ConversationControls,
  DecideResult,
  DecisionInput,
  JobControls,
  PeopleNames,
  SourceStatus,
  SubmitResult,
} from './core.js';

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
  /** Decide an approval (approve, deny awaiting a note, deny with or without one); only the requester and admins may. */
  decide(input: DecisionInput): Promise<DecideResult>;
  /** A question row: a suggested answer is read from it by its position. */
  question(id: string): Promise<Question | undefined>;
  /** Answer a question. */
  answer(input: AnswerInput): Promise<AnswerResult>;
  /** Whether a principal is an admin now (pairing buttons are theirs). */
  isAdmin(principal: string): Promise<boolean>;
  /** Approve a pairing code; the paired user or a reason. */
  approvePairing(
    code: string,
    by: string,
  ): Promise<{ ok: true; channel: string; userId: string } | { ok: false; reason: string }>;
  /** Scheduled jobs; absent when the core runs without the job service. */
  readonly jobs?: JobControls;
}
