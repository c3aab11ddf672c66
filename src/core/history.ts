/**
 * Builds what the model sees from the conversation log, within a token budget. Messages are
 * grouped into blocks (a user message, or an assistant message with all its tool results, so a
 * call is never separated from its result) and blocks into turns. What does not fit is folded into
 * a summary first (`compaction.ts`); what still does not fit is left out, oldest turns first.
 */
import type { Message } from '../store/schema.js';
import { type ChatMessage, type ModelToolCall, wireIdOf } from './llm.js';
import { estimateCounter, MESSAGE_OVERHEAD, type TokenCounter } from './tokens.js';

/** Rough token estimate (≈ 4 characters a token plus per-message overhead); no tokenizer needed. */
export function estimateTokens(text: string | null | undefined): number {
  return Math.ceil((text?.length ?? 0) / 4) + 4;
}

/** Counts per counter and message row: rows are shared and immutable, so each is counted once. */
const counted = new WeakMap<TokenCounter, WeakMap<Message, number>>();

/** Tokens of one log row (its text, its tool calls, the per-message overhead), cached per row. */
export function messageTokens(m: Message, count: TokenCounter = estimateCounter): number {
  let cache = counted.get(count);
  if (!cache) {
    cache = new WeakMap();
    counted.set(count, cache);
  }
  let n = cache.get(m);
  if (n === undefined) {
    n = count(m.content ?? '') + (m.tool_calls ? count(m.tool_calls) : 0) + MESSAGE_OVERHEAD;
    cache.set(m, n);
  }
  return n;
}

/** A user message, or an assistant message with its tool results. */
export interface Block {
  turnId: string | null;
  messages: ChatMessage[];
  tokens: number;
  /** The log rows it was made of (first and last id). */
  firstId: number;
  lastId: number;
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

const NO_RESULT = '(no result was recorded for this call)';

/**
 * Blocks of rows that make a block on their own (a user or system message, an assistant message
 * without tool calls), per counter and row: rows are shared and immutable, and every model round
 * groups the whole window again, so each such block is made once. Shared: read only (frozen).
 */
const singles = new WeakMap<TokenCounter, WeakMap<Message, Block>>();

function singleBlock(m: Message, count: TokenCounter): Block {
  let cache = singles.get(count);
  if (!cache) {
    cache = new WeakMap();
    singles.set(count, cache);
  }
  let block = cache.get(m);
  if (!block) {
    const message: ChatMessage =
      m.role === 'assistant'
        ? { role: 'assistant', content: m.content }
        : { role: m.role as 'user' | 'system', content: m.content ?? '' };
    block = Object.freeze({
      turnId: m.turn_id,
      messages: Object.freeze([Object.freeze(message)]) as ChatMessage[],
      tokens: messageTokens(m, count),
      firstId: m.id,
      lastId: m.id,
    });
    cache.set(m, block);
  }
  return block;
}

/** Group the log into blocks: a user message, or an assistant message with all its tool results. */
export function toBlocks(log: Message[], count: TokenCounter = estimateCounter): Block[] {
  const blocks: Block[] = [];
  const results = new Map<string, Message>();
  for (const m of log) if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m);
  for (const m of log) {
    if (m.role === 'user' || m.role === 'system' || (m.role === 'assistant' && !m.tool_calls)) {
      blocks.push(singleBlock(m, count));
    } else if (m.role === 'assistant') {
      const calls = parseToolCalls(m.tool_calls);
      const msgs: ChatMessage[] = [
        { role: 'assistant', content: m.content, ...(calls.length ? { toolCalls: calls } : {}) },
      ];
      let tokens = messageTokens(m, count);
      let lastId = m.id;
      for (const c of calls) {
        // A call without a recorded result (an old crash) still needs one, or the endpoint rejects the history.
        const result = results.get(c.id);
        msgs.push({ role: 'tool', toolCallId: wireIdOf(c), content: result?.content ?? NO_RESULT });
        tokens += result ? messageTokens(result, count) : count(NO_RESULT) + MESSAGE_OVERHEAD;
        if (result && result.id > lastId) lastId = result.id;
      }
      blocks.push({ turnId: m.turn_id, messages: msgs, tokens, firstId: m.id, lastId });
    }
  }
  return blocks;
}

/** Blocks grouped by turn, oldest first (a turn's blocks are contiguous in the log). */
export function toTurns(blocks: Block[]): Block[][] {
  const turns: Block[][] = [];
  for (const b of blocks) {
    const last = turns.at(-1);
    if (last && (last[0]?.turnId ?? null) === b.turnId && b.turnId !== null) last.push(b);
    else turns.push([b]);
  }
  return turns;
}

/**
 * Messages for the model: the system prompt, then as many recent turns as fit in `budget` tokens.
 * The current turn is always kept; when it alone is too large its oldest blocks go first, but its
 * last block always stays.
 */
export function buildHistory(
  log: Message[],
  systemPrompt: string,
  budget: number,
  currentTurnId: string | null,
  count: TokenCounter = estimateCounter,
): ChatMessage[] {
  return historyFromBlocks(toBlocks(log, count), systemPrompt, budget, currentTurnId, count);
}

/** {@link buildHistory} over blocks already made. */
export function historyFromBlocks(
  blocks: Block[],
  systemPrompt: string,
  budget: number,
  currentTurnId: string | null,
  count: TokenCounter = estimateCounter,
): ChatMessage[] {
  let remaining = budget - count(systemPrompt) - MESSAGE_OVERHEAD;
  // What is kept is always the newest blocks: blocks[start..], found walking newest to oldest,
  // keeping whole turns while they fit.
  let start = blocks.length;
  let i = blocks.length - 1;
  while (i >= 0) {
    const turnId = blocks[i]?.turnId ?? null;
    let j = i;
    let turnTokens = 0;
    while (j >= 0 && (blocks[j]?.turnId ?? null) === turnId) {
      turnTokens += blocks[j]?.tokens ?? 0;
      j--;
    }
    if (turnTokens <= remaining) {
      start = j + 1;
      remaining -= turnTokens;
    } else if (start === blocks.length || turnId === currentTurnId) {
      // The newest (current) turn: keep its newest blocks that fit, at least the last one.
      for (let k = i; k > j; k--) {
        const b = blocks[k] as Block;
        if (k < i && b.tokens > remaining) break;
        start = k;
        remaining -= b.tokens;
      }
      break;
    } else {
      break;
    }
    i = j;
  }
  // Never start with orphan tool results or an assistant reply without the question before it.
  while (blocks.length - start > 1 && blocks[start]?.messages[0]?.role === 'assistant') start++;
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  for (let k = start; k < blocks.length; k++) for (const m of (blocks[k] as Block).messages) messages.push(m);
  return messages;
}
