/**
 * Long conversations: when the history would pass `llm.context_tokens`, the oldest whole turns are
 * folded into a summary the model writes (a separate request with its own short prompt). The
 * summary is one row (`summaries`) that stands for every message up to its `upto_message_id` in
 * what the model sees; the log keeps everything. Until that row commits, the old turns stay in use,
 * so a crash mid-summary loses nothing. The current turn (and with it any pending approval or
 * question) is never folded, and turns are folded whole, so a tool call keeps its result.
 * A history larger than the window is summarised in chunks; a single message too large for a
 * chunk is cut to a marked excerpt first. An empty or failed summary is reported, never stored.
 */
import { errorMessage } from '../errors.js';
import { enqueueError, enqueueNotice } from '../delivery/ledger.js';
import { insertSummary, latestSummary, messagesBetween } from '../store/repos/summaries.js';
import { hotCache } from '../store/hot-cache.js';
import { recordUsage } from '../store/repos/usage.js';
import type { Message } from '../store/schema.js';
import type { EngineDeps } from './deps.js';
import { type Block, historyFromBlocks, toBlocks, toTurns } from './history.js';
import type { ChatMessage } from './llm.js';
import { MESSAGE_OVERHEAD, type TokenCounter } from './tokens.js';

/** The notice the chat gets when older messages were folded into a summary. */
export const SUMMARISED_NOTICE = 'Earlier messages summarised';

/** The summariser's own short prompt. */
export const SUMMARY_PROMPT =
  'You keep the running summary of a conversation between a user and an assistant that uses tools. ' +
  'Merge the previous summary (if any) with the new messages into one summary. Keep every fact, name, number, ' +
  'decision, file path, preference and open task; drop greetings and filler. Plain text or short bullet points. ' +
  'Reply with the summary only.';

/** After folding, the kept turns take at most this share of the budget (room to grow before the next fold). */
const KEEP_SHARE = 0.5;
/** A summary request's input takes at most this share of the budget. */
const CHUNK_SHARE = 0.6;
/** After a failed summary, wait this long before trying again for the same conversation. */
const RETRY_AFTER_MS = 60_000;

/** What a summary pass did. */
export type CompactOutcome =
  | { kind: 'summarised'; turns: number; chunks: number }
  | { kind: 'nothing'; reason: string }
  | { kind: 'failed'; reason: string };

/** Who pays for the summary request and where the notice goes. */
export interface CompactTarget {
  conversationId: string;
  /** `channel:userId` the summary's tokens count against. */
  requester: string;
  model: string;
  /** The turn being answered: never folded (null for `/compact` between turns). */
  currentTurnId: string | null;
}

/** Text of one message for the summariser. */
function renderMessage(m: Message): string {
  if (m.role === 'user') return `[user] ${m.content ?? ''}`;
  if (m.role === 'tool') return `[tool result] ${m.content ?? ''}`;
  if (m.role === 'system') return `[note] ${m.content ?? ''}`;
  let calls = '';
  if (m.tool_calls) {
    try {
      const parsed = JSON.parse(m.tool_calls) as Array<{ name: string; arguments: string }>;
      calls = parsed.map((c) => ` [called ${c.name} ${c.arguments}]`).join('');
    } catch {
      calls = ' [tool calls]';
    }
  }
  return `[assistant] ${m.content ?? ''}${calls}`;
}

/** A text cut to about `limit` tokens: its head and tail around a marker saying how much was cut. */
export function excerpt(text: string, limit: number, count: TokenCounter): string {
  if (count(text) <= limit) return text;
  let keep = Math.max(40, Math.floor(limit * 2));
  for (;;) {
    const cut = text.length - 2 * keep;
    const out = `${text.slice(0, keep)}\n[… ${cut} characters cut from this message …]\n${text.slice(-keep)}`;
    if (count(out) <= limit || keep <= 40) return out;
    keep = Math.floor(keep * 0.7);
  }
}

