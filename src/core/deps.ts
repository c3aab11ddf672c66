/** What the engine's parts share; built once by {@link Core}. */
import type { Logger } from 'pino';
import type { Channel } from '../contract/channel.js';
import type { OutboundFile } from '../contract/chat.js';
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import type { Conversation } from '../store/schema.js';
import type { PathPolicy } from '../tools/path-policy.js';
import type { PromptSection } from '../tools/types.js';
import type { CoreEvent } from '../contract/events.js';
import type { LlmClient } from './llm.js';
import type { LatencyClock } from './latency.js';
import type { CoreMetrics } from '../metrics.js';
import type { ToolRegistry } from './tool-registry.js';

/** Shared services of the engine. */
export interface EngineDeps {
  db: Db;
  config: Config;
  log: Logger;
  llm: LlmClient;
  registry: ToolRegistry;
  paths: PathPolicy;
  metrics: CoreMetrics;
  /** Times each message's stages for the latency histogram. */
  latency: LatencyClock;
  promptSections: PromptSection[];
  /** Queue an event for the conversation's channel (in order, never blocking the turn). */
  emit(conversationId: string, event: CoreEvent): void;
  /** A conversation row (cached; conversations change rarely). */
  conversation(id: string): Promise<Conversation | undefined>;
  /** The conversation a conversation's messages appear in: itself, or a sub-agent's root chat. */
  chatOf(conversation: Conversation): Promise<Conversation>;
  /** The channel serving a conversation in this process, if any (a sub-agent: where its root chat is served). */
  channelFor(conversation: Conversation): Promise<Channel | undefined>;
  /** Schedule the conversation's runner (idempotent). */
  wake(conversationId: string): void;
  /** Show what the ledger holds for a conversation now (rows written without an event to start their delivery). */
  deliver(conversationId: string): void;
  /** Send a tool's file through the presenter (a surface's ledger, or an event surface). */
  sendFile(conversation: Conversation, callId: string, file: OutboundFile): Promise<void>;
  /** True for principals with admin powers (exempt from `access.daily_tokens_per_user`). */
  isAdmin(principal: string): Promise<boolean>;
  /** True for the local operator's channels (terminal, JSONL): admin powers without a grant. */
  isLocal(channel: string): boolean;
  /** True once shutdown began: no new model rounds start. */
  isClosing(): boolean;
  /** This process's holder id (named on questions a running tool waits for). */
  holder: string;
}
