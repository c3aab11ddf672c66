/**
 * Live messages: a reply while the model streams it, and a running tool's output tail. Updated
 * by post-then-edit (a reply, where the platform has them, by appending to its own streamed
 * message: `native-stream.ts`) at most once per `streamIntervalMs` (bursts coalesce: each update
 * renders the text as it is when the update runs), always on the conversation's chain. A streamed
 * reply's message references are recorded from its first chunk, so a crash leaves a row the
 * next start finishes instead of a fragment.
 *
 * A reply's row is claimed for streaming like any row being sent (`claimStream`), before the
 * first post, and the claim is renewed while a post or edit waits on the platform (a 429): no
 * other instance posts or finishes the same reply meanwhile, and a sender whose claim was taken
 * (it stalled past the claim's expiry) stops before touching the chat again. An instance taking
 * over the turn (the streaming one died) takes the claim over and goes on editing the message
 * already shown.
 *
 * Where the surface has drafts (`drafts.ts`), a reply streams into its draft instead and has no
 * row until its final text is stored: nothing is claimed, posted or edited while it streams.
 */
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import {
  claimStream,
  type DeliveryClaim,
  deliveryByKey,
  renewDeliveryClaim,
  saveRefs,
  saveStream,
} from '../store/repos/deliveries.js';
import type { Conversation } from '../store/schema.js';
import { parseContent } from './content.js';
import { FreshClaim } from './fresh-claim.js';
import { advanceStream, leaveStreams, streamsNatively } from './native-stream.js';
import { parseRefs, renderContent, type SentRef } from './render.js';
import type { Part, Surface } from '../contract/surface.js';
import type { DraftLane } from './drafts.js';

/** Characters of tool output kept for the status line. */
const TOOL_TAIL_CHARS = 4_000;

/**
 * A streamed reply's first message waits until it has this much text or the stream interval has
 * passed since the first chunk: a short answer that completes meanwhile is then posted once, in
 * full, with no edit (the presenter posts the final text when the stream never showed).
 */
export const FIRST_POST_MIN_CHARS = 200;

/** What live updates need from the presenter. */
export interface LiveDeps {
  db: Db;
  log: Logger;
  enqueue(conversationId: string, what: string, fn: () => Promise<void>): Promise<void>;
  /** Sync messages to `parts`; `beforeCall` runs right before each platform call and throws to stop it. */
  sync(
    surface: Surface,
    address: unknown,
    refs: SentRef[],
    parts: Part[],
    save: () => Promise<void>,
    beforeCall?: () => Promise<void>,
  ): Promise<void>;
  /** Part of a reply reached the chat. */
  onShown?(conversationId: string): void;
  /** How this instance claims rows (the presenter's settings). */
  claims: { holder: string; ttlMs: number; holderGone(holder: string): boolean };
  /** Where replies stream as drafts. */
  drafts?: DraftLane;
}

/** The stream's claim was taken by another instance: stop showing it from here. */
class StreamClaimLost extends Error {}

interface Live {
  key: string;
  conversation: Conversation;
  surface: Surface;
  /** Reply text so far, or tool output tail. */
  text: string;
  shownText: string;
  timer: NodeJS.Timeout | null;
  queued: boolean;
  stopped: boolean;
  lastUpdate: number;
  /** When the first text arrived. */
  startedAt: number;
  /** A reply (its first post waits for text or time); tool lines update at once. */
  isReply: boolean;
  /** Shown as a draft (so it has no row until its final text is stored). */
  drafted: boolean;
  flush: (live: Live) => Promise<void>;
}

/** Throttled live updates of replies and tool lines. */
export class LiveStreams {
  private readonly items = new Map<string, Live>();
  private readonly turnOf = new Map<string, string>();
  /** Conversations with a stream row recorded since {@link takeRecorded} last asked. */
  private readonly recorded = new Set<string>();

  constructor(private readonly deps: LiveDeps) {}

  /** Streamed reply text of the round `key` (`reply:<turn>:<round>`). */
  delta(conversation: Conversation, surface: Surface, key: string, turnId: string, text: string): void {
    let live = this.items.get(key);
    if (!live) {
      // A new round streams: an older stream of the conversation is over (its row carries on).
      for (const other of this.items.values())
        if (other.conversation.id === conversation.id && other.key.startsWith('reply:')) this.stopStream(other.key);
      live = this.create(key, conversation, surface, (l) => this.flushReply(l));
      this.turnOf.set(key, turnId);
    }
    if (live.stopped) return;
    live.text += text;
    this.schedule(live);
  }

