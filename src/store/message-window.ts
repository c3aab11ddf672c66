/**
 * The recent messages of each conversation this process runs, kept in memory between model
 * rounds: a round reads only the rows added since the last one (`id > last seen`) instead of the
 * whole window again. Sound because messages are append-only and a conversation's messages are
 * written only by the instance holding its lease, which commits before giving the lease up; a
 * window left here while another instance ran the conversation is brought up to date by the same
 * query. The window always covers the token budget: old turns are dropped only as whole turns,
 * and only while what is left still covers it.
 */
import type { Db } from './db.js';
import { perHandle } from './per-handle.js';
import { messagesAfter, recentMessages } from './repos/log.js';
import type { Message } from './schema.js';

/** Conversations kept at most; the least recently used goes first. */
const MAX_WINDOWS = 500;
/** Characters of message content kept at most, over every window (bounds memory). */
const MAX_CHARS = 8 * 1024 * 1024;

interface Window {
  messages: Message[];
  costs: number[];
  total: number;
  chars: number;
  lastId: number;
  budget: number;
}

const sizeOf = (m: Message) => (m.content?.length ?? 0) + (m.tool_calls?.length ?? 0);

/** The message windows of one database handle. */
export class MessageWindows {
  private readonly windows = new Map<string, Window>();
  private chars = 0;

  constructor(private readonly db: Db) {}

  /**
   * The most recent messages of a conversation whose `cost` adds up to at least `budget` (or all
   * of them), oldest first; a new array each call (the rows themselves are shared: read only).
   */
  async recent(conversationId: string, budget: number, cost: (m: Message) => number): Promise<Message[]> {
    const known = this.windows.get(conversationId);
    if (!known || known.budget !== budget) {
      const messages = await recentMessages(this.db, conversationId, budget, cost);
      const costs = messages.map(cost);
      this.put(conversationId, {
        messages,
        costs,
        total: costs.reduce((a, b) => a + b, 0),
        chars: messages.reduce((a, m) => a + sizeOf(m), 0),
        lastId: messages.at(-1)?.id ?? 0,
        budget,
      });
      return [...messages];
    }
    const added = await messagesAfter(this.db, conversationId, known.lastId);
    // Another read of the same conversation may have extended or replaced it meanwhile.
    const w = this.windows.get(conversationId) ?? known;
    for (const m of added) {
      if (m.id <= w.lastId) continue;
      const c = cost(m);
      w.messages.push(m);
      w.costs.push(c);
      w.total += c;
      w.chars += sizeOf(m);
      this.chars += sizeOf(m);
      w.lastId = m.id;
    }
    this.trim(w);
    this.put(conversationId, w);
    return [...w.messages];
  }

  /** Drop the oldest turns while the rest still covers the budget. */
  private trim(w: Window): void {
    for (;;) {
      const first = w.messages[0];
      if (!first) return;
      let end = 1;
      let turnCost = w.costs[0] ?? 0;
      while (end < w.messages.length && first.turn_id !== null && w.messages[end]?.turn_id === first.turn_id) {
        turnCost += w.costs[end] ?? 0;
        end++;
      }
      if (end >= w.messages.length || w.total - turnCost < w.budget) return;
      const dropped = w.messages.splice(0, end);
      w.costs.splice(0, end);
      w.total -= turnCost;
      const chars = dropped.reduce((a, m) => a + sizeOf(m), 0);
      w.chars -= chars;
      this.chars -= chars;
    }
  }

  /** Store a window as the most recently used; evict the least recently used beyond the bounds. */
  private put(conversationId: string, w: Window): void {
    const old = this.windows.get(conversationId);
    if (old) {
      this.windows.delete(conversationId);
      if (old !== w) this.chars -= old.chars;
    }
    if (old !== w) this.chars += w.chars;
    this.windows.set(conversationId, w);
    for (const [id, oldest] of this.windows) {
      if (this.windows.size <= MAX_WINDOWS && this.chars <= MAX_CHARS) break;
      if (id === conversationId) break;
      this.windows.delete(id);
      this.chars -= oldest.chars;
    }
  }
}

/** The message windows of a database handle (one per handle, created on first use). */
export const messageWindows = perHandle((db) => new MessageWindows(db));
