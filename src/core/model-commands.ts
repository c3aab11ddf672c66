/** The chat commands of the model side: `/compact` (summarise now) and `/usage` (tokens used). */
import type { Config } from '../config.js';
import type { ChatRef } from '../contract/chat.js';
import type { Db } from '../store/db.js';
import * as convRepo from '../store/repos/conversations.js';
import { activeTurn } from '../store/repos/turns.js';
import type { Compactor } from './compaction.js';
import { keyOf } from './conversation-ops.js';
import { counterFor } from './tokens.js';
import { usageText } from './usage.js';

/** What the two commands need of the core. */
export interface ModelCommandDeps {
  db: Db;
  config: Config;
  compactor: Compactor;
  /** Deliver a conversation's open ledger rows now (the notice of a summary made between turns). */
  deliver(conversationId: string): void;
}

/**
 * `/compact`: fold every turn of the chat's conversation but the newest into its summary now.
 * Refused while a turn runs (its rounds may be folding already); the answer is one line.
 */
export async function compactChat(deps: ModelCommandDeps, ref: ChatRef, by: string): Promise<string> {
  const { db, config, compactor } = deps;
  const conv = await convRepo.findActiveConversation(db, keyOf(ref));
  if (!conv) return 'Nothing to summarise yet.';
  if (await activeTurn(db, conv.id)) return 'A turn is under way; send /compact once it is done.';
  const model = conv.model ?? config.llm.model;
  const count = await counterFor(config, model);
  const outcome = await compactor.compact(
    { conversationId: conv.id, requester: by, model, currentTurnId: null },
    config.llm.system_prompt,
    count,
    AbortSignal.timeout(config.llm.request_timeout_seconds * 1000 * 4),
  );
  if (outcome.kind === 'summarised') deps.deliver(conv.id);
  if (outcome.kind === 'summarised')
    return `Summarised ${outcome.turns} earlier turn${outcome.turns === 1 ? '' : 's'}; the model sees the summary from now on.`;
  if (outcome.kind === 'nothing') return 'Nothing to summarise yet: the conversation has only its newest turn.';
  return `Summarising failed: ${outcome.reason}. Nothing was changed.`;
}

/** `/usage`: the user's tokens today and this month. */
export function usageOf(deps: Pick<ModelCommandDeps, 'db' | 'config'>, by: string): Promise<string> {
  return usageText(deps.db, deps.config, by);
}