  /** Streamed output of a running tool, shown on its status line (`key` = the line's key). */
  toolOutput(conversation: Conversation, surface: Surface, key: string, _callId: string, text: string): void {
    const live = this.items.get(key) ?? this.create(key, conversation, surface, (l) => this.flushTool(l));
    if (live.stopped) return;
    live.text = (live.text + text).slice(-TOOL_TAIL_CHARS);
    this.schedule(live);
  }

  private create(key: string, conversation: Conversation, surface: Surface, flush: (l: Live) => Promise<void>): Live {
    const live: Live = {
      key,
      conversation,
      surface,
      text: '',
      shownText: '',
      timer: null,
      queued: false,
      stopped: false,
      lastUpdate: 0,
      startedAt: Date.now(),
      isReply: key.startsWith('reply:'),
      drafted: false,
      flush,
    };
    this.items.set(key, live);
    return live;
  }

  /** Whether a stream row of the conversation was recorded since the last call (and forget it). */
  takeRecorded(conversationId: string): boolean {
    return this.recorded.delete(conversationId);
  }

  /** The live text of a stream, when this process streams it. */
  textOf(key: string): string | undefined {
    return this.items.get(key)?.text;
  }

  /** Replies of a conversation this process shows as drafts, with their text so far (a stopped turn keeps it). */
  drafted(conversationId: string): Array<{ key: string; turnId: string | null; text: string }> {
    return [...this.items.values()]
      .filter((l) => l.drafted && l.conversation.id === conversationId)
      .map((l) => ({ key: l.key, turnId: this.turnOf.get(l.key) ?? null, text: l.text }));
  }

  /** The output tail of a running tool's line. */
  tailOf(key: string): string | undefined {
    return this.items.get(key)?.text || undefined;
  }

  /** The row took over (final content stored): no more live updates. */
  stopStream(key: string): void {
    const live = this.items.get(key);
    if (!live) return;
    live.stopped = true;
    if (live.timer) clearTimeout(live.timer);
    live.timer = null;
    this.items.delete(key);
    this.turnOf.delete(key);
  }

  /** A tool finished: its line is final. */
  toolDone(callId: string): void {
    this.stopStream(`tool:${callId}`);
  }

  /** Stop every live update of a conversation (its turn ended). */
  stopConversation(conversationId: string): void {
    for (const live of [...this.items.values()]) if (live.conversation.id === conversationId) this.stopStream(live.key);
  }

  private schedule(live: Live): void {
    const first = live.isReply && live.lastUpdate === 0;
    // Enough text for the first post arrived while it waited for time: post it now.
    if (first && live.timer && live.text.length >= FIRST_POST_MIN_CHARS) {
      clearTimeout(live.timer);
      live.timer = null;
    }
    if (live.timer || live.queued || live.stopped) return;
    const wait = first
      ? live.text.length >= FIRST_POST_MIN_CHARS
        ? 0
        : Math.max(0, live.startedAt + live.surface.streamIntervalMs - Date.now())
      : Math.max(0, live.lastUpdate + live.surface.streamIntervalMs - Date.now());
    live.timer = setTimeout(() => {
      live.timer = null;
      live.queued = true;
      void this.deps.enqueue(live.conversation.id, 'live update', async () => {
        live.queued = false;
        if (live.stopped) return;
        try {
          await live.flush(live);
        } finally {
          // Measured from the end of an update, so a 429 wait never leads to two edits back to back.
          live.lastUpdate = Date.now();
          if (!live.stopped && live.text !== live.shownText) this.schedule(live);
        }
      });
    }, wait);
  }

