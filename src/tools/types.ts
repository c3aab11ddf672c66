/**
 * The one tool shape shared by built-ins, plugins and (later) MCP tools.
 * A tool is data plus an `execute`; the engine owns parsing, approval, status and audit.
 */
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import type { PathPolicy } from './path-policy.js';

/** What a tool touches; drives defaults and the status line. */
export type ToolCategory = 'read' | 'write' | 'exec' | 'network' | 'memory' | 'interaction' | 'channel' | 'misc';

import type { ChannelCapability } from '../contract/channel.js';
import type { OutboundFile } from '../contract/chat.js';

/** A file a tool sends: one in the workspace (by path), or bytes the tool made (a voice note). */
export type FileToSend =
  | (Omit<OutboundFile, 'snapshot'> & { bytes?: undefined })
  | { bytes: Buffer; name: string; caption?: string; kind: OutboundFile['kind'] };

/** Static facts about a tool. */
export interface ToolMeta {
  category: ToolCategory;
  /** Approval when no rule matches: `allow` runs at once, `require` asks. */
  defaultApproval: 'allow' | 'require';
  /** Parameter that a bare-string argument maps to (`bash("ls")` → `{command:"ls"}`). */
  primaryKey?: string;
  /** Offered to sub-agents (later `task`/`plan`). */
  subAgent?: boolean;
  /** Channel capabilities this tool needs. */
  requires?: ChannelCapability[];
  /** Where the tool comes from: `builtin`, `plugin:<name>`, `mcp:<server>`. */
  source?: string;
  /** Hidden from the model until `activate_tools` grants this group in the conversation. */
  lazyGroup?: string;
  /** Shown on approval cards (MCP `readOnlyHint`); informational, never bypasses rules. */
  readOnlyHint?: boolean;
  /**
   * The arguments an "always" / "this session" grant of a call without a path is scoped to,
   * exactly as shown: every one that changes what runs or where (bash: `command`, `workdir`,
   * `background`); unset: all of them.
   */
  grantArgs?: string[];
  /** What an absent argument of {@link grantArgs} means, so a grant covers it either way (bash: workdir `.`). */
  grantArgDefaults?: Record<string, unknown>;
  /**
   * The arguments grants recorded before grant version 2 are scoped to (bash: `command` alone),
   * so such a grant keeps its reach; unset: {@link grantArgs}.
   */
  legacyGrantArgs?: string[];
}

/** Two labels for the UI: ≤ 60 characters (status lines) and ≤ 120 (cards). */
export interface ToolLabel {
  short: string;
  long: string;
}

/** What a finished tool returns. `output` is what the model sees. */
export interface ToolResult {
  output: string;
  /** One line for the chat status (defaults to the first line of output). */
  summary?: string;
  /** `failed` marks an error result; the model still sees `output`. */
  status?: 'done' | 'failed';
}

/** Everything a running tool may use. */
export interface ToolContext {
  conversationId: string;
  /** The tool call id (stable across a restart). */
  callId: string;
  /** `channel:userId` of the user whose message started the turn (a job's run: the job's owner). */
  requester: string;
  /**
   * Whether the requester has admin powers now (an admin, or the local operator), read at each
   * call: who may change what everyone shares (the shared memory).
   */
  requesterIsAdmin(): Promise<boolean>;
  channel: string;
  /** Fires when the turn is stopped or the process shuts down. */
  signal: AbortSignal;
  db: Db;
  config: Config;
  paths: PathPolicy;
  log: Logger;
  /** Stream a chunk of output to the chat (`tool_output` event). */
  emitOutput(text: string): void;
  /** Write an audit record (`file_write`, `shell_exec`, ...). */
  audit(kind: string, data: Record<string, unknown>): Promise<void>;
  /**
   * Send a file into the conversation; present only where the channel can. A copy is taken at
   * once (a workspace file through the confined primitive) and only the copy is sent, so a later
   * change to the workspace changes nothing sent. Throws on failure (a refused path included).
   */
  sendFile?(file: FileToSend): Promise<void>;
  /** Ask the configured model a one-off question (used by `web_fetch {question}`). */
  complete(prompt: string, signal: AbortSignal): Promise<string>;
  /**
   * Synthesise speech (opus) through the OpenAI-compatible speech endpoint.
   * @throws SwitchboardError `voice_disabled` when `audio.speech_enabled` is false.
   */
  speak(text: string, signal: AbortSignal): Promise<Buffer>;
  /**
   * Ask the user and wait (MCP elicitation, a sampling approval). Only the turn's requester or an
   * admin may answer; stop, shutdown and the timeout end the wait. Absent where no one can answer.
   */
  ask?(input: AskInput, signal: AbortSignal): Promise<AskOutcome>;
  /** Ask the model with a full message list (MCP sampling): the model's text, its name and why it stopped. */
  sample?(request: SampleRequest, signal: AbortSignal): Promise<SampleResult>;
}

/** A one-off model request of a tool (MCP sampling). */
export interface SampleRequest {
  system?: string;
  messages: Array<{ role: 'user' | 'assistant'; text: string }>;
  maxTokens: number;
  temperature?: number;
  /** Model to use; unset: the conversation's model. */
  model?: string;
}

/** The model's answer to a {@link SampleRequest}. */
export interface SampleResult {
  text: string;
  model: string;
  stopReason: 'endTurn' | 'maxTokens' | 'stopSequence' | string;
}

/** A question a running tool puts to the user (shown as a card in the conversation). */
export interface AskInput {
  question: string;
  /** Suggested answers, one button each; the user may also reply with text. */
  answers: string[];
  /** After this long without an answer the card is cancelled and the outcome is `timeout`. */
  timeoutMs: number;
}

/** How a tool's question ended. */
export type AskOutcome = { kind: 'answered'; answer: string; by: string } | { kind: 'cancelled' } | { kind: 'timeout' };

/** Result of argument validation. */
export type ParseResult<A> = { ok: true; value: A } | { ok: false; error: string };

/** A tool. `A` is the validated argument type. */
export interface Tool<A = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema (object) sent to the model. */
  parameters: Record<string, unknown>;
  meta: ToolMeta;
  /** Validate already-decoded arguments against the schema. */
  parse(args: unknown): ParseResult<A>;
  /** Labels such as `bash git status` or `edit_file src/a.ts`. */
  describe(args: A): ToolLabel;
  /** The path the call acts on, for path-scoped approval rules. */
  targetPath?(args: A): string | undefined;
  /**
   * The arguments as an approval card shows them: all of them (the command, every line of a diff,
   * the whole content), never cut — the card shows what fits and sends the rest as a file.
   */
  preview?(args: A): string;
  execute(args: A, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool whose argument type is erased, as stored in the registry. */
// biome-ignore lint/suspicious/noExplicitAny: registry holds tools of every argument type
export type AnyTool = Tool<any>;

/** Input to {@link defineTool}: a zod schema instead of `parameters` + `parse`. */
export interface ToolSpec<S extends z.ZodType> {
  name: string;
  description: string;
  schema: S;
  meta: ToolMeta;
  describe(args: z.infer<S>): ToolLabel | string;
  targetPath?(args: z.infer<S>): string | undefined;
  preview?(args: z.infer<S>): string;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult | string>;
}

/**
 * A section added to the system prompt each round (saved memories, the scratchpad). `requester`
 * is the person the turn acts for (`channel:userId`). Returns null when it has nothing to say for
 * this conversation.
 */
export type PromptSection = (ctx: {
  db: Db;
  conversationId: string;
  requester: string;
  config: Config;
}) => Promise<string | null>;