/** Lines packed into chunks of at most `limit` tokens each (a line over the limit is cut first). */
export function chunkLines(lines: string[], limit: number, count: TokenCounter): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let used = 0;
  for (const raw of lines) {
    const line = excerpt(raw, limit, count);
    const n = count(line) + 1;
    if (used + n > limit && current.length) {
      chunks.push(current.join('\n'));
      current = [];
      used = 0;
    }
    current.push(line);
    used += n;
  }
  if (current.length) chunks.push(current.join('\n'));
  return chunks;
}

/** Folds old turns into summaries and builds each round's history around the newest summary. */
export class Compactor {
  private readonly failedAt = new Map<string, number>();
  private readonly running = new Map<string, Promise<CompactOutcome>>();

  constructor(private readonly deps: EngineDeps) {}

  /** The system prompt with a summary appended (the summary changes only when a fold happens). */
  static withSummary(system: string, summary: string | undefined): string {
    return summary
      ? `${system}\n\nSummary of the earlier conversation (older messages are not shown):\n${summary}`
      : system;
  }

  /**
   * The messages of a model round: the system prompt (with the newest summary), then the turns
   * after it. When they would pass the budget, the oldest turns are summarised first.
   */
  async history(
    target: CompactTarget,
    log: Message[],
    system: string,
    count: TokenCounter,
    signal: AbortSignal,
  ): Promise<ChatMessage[]> {
    const { db, config } = this.deps;
    const budget = config.llm.context_tokens;
    let summary = await hotCache(db).latestSummary(target.conversationId);
    let blocks = toBlocks(after(log, summary?.upto), count);
    const fixed = count(Compactor.withSummary(system, summary?.content)) + MESSAGE_OVERHEAD;
    const total = fixed + blocks.reduce((a, b) => a + b.tokens, 0);
    if (total > budget && config.llm.compaction && !this.recentlyFailed(target.conversationId)) {
      const outcome = await this.fold(target, blocks, system, count, signal, false);
      if (outcome.kind === 'summarised') {
        summary = await hotCache(db).latestSummary(target.conversationId);
        blocks = toBlocks(after(log, summary?.upto), count);
      }
    }
    return historyFromBlocks(
      blocks,
      Compactor.withSummary(system, summary?.content),
      budget,
      target.currentTurnId,
      count,
    );
  }

  /** `/compact`: fold every turn but the newest into the summary now. */
  async compact(
    target: CompactTarget,
    system: string,
    count: TokenCounter,
    signal: AbortSignal,
  ): Promise<CompactOutcome> {
    const { db } = this.deps;
    const summary = await latestSummary(db, target.conversationId);
    const log = await messagesBetween(db, target.conversationId, summary?.upto ?? 0, Number.MAX_SAFE_INTEGER);
    return this.fold(target, toBlocks(log, count), system, count, signal, true);
  }

  private recentlyFailed(conversationId: string): boolean {
    const at = this.failedAt.get(conversationId);
    return at !== undefined && Date.now() - at < RETRY_AFTER_MS;
  }

  /** One fold at a time per conversation (a `/compact` and a round may meet). */
  private fold(
    target: CompactTarget,
    blocks: Block[],
    system: string,
    count: TokenCounter,
    signal: AbortSignal,
    force: boolean,
  ): Promise<CompactOutcome> {
    const busy = this.running.get(target.conversationId);
    if (busy) return busy;
    const run = this.foldNow(target, blocks, system, count, signal, force).finally(() =>
      this.running.delete(target.conversationId),
    );
    this.running.set(target.conversationId, run);
    return run;
  }