  private async flushReply(live: Live): Promise<void> {
    const { db, claims } = this.deps;
    const row = await deliveryByKey(db, live.key);
    if (row && row.status !== 'streaming') {
      // The final text is stored: the presenter's pass shows it.
      this.stopStream(live.key);
      return;
    }
    const text = live.text;
    const parts = renderContent(live.surface, { type: 'text', markdown: text, partial: true });
    if (parts.length === 0) return;
    const turnId = this.turnOf.get(live.key) ?? null;
    // No row yet: a draft shows the latest part (a draft holds one message's worth of text).
    const last = parts.at(-1);
    if (!row && turnId && last && (await this.deps.drafts?.show(live.conversation, live.surface, turnId, last))) {
      live.drafted = true;
      live.shownText = text;
      this.deps.onShown?.(live.conversation.id);
      return;
    }
    const content = JSON.stringify({ type: 'text', markdown: text, partial: true });
    const takeFrom =
      row?.claimed_by && row.claimed_by !== claims.holder && claims.holderGone(row.claimed_by) ? row.claimed_by : null;
    const claim = await claimStream(
      db,
      { conversationId: live.conversation.id, kind: 'reply', key: live.key, turnId, content },
      claims.holder,
      claims.ttlMs,
      takeFrom,
    );
    // Another instance streams it (it shows the text), or the final text came in meanwhile.
    if (!claim) return;
    const fresh = new FreshClaim(claims.ttlMs / 3);
    fresh.written();
    live.shownText = text;
    this.recorded.add(live.conversation.id);
    const refs = parseRefs(claim.refs);
    const save = async () => {
      if (!(await saveStream(db, claim, JSON.stringify(refs), content, claims.ttlMs)))
        throw new StreamClaimLost('the stream was taken over');
    };
    // Right before each post or edit: the claim still holds (and is extended), so a stream that
    // stalled past its claim's expiry and was taken over never posts what its successor shows.
    // The claim just taken fences a first call made before the event loop turned (`fresh-claim.ts`).
    const fence = async () => {
      if (fresh.take()) return;
      if (!(await renewDeliveryClaim(db, claim, claims.ttlMs))) throw new StreamClaimLost('the stream was taken over');
    };
    const renewing = this.renewWhileWaiting(claim);
    try {
      const address = await live.surface.address(live.conversation);
      await this.show(live.surface, address, refs, text, parts, save, fence);
      if (refs.length) this.deps.onShown?.(live.conversation.id);
      // Keep the partial text even when no message changed, for closing the stream after a crash.
      if (refs.length) await save();
    } catch (err) {
      if (!(err instanceof StreamClaimLost)) throw err;
      this.deps.log.warn(
        { conversationId: live.conversation.id, key: live.key },
        'another instance took this stream over; leaving it to that one',
      );
      this.stopStream(live.key);
    } finally {
      clearInterval(renewing);
    }
  }

  /** Show a reply's text so far: appended to its native stream, or else by post-then-edit. */
  private async show(
    surface: Surface,
    address: unknown,
    refs: SentRef[],
    text: string,
    parts: Part[],
    save: () => Promise<void>,
    fence: () => Promise<void>,
  ): Promise<void> {
    if (streamsNatively(surface, address, refs)) {
      if ((await advanceStream({ surface, address, refs, text, final: false, save, beforeStart: fence })) === 'ok')
        return;
      await leaveStreams(surface, address, refs, this.deps.log);
    }
    await this.deps.sync(surface, address, refs, parts, save, fence);
  }

  /** Keep a stream's claim while a post or edit waits on the platform (a 429 wait can be long). */
  private renewWhileWaiting(claim: DeliveryClaim): NodeJS.Timeout {
    const { db, log, claims } = this.deps;
    const timer = setInterval(
      () => {
        renewDeliveryClaim(db, claim, claims.ttlMs).catch((err) =>
          log.warn({ err, id: claim.id }, 'stream claim renewal failed; retrying'),
        );
      },
      Math.max(100, Math.floor(claims.ttlMs / 3)),
    );
    timer.unref();
    return timer;
  }

  private async flushTool(live: Live): Promise<void> {
    const { db } = this.deps;
    live.shownText = live.text;
    const row = await deliveryByKey(db, live.key);
    // Not shown yet (the pass will include the tail) or settled: nothing live to update.
    if (row?.status !== 'delivered') return;
    const content = parseContent(row?.content ?? null);
    if (!row || content?.type !== 'tool' || content.state !== 'running') return;
    const refs = parseRefs(row.refs);
    const parts = renderContent(live.surface, content, { tail: live.text });
    await this.deps.sync(live.surface, await live.surface.address(live.conversation), refs, parts, async () => {
      await saveRefs(db, row.id, JSON.stringify(refs));
    });
  }

  /** Stop every timer (shutdown). */
  dispose(): void {
    for (const key of [...this.items.keys()]) this.stopStream(key);
  }
}
