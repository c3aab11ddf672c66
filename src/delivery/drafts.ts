/**
 * The draft lane: where a surface has drafts (Telegram's, in private chats), a reply being
 * written is shown as a draft instead of a message that is posted and edited — the "thinking"
 * placeholder between the person's message and the first token and while tools run, then the
 * text as it streams (paced like edits, by `live.ts`). A draft is never a ledger row: the reply's
 * row is its final message, posted once complete, so a crash mid-answer leaves no fragment.
 *
 * A draft lasts only a while on the platform, so one still wanted is shown again every
 * `refreshMs`. Every step runs on the conversation's chain, after what was queued before it: a
 * draft never lands after the message that ends it. A draft is wanted from a turn's start (or a
 * tool's) until the platform drops it (a message was posted) or the turn ends or waits on a person;
 * a queued step of a draft no longer wanted does nothing (entries are compared by identity).
 */
import type { Logger } from 'pino';
import type { Part, Surface } from '../contract/surface.js';
import type { Conversation } from '../store/schema.js';

/**
 * The placeholder waits this long, ms: an answer (or a tool) done sooner needs none, and its
 * message then waits on no draft call before it.
 */
export const THINKING_DELAY_MS = 400;

/** What the lane needs from the presenter. */
export interface DraftDeps {
  log: Logger;
  /** Run on the conversation's chain. */
  enqueue(conversationId: string, what: string, fn: () => Promise<void>): Promise<void>;
}

interface Shown {
  conversation: Conversation;
  surface: Surface;
  turnId: string;
  part: Part | null;
  /** Shown on the platform at least once (a placeholder may still wait on the chain). */
  sent: boolean;
  timer: NodeJS.Timeout | null;
}

/** The draft id of a turn: non-zero and the same across restarts (a resumed turn animates its own draft). */
export function draftIdOf(turnId: string): number {
  let h = 0;
  for (let i = 0; i < turnId.length; i++) h = (Math.imul(h, 31) + turnId.charCodeAt(i)) | 0;
  return h & 0x7fffffff || 1;
}

/** Drafts of the conversations this process shows. */
export class DraftLane {
  private readonly wanted = new Map<string, Shown>();
  /** The running turn of each conversation seen working (a tool's placeholder belongs to it). */
  private readonly turns = new Map<string, string>();

  constructor(private readonly deps: DraftDeps) {}

  /**
   * A turn (or a tool of the running one: no `turnId`) works: show the "thinking" placeholder,
   * where the surface has drafts.
   */
  thinking(conversation: Conversation, surface: Surface, turnId?: string): void {
    if (!surface.drafts) return;
    if (turnId) this.turns.set(conversation.id, turnId);
    const turn = turnId ?? this.turns.get(conversation.id);
    if (!turn) return;
    const entry = this.want(conversation, surface, turn, null);
    // Text shown meanwhile, or the turn's end, replaces or removes the entry: then nothing is shown.
    entry.timer = setTimeout(() => {
      entry.timer = null;
      void this.deps.enqueue(conversation.id, 'thinking draft', async () => {
        if (this.wanted.get(conversation.id) === entry) await this.send(entry).catch((err) => this.failed(entry, err));
      });
    }, THINKING_DELAY_MS);
    entry.timer.unref?.();
  }

  /**
   * Show a reply's text so far as the conversation's draft (call on its chain).
   * @returns false when drafts are not in force here (the caller streams by post-then-edit).
   * @throws the platform's error of a failed draft (the live stream tries again at its next update)
   */
  async show(conversation: Conversation, surface: Surface, turnId: string, part: Part): Promise<boolean> {
    const drafts = surface.drafts;
    if (!drafts?.usable(await surface.address(conversation))) return false;
    this.turns.set(conversation.id, turnId);
    const entry = this.want(conversation, surface, turnId, part);
    return this.send(entry);
  }

  /** The conversation's turn ended: its draft is over, and no tool of it works any more. */
  turnOver(conversationId: string): void {
    this.end(conversationId);
    this.turns.delete(conversationId);
  }

  /**
   * A message was posted: the platform dropped the draft shown (a placeholder still queued, for a
   * tool that started meanwhile, goes on).
   */
  gone(conversationId: string): void {
    if (this.wanted.get(conversationId)?.sent) this.end(conversationId);
  }

  /** The draft is over (the turn ends or waits on a person): stop showing it. */
  end(conversationId: string): void {
    const entry = this.wanted.get(conversationId);
    if (!entry) return;
    if (entry.timer) clearTimeout(entry.timer);
    this.wanted.delete(conversationId);
  }

  /** Stop every refresh (shutdown). */
  dispose(): void {
    for (const id of [...this.wanted.keys()]) this.end(id);
    this.turns.clear();
  }

  private want(conversation: Conversation, surface: Surface, turnId: string, part: Part | null): Shown {
    this.end(conversation.id);
    const entry: Shown = { conversation, surface, turnId, part, sent: false, timer: null };
    this.wanted.set(conversation.id, entry);
    return entry;
  }

  /** Show the entry's draft; false (and given up) when the surface does not take drafts here (any more). */
  private async send(entry: Shown): Promise<boolean> {
    const { surface, conversation } = entry;
    const drafts = surface.drafts;
    const address = await surface.address(conversation);
    if (!drafts?.usable(address) || !(await drafts.show(address, draftIdOf(entry.turnId), entry.part))) {
      if (this.wanted.get(conversation.id) === entry) this.end(conversation.id);
      return false;
    }
    entry.sent = true;
    if (this.wanted.get(conversation.id) === entry) this.refreshLater(entry, drafts.refreshMs);
    return true;
  }

  private refreshLater(entry: Shown, ms: number): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      entry.timer = null;
      void this.deps.enqueue(entry.conversation.id, 'refresh draft', async () => {
        if (this.wanted.get(entry.conversation.id) === entry)
          await this.send(entry).catch((err) => this.failed(entry, err));
      });
    }, ms);
    entry.timer.unref?.();
  }

  /** A placeholder or refresh failed: cosmetic (the answer still comes as a message); tried again later. */
  private failed(entry: Shown, err: unknown): void {
    this.deps.log.debug({ err, conversationId: entry.conversation.id }, 'draft not shown; trying again later');
    if (this.wanted.get(entry.conversation.id) === entry && entry.surface.drafts)
      this.refreshLater(entry, Math.min(entry.surface.drafts.refreshMs, 2_000));
  }
}
