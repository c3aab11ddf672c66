/**
 * Builds what the model sees from the conversation log, within a token budget: the oldest turns
 * are dropped first, and an assistant message is never separated from its tool results.
 */
import type { Message } from '../store/schema.js';
import { type ChatMessage, type ModelToolCall, wireIdOf } from './llm.js';

/** Rough token estimate (≈ 4 characters a token plus per-message overhead); no tokenizer needed. */
export function estimateTokens(text: string | null | undefined): number {
  return Math.ceil((text?.length ?? 0) / 4) + 4;
}

interface Block {
  turnId: string | null;
  messages: ChatMessage[];
  tokens: number;
}

function parseToolCalls(json: string | null): ModelToolCall[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json) as ModelToolCall[];
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** Group the log into blocks: a user message, or an assistant message with all its tool results. */
function toBlocks(log: Message[]): Block[] {
  const blocks: Block[] = [];
  const results = new Map<string, Message>();
  for (const m of log) if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m);
  for (const m of log) {
    if (m.role === 'user') {
      blocks.push({ turnId: m.turn_id, messages: [{ role: 'user', content: m.content ?? '' }], tokens: estimateTokens(m.content) });
    } else if (m.role === 'assistant') {
      const calls = parseToolCalls(m.tool_calls);
      const msgs: ChatMessage[] = [{ role: 'assistant', content: m.content, ...(calls.length ? { toolCalls: calls } : {}) }];
      let tokens = estimateTokens(m.content) + estimateTokens(m.tool_calls);
      for (const c of calls) {
        // A call without a recorded result (an old crash) still needs one, or the endpoint rejects the history.
        const content = results.get(c.id)?.content ?? '(no result was recorded for this call)';
        msgs.push({ role: 'tool', toolCallId: wireIdOf(c), content });
        tokens += estimateTokens(content);
      }
      blocks.push({ turnId: m.turn_id, messages: msgs, tokens });
    } else if (m.role === 'system') {
      blocks.push({ turnId: m.turn_id, messages: [{ role: 'system', content: m.content ?? '' }], tokens: estimateTokens(m.content) });
    }
  }
  return blocks;
}

/**
 * Messages for the model: the system prompt, then as many recent turns as fit in `budget` tokens.
 * The current turn is always kept; when it alone is too large its oldest blocks go first, but its
 * last block always stays.
 */
export function buildHistory(log: Message[], systemPrompt: string, budget: number, currentTurnId: string | null): ChatMessage[] {
  const blocks = toBlocks(log);
  let remaining = budget - estimateTokens(systemPrompt);
  const kept: Block[] = [];
  // Walk newest to oldest, keeping whole turns while they fit.
  let i = blocks.length - 1;
  while (i >= 0) {
    const turnId = blocks[i]?.turnId ?? null;
    let j = i;
    let turnTokens = 0;
    while (j >= 0 && (blocks[j]?.turnId ?? null) === turnId) {
      turnTokens += blocks[j]?.tokens ?? 0;
      j--;
    }
    const turnBlocks = blocks.slice(j + 1, i + 1);
    if (turnTokens <= remaining) {
      kept.unshift(...turnBlocks);
      remaining -= turnTokens;
    } else if (kept.length === 0 || turnId === currentTurnId) {
      // The newest (current) turn: keep its newest blocks that fit, at least the last one.
      const partial: Block[] = [];
      for (let k = turnBlocks.length - 1; k >= 0; k--) {
        const b = turnBlocks[k] as Block;
        if (partial.length > 0 && b.tokens > remaining) break;
        partial.unshift(b);
        remaining -= b.tokens;
      }
      kept.unshift(...partial);
      break;
    } else {
      break;
    }
    i = j;
  }
  // Never start with orphan tool results or an assistant reply without the question before it.
  while (kept.length > 1 && kept[0]?.messages[0]?.role === 'assistant') kept.shift();
  return [{ role: 'system', content: systemPrompt }, ...kept.flatMap((b) => b.messages)];
}