  private async foldNow(
    target: CompactTarget,
    blocks: Block[],
    system: string,
    count: TokenCounter,
    signal: AbortSignal,
    force: boolean,
  ): Promise<CompactOutcome> {
    const { db, config, log } = this.deps;
    const budget = config.llm.context_tokens;
    const turns = toTurns(blocks).filter((t) => t.length > 0);
    // Keep the newest turns that fit in the kept share (always the current and the newest turn).
    const keepBudget = Math.floor(budget * KEEP_SHARE) - count(system);
    let keepFrom = turns.length;
    let used = 0;
    for (let i = turns.length - 1; i >= 0; i--) {
      const turn = turns[i] as Block[];
      const tokens = turn.reduce((a, b) => a + b.tokens, 0);
      const isCurrent = target.currentTurnId !== null && turn[0]?.turnId === target.currentTurnId;
      const newest = i === turns.length - 1;
      if (isCurrent || newest || (!force && used + tokens <= keepBudget)) {
        used += tokens;
        keepFrom = i;
        continue;
      }
      break;
    }
    const folded = turns.slice(0, keepFrom);
    if (folded.length === 0) return { kind: 'nothing', reason: 'nothing older than the newest turn to summarise' };
    const firstKept = turns[keepFrom]?.[0]?.firstId ?? Number.MAX_SAFE_INTEGER;
    const previous = await latestSummary(db, target.conversationId);
    // From the store, not the in-memory window: the window may not reach back to the last summary.
    const rows = await messagesBetween(db, target.conversationId, previous?.upto ?? 0, firstKept);
    const upto = rows.at(-1)?.id;
    if (upto === undefined) return { kind: 'nothing', reason: 'nothing to summarise' };
    const promptTokens = count(SUMMARY_PROMPT) + 2 * MESSAGE_OVERHEAD;
    let summary = previous?.content ?? '';
    let chunks = 0;
    try {
      const limit = Math.max(64, Math.floor(budget * CHUNK_SHARE) - promptTokens - count(summary));
      for (const chunk of chunkLines(rows.map(renderMessage), limit, count)) {
        const input = `${summary ? `Previous summary:\n${summary}\n\n` : ''}New messages:\n${chunk}`;
        const r = await this.deps.llm.answer(SUMMARY_PROMPT, input, target.model, signal);
        await recordUsage(db, {
          conversation_id: target.conversationId,
          turn_id: target.currentTurnId,
          requester_id: target.requester,
          model: target.model,
          kind: 'summary',
          prompt_tokens: r.usage.prompt,
          completion_tokens: r.usage.completion,
        });
        this.deps.metrics.tokens.inc({ kind: 'prompt', model: target.model }, r.usage.prompt);
        this.deps.metrics.tokens.inc({ kind: 'completion', model: target.model }, r.usage.completion);
        const text = r.content.trim();
        if (!text) throw new Error('the model returned an empty summary');
        // A summary must leave room for the turns it makes space for.
        summary = excerpt(text, Math.floor(budget * 0.25), count);
        chunks++;
      }
    } catch (err) {
      if (signal.aborted) return { kind: 'failed', reason: 'stopped' };
      const reason = errorMessage(err);
      this.failedAt.set(target.conversationId, Date.now());
      log.warn({ conversationId: target.conversationId, reason }, 'summarising earlier messages failed');
      const text = `Earlier messages could not be summarised (${reason}); the oldest ones are left out of what the model sees for now.`;
      await enqueueError(db, target.conversationId, text);
      this.deps.emit(target.conversationId, { type: 'error', message: text });
      return { kind: 'failed', reason };
    }
    // The summary and the chat's notice in one commit: until then the old turns stay in use.
    await db.transaction().execute(async (trx) => {
      await insertSummary(trx, target.conversationId, upto, summary);
      await enqueueNotice(trx, target.conversationId, `summary:${target.conversationId}:${upto}`, {
        type: 'notice',
        level: 'info',
        text: SUMMARISED_NOTICE,
      });
    });
    this.failedAt.delete(target.conversationId);
    this.deps.emit(target.conversationId, { type: 'notification', text: SUMMARISED_NOTICE, source: 'switchboard' });
    return { kind: 'summarised', turns: folded.length, chunks };
  }
}

/** The rows after a summary's last message. */
function after(log: Message[], upto: number | undefined): Message[] {
  return upto === undefined ? log : log.filter((m) => m.id > upto);
}
