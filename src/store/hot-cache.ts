/**
 * State read on every turn that rarely changes — conversation rows, approval rules, granted tool
 * groups, saved memories, scratchpads, the newest summary of a conversation — kept in memory per database handle, and checked against
 * the change counters in `store_versions` instead of trusted blindly: every write of such state
 * bumps its counter in the write's own transaction (see `repos/versions.ts`), and {@link
 * HotCache.refresh} (one small query, run at the start of every turn step) drops whatever kind
 * of state moved. A write through another process — a second `switchboard` over the same SQLite
 * file, or another instance over PostgreSQL — is therefore seen at this process's next turn step.
 * Reads between steps refresh on their own when the last check is older than {@link MAX_AGE_MS},
 * or when this process has written such state since (it reads its own writes at once).
 */
import { listRules } from './repos/approvals.js';
import { ensureConversation, getConversation, getScratchpad } from './repos/conversations.js';
import { grantedGroups } from './repos/grants.js';
import { listMemories } from './repos/memories.js';
import type { Memory } from './repos/search.js';
import { latestSummary } from './repos/summaries.js';
import { localWrites, readVersions, type VersionedState } from './repos/versions.js';
import type { Db } from './db.js';
import { perHandle } from './per-handle.js';
import type { ApprovalRule, Conversation, FullChatRef } from './schema.js';

/** A read that was not preceded by a refresh this recently checks the counters first. */
export const MAX_AGE_MS = 1000;
/** Entries kept per kind; beyond it the kind starts over (bounds memory with many conversations). */
const MAX_ENTRIES = 5000;

/** Loaded values of one kind of state, by key; a pending load is shared by concurrent readers. */
class Section<V> {
  private entries = new Map<string, Promise<V>>();
  /** Entries whose load has settled with a value (not undefined): what {@link held} returns. */
  private settled = new Map<string, Promise<V>>();

  /** `holdsUndefined`: undefined is a value too (remembered, handed out by {@link held}). */
  constructor(private readonly holdsUndefined = false) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    let hit = this.entries.get(key);
    if (!hit) {
      if (this.entries.size >= MAX_ENTRIES) this.clear();
      const { entries, settled } = this;
      const loading = load();
      hit = loading;
      entries.set(key, loading);
      loading.then(
        (value) => {
          if ((value !== undefined || this.holdsUndefined) && entries.get(key) === loading) settled.set(key, loading);
        },
        // A failed read is not remembered.
        () => {
          if (entries.get(key) === loading) entries.delete(key);
        },
      );
    }
    return hit;
  }

  /** The entry for `key` when its value is loaded and defined, without waiting; else undefined. */
  held(key: string): Promise<V> | undefined {
    return this.settled.get(key);
  }

  set(key: string, value: V): void {
    if (this.entries.size >= MAX_ENTRIES) this.clear();
    const entry = Promise.resolve(value);
    this.entries.set(key, entry);
    if (value === undefined && !this.holdsUndefined) this.settled.delete(key);
    else this.settled.set(key, entry);
  }

  delete(key: string): void {
    this.entries.delete(key);
    this.settled.delete(key);
  }

  clear(): void {
    this.entries = new Map();
    this.settled = new Map();
  }
}

/** The in-memory copy of hot, rarely written state of one database. */
export class HotCache {
  private versions = new Map<string, number>();
  private checkedAt = Number.NEGATIVE_INFINITY;
  /** {@link localWrites} as of the last check. */
  private seenLocalWrites = -1;
  private pending: Promise<void> | null = null;
  private readonly conversations = new Section<Conversation | undefined>();
  /** Active conversation id by chat key (channel, chat, thread). */
  private readonly activeIds = new Section<string>();
  private readonly rules = new Section<ApprovalRule[]>();
  private readonly grants = new Section<Set<string>>();
  private readonly memoryLists = new Section<Memory[]>();
  private readonly scratchpads = new Section<string | null>();
  /** The newest summary per conversation (undefined: none yet, remembered too: most have none). */
  private readonly summaries = new Section<Awaited<ReturnType<typeof latestSummary>>>(true);
  private readonly byState: Record<VersionedState, Array<Section<unknown>>> = {
    conversations: [this.conversations, this.activeIds, this.scratchpads],
    rules: [this.rules],
    grants: [this.grants],
    memories: [this.memoryLists],
    summaries: [this.summaries],
    // A channel's memos keep their own cache (core/memo.ts).
    memos: [],
  } as Record<VersionedState, Array<Section<unknown>>>;

  constructor(private readonly db: Db) {}

  /**
   * Read the change counters and drop every kind of state whose counter moved since the last
   * check. Each call reads the counters itself (never joins an earlier call), so a write that
   * committed before it is always seen.
   */
  async refresh(): Promise<void> {
    const started = Date.now();
    const local = localWrites();
    const versions = await readVersions(this.db);
    for (const state of Object.keys(this.byState) as VersionedState[]) {
      if ((versions.get(state) ?? 0) !== (this.versions.get(state) ?? 0)) {
        for (const section of this.byState[state]) section.clear();
      }
    }
    this.versions = versions;
    this.checkedAt = Math.max(this.checkedAt, started);
    this.seenLocalWrites = Math.max(this.seenLocalWrites, local);
  }

  /**
   * Refresh when the last check is older than {@link MAX_AGE_MS} or this process has written
   * versioned state since (concurrent readers share one refresh).
   */
  private async fresh(): Promise<void> {
    // A shared refresh may have started before this process's latest write: then one more.
    for (let round = 0; round < 2; round++) {
      if (this.isFresh()) return;
      this.pending ??= this.refresh().finally(() => {
        this.pending = null;
      });
      await this.pending;
    }
  }

  /** Whether the last check is recent enough and this process has written nothing versioned since. */
  private isFresh(): boolean {
    return Date.now() - this.checkedAt <= MAX_AGE_MS && this.seenLocalWrites === localWrites();
  }

  /** A conversation row (undefined when there is none; a missing row is not remembered). */
  conversation(id: string): Promise<Conversation | undefined> {
    // Asked many times per message: when nothing needs checking and the row is held, hand it
    // over without the async steps of a refresh check.
    if (this.isFresh()) {
      const held = this.conversations.held(id);
      if (held) return held;
    }
    return this.loadConversation(id);
  }

  private async loadConversation(id: string): Promise<Conversation | undefined> {
    await this.fresh();
    const row = await this.conversations.get(id, () => getConversation(this.db, id));
    if (!row) this.conversations.delete(id);
    return row;
  }

  /**
   * The active conversation of a chat key, created when missing. The counters are read first
   * (one small query), so a conversation archived by another process (`/new`) is never used.
   */
  async activeConversation(key: FullChatRef, ownerId: string | null): Promise<Conversation> {
    await this.refresh();
    const name = `${key.channel}\u0000${key.chatKey}\u0000${key.threadKey}`;
    const id = await this.activeIds.get(name, async () => {
      const row = await ensureConversation(this.db, key, ownerId);
      this.rememberConversation(row);
      return row.id;
    });
    const row = await this.conversation(id);
    if (row && !row.archived) return row;
    // Gone or archived since (a write this process has not counted yet): look it up again.
    this.activeIds.delete(name);
    const fresh = await ensureConversation(this.db, key, ownerId);
    this.rememberConversation(fresh);
    this.activeIds.set(name, fresh.id);
    return fresh;
  }

  /** Remember a conversation row just read from the database. */
  rememberConversation(row: Conversation): void {
    this.conversations.set(row.id, row);
  }

  /** Forget a conversation row at once (this process just changed it). */
  forgetConversation(id: string): void {
    this.conversations.delete(id);
    this.scratchpads.delete(id);
  }

  /**
   * The entry of `key`: when nothing needs checking and it is held, handed over at once (these are
   * read several times per model round); otherwise after the check, loaded if missing.
   */
  private read<V>(section: Section<V>, key: string, load: () => Promise<V>): Promise<V> {
    const held = this.isFresh() ? section.held(key) : undefined;
    return held ?? this.fresh().then(() => section.get(key, load));
  }

  /** Stored approval rules that apply to a requester's turn in a conversation. */
  rulesFor(conversationId: string, requester: string): Promise<ApprovalRule[]> {
    return this.read(this.rules, `${conversationId}\u0000${requester}`, () =>
      listRules(this.db, conversationId, requester),
    );
  }

  /** Lazy tool groups granted in a conversation. */
  grantedGroups(conversationId: string): Promise<Set<string>> {
    return this.read(this.grants, conversationId, () => grantedGroups(this.db, conversationId));
  }

  /** The memories of `owner` (a principal, or `''` for the shared memory), most recently updated first. */
  memories(owner: string, limit: number): Promise<Memory[]> {
    return this.read(this.memoryLists, `${limit}\n${owner}`, () => listMemories(this.db, owner, limit));
  }

  /** A conversation's newest summary (read once per model round by the compactor). */
  latestSummary(conversationId: string): Promise<Awaited<ReturnType<typeof latestSummary>>> {
    return this.read(this.summaries, conversationId, () => latestSummary(this.db, conversationId));
  }

  /** A conversation's scratchpad (null when empty). */
  scratchpad(conversationId: string): Promise<string | null> {
    return this.read(this.scratchpads, conversationId, () => getScratchpad(this.db, conversationId));
  }
}

/** The cache of a database handle (one per handle, created on first use). */
export const hotCache = perHandle((db) => new HotCache(db));
