/**
 * The presenter: the one way out of the core. It drives every platform surface from the delivery
 * ledger, and hands an event surface (terminals, job runs) the event stream. Per conversation, one
 * ordered chain does everything that reaches the chat — replaying undelivered rows, streaming a
 * reply by post-then-edit (at most one update per `streamIntervalMs`), bringing cards and status
 * lines up to date — so the chat shows things in the order they happened, a slow platform never
 * blocks a turn, and a crash at any point leaves rows the next start finishes. Where the surface
 * has drafts, a reply streams as a draft instead (`drafts.ts`) and its row is the final message.
 */
import type { Logger } from 'pino';
import type { Channel } from '../contract/channel.js';
import type { OutboundFile } from '../contract/chat.js';
import type { CoreEvent } from '../contract/events.js';
import type { CoreMetrics } from '../metrics.js';
import type { Db } from '../store/db.js';
import {
  claimDelivery,
  closeStream,
  confirmClaim,
  conversationsWithOpenDeliveries,
  insertDelivery,
  type DeliveryClaim,
  deliveryByKey,
  getDelivery,
  markDelivered,
  markFailed,
  newestRefsBefore,
  OPEN_STATUSES,
  openDeliveries,
  orphanStreams,
  renewDeliveryClaim,
  saveRefs,
  scheduleRetry,
  settleAll,
  streamingRows,
} from '../store/repos/deliveries.js';
import type { Conversation, Delivery } from '../store/schema.js';
import { parseContent } from './content.js';
import { attachmentUpload } from './sent-files.js';
import { holdForDelivery } from '../store/repos/sent-files.js';
import { SwitchboardError } from '../errors.js';
import type { TextContent } from '../contract/content.js';
import { attachmentKey, enqueueAttachment, isTappedKey, tappedCardRef, toolKey } from './ledger.js';
import { prepareApprovalCard } from './card-file.js';
import { DraftLane } from './drafts.js';
import { FreshClaim } from './fresh-claim.js';
import { LiveStreams } from './live.js';
import { advanceStream, leaveStreams, streamsNatively } from './native-stream.js';
import { parseRefs, renderContent, type SentRef } from './render.js';
import type { EventSurface, Surface } from '../contract/surface.js';
import { syncParts } from './sync.js';
import { TypingIndicators } from './typing.js';
import { backoffMs } from '../backoff.js';

/** First retry after a transient failure; doubles per attempt up to {@link MAX_BACKOFF_MS}. */
const BASE_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 5 * 60_000;
/** A stream untouched this long whose turn is over was cut off by a crash (the sweep closes it). */
const ORPHAN_STREAM_QUIET_MS = 10_000;
/** How long `sendFile` waits for the upload before telling the tool it is queued. */
const ATTACHMENT_WAIT_MS = 120_000;
/** How often a file's row is re-read while `sendFile` waits (another instance may send it). */
const ATTACHMENT_POLL_MS = 500;
/** A row another instance is sending: look again this soon (rows after it wait their turn). */
const CLAIM_POLL_MS = 300;

/** What the presenter needs from the core. */
export interface PresenterDeps {
  db: Db;
  log: Logger;
  metrics: CoreMetrics;
  /** `delivery.abandon_after_seconds` in ms: transient failures for longer end as `abandoned`. */
  abandonAfterMs: number;
  conversation(id: string): Promise<Conversation | undefined>;
  /** The channel serving a conversation in this process, if any. */
  channelFor(conversation: Conversation): Channel | undefined;
  /** Text of a reply reached the chat: `final` when a reply row is shown in full (latency metric). */
  onShown?(conversationId: string, final: boolean): void;
  /** Row claims: several instances (or processes) over one database send each row once. */
  claims: ClaimSettings;
  /**
   * Take the copy of a file queued before copies were kept (by its workspace path, through the
   * confined primitive); returns the copy's id. Without it such a row is refused.
   */
  snapshotLegacy?(path: string): Promise<string>;
}

/** How this instance claims rows. */
export interface ClaimSettings {
  /** This instance's name in `claimed_by` (the lease holder id). */
  holder: string;
  /** How long a claim lasts unless renewed (`store.lease_seconds`); renewed every third of it. */
  ttlMs: number;
  /** Whether a holder is known to be gone (a dead process of this host): its claims are taken at once. */
  holderGone(holder: string): boolean;
}

interface ConvState {
  chain: Promise<void>;
  drainQueued: boolean;
  retryTimer: NodeJS.Timeout | null;
  retryAt: number;
}

/**
 * Events after which an event surface's rows are settled (a turn ends or waits, or a notice):
 * once per step that waits or ends, not per event — one update instead of many.
 */
const SETTLE_ON = new Set<CoreEvent['type']>(['turn_done', 'approval_requested', 'question', 'notification', 'error']);

/** Bounds {@link Presenter}'s set of conversations looked at (past it, each is looked at once more). */
const MAX_LOOKED = 50_000;

/** A failure the presenter decides on its own (unreadable row). */
class UnreadableRow extends Error {}

/** This instance's claim on a row ran out and another instance took the row over. */
class ClaimLost extends Error {}

/** A card's content was replaced while it was being sent: the newer version goes next, the older never. */
class Superseded extends Error {}

type RowOutcome = 'done' | 'again' | 'wait';

/** Drives the surfaces of every conversation served by this process. */
export class Presenter {
  private readonly convs = new Map<string, ConvState>();
  /** Conversations whose streamed rows were looked for at a turn's end since this process started. */
  private readonly streamsLooked = new Set<string>();
  /** "Typing…" while a turn works (after a delay, kept alive where the platform's fades). */
  private readonly typing: TypingIndicators;
  private readonly waiters = new Map<string, Array<(err: Error | null) => void>>();
  /** Rows this instance is sending now (for `/healthz`). */
  private readonly claimed = new Map<number, DeliveryClaim>();
  readonly live: LiveStreams;
  readonly drafts: DraftLane;
  private closed = false;
  /** Live updates wait for this: undelivered rows go first after a start. */
  private ready: Promise<void> = Promise.resolve();
  private markReady: () => void = () => undefined;

  constructor(private readonly deps: PresenterDeps) {
    this.typing = new TypingIndicators(deps.log);
    this.drafts = new DraftLane({
      log: deps.log,
      enqueue: (id, what, fn) => this.ready.then(() => this.enqueue(id, what, fn)),
    });
    this.live = new LiveStreams({
      drafts: this.drafts,
      db: deps.db,
      log: deps.log,
      enqueue: (id, what, fn) => this.ready.then(() => this.enqueue(id, what, fn)),
      sync: (surface, address, refs, parts, save, beforeCall) =>
        syncParts({ surface, address, refs, parts, final: false, ambiguous: false, save, beforeCall, log: deps.log }),
      onShown: (id) => deps.onShown?.(id, false),
      claims: deps.claims,
    });
  }

  private state(id: string): ConvState {
    let st = this.convs.get(id);
    if (!st) {
      st = { chain: Promise.resolve(), drainQueued: false, retryTimer: null, retryAt: 0 };
      this.convs.set(id, st);
    }
    return st;
  }

  /** Run `fn` on the conversation's chain, after everything queued before it; failures are logged. */
  private enqueue(conversationId: string, what: string, fn: () => Promise<void>): Promise<void> {
    const st = this.state(conversationId);
    const run = st.chain
      .then(fn)
      .catch((err: unknown) => this.deps.log.warn({ err, conversationId, what }, 'delivery step failed'));
    st.chain = run;
    return run;
  }

  /** Deliver a conversation: show what is open for it (idempotent; coalesces while a pass is queued). */
  deliver(conversationId: string): void {
    if (this.closed) return;
    const st = this.state(conversationId);
    if (st.drainQueued) return;
    st.drainQueued = true;
    void this.enqueue(conversationId, 'drain', async () => {
      st.drainQueued = false;
      await this.drain(conversationId);
    });
  }

  /**
   * Show a core event in a conversation (its chat: a sub-agent's events come labelled, in its
   * root's) through the channel serving it: its {@link Surface} is brought up to date, or its
   * {@link EventSurface} is shown the event. Resolves once an event surface has shown it, so the
   * caller hands over the next one after; a surface's work is queued on the conversation's chain.
   */
  async present(conversation: Conversation, channel: Channel, event: CoreEvent): Promise<void> {
    if (channel.surface) this.onEvent(conversation, channel.surface, event);
    else if (channel.eventSurface) await this.showEvent(conversation, channel.eventSurface, event);
  }

  /** An event surface shows the event itself; the rows it stands for are then shown too. */
  private async showEvent(conversation: Conversation, surface: EventSurface, event: CoreEvent): Promise<void> {
    await surface.show(conversation, event);
    // Nothing shown there is edited later: the rows are settled, not sent (`drain`).
    if (SETTLE_ON.has(event.type)) this.deliver(conversation.id);
    // Timed as a surface's posts are: text reached the chat; the reply is whole once the turn is done.
    if (event.type === 'delta' || event.type === 'reply') this.deps.onShown?.(conversation.id, false);
    else if (event.type === 'turn_done' && event.status === 'done') this.deps.onShown?.(conversation.id, true);
  }

  /**
   * A core event of a conversation whose channel has a surface: deltas and tool output update
   * live messages; everything else means new or changed rows, so the conversation is drained.
   */
  onEvent(conversation: Conversation, surface: Surface, event: CoreEvent): void {
    if (this.closed) return;
    const id = conversation.id;
    switch (event.type) {
      case 'delta':
        if (event.stream && event.turnId)
          this.live.delta(conversation, surface, event.stream, event.turnId, event.text);
        return;
      case 'tool_output':
        this.live.toolOutput(conversation, surface, toolKey(event.callId), event.callId, event.text);
        return;
      case 'turn_started':
        this.typing.soon(conversation, surface);
        this.drafts.thinking(conversation, surface, event.turnId);
        return;
      case 'tool_started':
        // Work goes on (also after an approval): keep showing it, after the tool's line.
        this.typing.soon(conversation, surface);
        this.deliver(id);
        this.drafts.thinking(conversation, surface);
        return;
      case 'tool_finished':
        this.live.toolDone(event.callId);
        break;
      case 'approval_requested':
      case 'question':
        // The turn waits on a person: no "thinking" meanwhile.
        this.typing.off(conversation, surface);
        this.drafts.end(id);
        break;
      case 'turn_done':
        void this.enqueue(id, 'close streams', async () => {
          // A finished turn's rows came with events of their own (the reply, an error line):
          // only closed streams, or a turn cut short, leave rows to show now.
          if ((await this.closeStreams(id, event.status)) > 0 || event.status !== 'done') this.deliver(id);
        });
        this.typing.off(conversation, surface);
        this.drafts.turnOver(id);
        return;
      default:
        break;
    }
    this.deliver(id);
  }

  /**
   * The turn ended: streams it left open get their last text (marked when the turn did not
   * finish), and so do replies it left as drafts only (a draft vanishes: its text becomes the
   * reply's row, unless the final text was stored already). Returns how many were closed. The
   * streamed rows are looked for only when this process recorded a stream of the conversation
   * since the last look, or has not looked since it started (a crash may have left one).
   */
  private async closeStreams(conversationId: string, status: 'done' | 'cancelled' | 'failed'): Promise<number> {
    const look = this.live.takeRecorded(conversationId) || !this.streamsLooked.has(conversationId);
    let closed = 0;
    const suffix = status === 'cancelled' ? '\n\n_(stopped)_' : status === 'failed' ? '\n\n_(interrupted)_' : '';
    if (status !== 'done') {
      for (const draft of this.live.drafted(conversationId)) {
        if (!draft.text.trim()) continue;
        const content = JSON.stringify({ type: 'text', markdown: draft.text + suffix });
        const row = { conversationId, kind: 'reply' as const, key: draft.key, turnId: draft.turnId, content };
        if (await insertDelivery(this.deps.db, row)) closed++;
      }
    }
    this.drafts.turnOver(conversationId);
    if (look) {
      for (const row of await streamingRows(this.deps.db, conversationId)) {
        const text =
          this.live.textOf(row.idem_key) ?? (parseContent(row.content) as TextContent | null)?.markdown ?? '';
        await closeStream(
          this.deps.db,
          row.id,
          JSON.stringify({ type: 'text', markdown: text.trim() ? text + suffix : '' }),
        );
        closed++;
      }
      if (this.streamsLooked.size >= MAX_LOOKED) this.streamsLooked.clear();
      this.streamsLooked.add(conversationId);
    }
    this.live.stopConversation(conversationId);
    return closed;
  }

  /** Deliver open rows in order until none is left or one must wait for a retry. */
  private async drain(conversationId: string): Promise<void> {
    const conversation = await this.deps.conversation(conversationId);
    const channel = conversation && this.deps.channelFor(conversation);
    if (!conversation || !channel) return;
    if (!channel.surface) {
      // An event surface was shown the events these rows stand for as they happened (`showEvent`).
      await settleAll(this.deps.db, conversationId);
      return;
    }
    for (let pass = 0; pass < 20 && !this.closed; pass++) {
      const rows = await openDeliveries(this.deps.db, conversationId);
      if (rows.length === 0) return;
      let again = false;
      for (const row of rows) {
        if (this.closed) return;
        if (row.next_attempt_at > Date.now()) {
          this.retryAt(conversationId, row.next_attempt_at);
          return;
        }
        const outcome = await this.deliverRow(conversation, channel.surface, row);
        if (outcome === 'wait') return;
        // The row goes round again (its content changed while it was sent, or it was taken):
        // read the rows anew before anything after it, so no later row overtakes it.
        if (outcome === 'again') {
          again = true;
          break;
        }
      }
      if (!again) return;
    }
  }

  private retryAt(conversationId: string, at: number): void {
    const st = this.state(conversationId);
    if (st.retryTimer && st.retryAt <= at) return;
    if (st.retryTimer) clearTimeout(st.retryTimer);
    st.retryAt = at;
    st.retryTimer = setTimeout(
      () => {
        st.retryTimer = null;
        this.deliver(conversationId);
      },
      Math.max(0, at - Date.now()),
    );
    st.retryTimer.unref?.();
  }

  /** Rows this instance is sending now, as `delivery:<row id>` with the claim's fencing token. */
  heldClaims(): Array<{ name: string; token: number }> {
    return [...this.claimed.values()].map((c) => ({ name: `delivery:${c.id}`, token: c.token }));
  }

  /**
   * Claim a row as read. A row another live instance is sending is left to it ('wait': rows after
   * it must not overtake it; look again shortly). Its claim is taken over once it runs out, or at
   * once when its holder is a dead process of this host (a restart after a crash).
   */
  private async claimRow(conversationId: string, row: Delivery): Promise<DeliveryClaim | RowOutcome> {
    const { db, metrics, claims } = this.deps;
    const now = Date.now();
    const holder = row.claimed_by;
    const foreign = holder !== null && holder !== claims.holder;
    if (foreign && row.claim_expires_at > now && !claims.holderGone(holder)) {
      this.retryAt(conversationId, Math.min(row.claim_expires_at, now + CLAIM_POLL_MS));
      return 'wait';
    }
    const claim = await claimDelivery(db, row, claims.holder, claims.ttlMs, now);
    if (!claim) {
      // Changed since it was read: settled (next row), or changed or taken (read it again).
      const current = await getDelivery(db, row.id);
      return current && OPEN_STATUSES.includes(current.status) ? 'again' : 'done';
    }
    metrics.leaseClaims.inc({ kind: 'delivery' });
    if (foreign) {
      metrics.leaseTakeovers.inc({ kind: 'delivery' });
      this.deps.log.info(
        { conversationId, key: row.idem_key, from: holder },
        'took over a delivery whose sender stopped',
      );
    }
    return claim;
  }

  /** Renew a claim every third of its lifetime while the row is sent; `lost` turns true if it is taken. */
  private keepClaim(claim: DeliveryClaim): { lost: boolean; stop: () => void } {
    const { db, log, metrics, claims } = this.deps;
    const state = { lost: false, stop: () => {} };
    const timer = setInterval(
      () => {
        renewDeliveryClaim(db, claim, claims.ttlMs)
          .then((ok) => {
            if (ok || state.lost) return;
            state.lost = true;
            clearInterval(timer);
            metrics.leaseLosses.inc({ kind: 'delivery' });
            log.warn(
              { id: claim.id, token: claim.token },
              'lost a delivery claim to another instance; leaving the row to it',
            );
          })
          .catch((err) => log.warn({ err, id: claim.id }, 'delivery claim renewal failed; retrying'));
      },
      Math.max(100, Math.floor(claims.ttlMs / 3)),
    );
    timer.unref();
    this.claimed.set(claim.id, claim);
    state.stop = () => {
      clearInterval(timer);
      if (this.claimed.get(claim.id) === claim) this.claimed.delete(claim.id);
    };
    return state;
  }

  /** Claim one row, bring its platform messages to its content, and record the outcome. */
  private async deliverRow(conversation: Conversation, surface: Surface, row: Delivery): Promise<RowOutcome> {
    const { db, log, metrics, claims } = this.deps;
    // `sending` on a row free to claim was left by a crash (or a post that failed in transit):
    // the platform may or may not have the message. So was a row still carrying another
    // instance's stream claim: that stream may have posted before it could record the post.
    const ambiguous = row.status === 'sending' || (row.claimed_by !== null && row.claimed_by !== claims.holder);
    const claim = await this.claimRow(conversation.id, row);
    if (typeof claim === 'string') return claim;
    // A card's calls also check its content's version, which the claim does not: they always confirm.
    const fresh = new FreshClaim(claims.ttlMs / 3);
    if (row.kind !== 'card') fresh.written();
    const held = this.keepClaim(claim);
    this.live.stopStream(row.idem_key);
    const refs: SentRef[] = parseRefs(row.refs);
    const postedBefore = refs.length;
    // The messages known to have landed so far (recorded with a retry or a failure).
    let landed = () => refs;
    const save = async () => {
      // A sender whose claim was taken stops before posting anything more.
      if (held.lost || !(await saveRefs(db, row.id, JSON.stringify(refs), claim)))
        throw new ClaimLost('the delivery claim was taken over');
    };
    // Right before each platform call: the claim still holds (and is extended). A sender that
    // stalled past its claim's expiry and was taken over stops here instead of posting what the
    // new sender posts too. A card's content must also still be this version: an older outcome
    // drawn over a newer one would stay (Superseded: the row goes round again). The claim itself
    // fences a first call made before the event loop turned (`fresh-claim.ts`): one write, not two.
    const fence = async () => {
      const version = row.kind === 'card' ? row.version : undefined;
      if (!held.lost && (fresh.take() || (await confirmClaim(db, claim, claims.ttlMs, version)))) return;
      throw row.kind === 'card' ? new Superseded() : new ClaimLost('the delivery claim was taken over');
    };
    const progress = { posting: false };
    try {
      const content = parseContent(row.content);
      if (!content) throw new UnreadableRow('the stored content is unreadable');
      const address = await surface.address(conversation);
      if (content.type === 'attachment') {
        // An upload cannot be looked up: after a crash mid-upload it is sent again (rare, and a file).
        if (refs.length === 0) {
          // The copy taken when the file was sent, never the workspace path (`sent-files.ts`).
          const file = await attachmentUpload(db, content, this.deps.snapshotLegacy);
          await fence();
          progress.posting = true;
          refs.push({ ref: await surface.upload(address, file, fence), shown: 'file' });
          await save();
        }
      } else if (content.type === 'text' && (await this.finishStream(surface, address, content, refs, save, fence))) {
        // The reply's native stream shows its final text.
      } else {
        // A copy of a card a tap made known, or a tapped list, is the one message it was tapped on:
        // edited in place, never posted, and without the arguments' file (the card's own row sends that).
        const copy = isTappedKey(row.idem_key);
        // A card row holding no message whose card was tapped in this chat: the tapped message is
        // the post a crash left unrecorded (there is no other). It is taken, not posted again.
        if (!copy && refs.length === 0 && (content.type === 'approval' || content.type === 'question')) {
          const landed = await tappedCardRef(db, content.id, conversation.id);
          if (landed) refs.push({ ref: landed, shown: '' });
        }
        // An approval whose card cannot show its whole arguments gets them as a file first; the
        // file's reference heads the row's, and the card's own follow it.
        let shown = content;
        let fileEntry: SentRef | undefined;
        if (content.type === 'approval' && !copy) {
          // Its arguments' file may be uploaded first.
          await fence();
          const saveWithFile = async (withFile: SentRef[]) => {
            refs.splice(0, refs.length, ...withFile);
            await save();
          };
          const ready = await prepareApprovalCard(surface, address, content, refs, saveWithFile, fence);
          shown = ready.content;
          fileEntry = ready.entry;
        }
        const cardRefs = fileEntry ? refs.slice(1) : refs;
        const entry = fileEntry;
        if (entry) landed = () => [entry, ...cardRefs];
        const tail =
          content.type === 'tool' && content.state === 'running' ? this.live.tailOf(row.idem_key) : undefined;
        const rendered = renderContent(surface, shown, { tail });
        const parts = copy ? rendered.slice(0, cardRefs.length) : rendered;
        const saveCard = async () => {
          if (fileEntry) refs.splice(0, refs.length, fileEntry, ...cardRefs);
          await save();
        };
        // A post that may have landed is looked up on the platform, newer than what was shown before it.
        const shownBefore =
          ambiguous && cardRefs.length === 0 && surface.findPosted
            ? fileEntry?.ref || parseRefs(await newestRefsBefore(db, conversation.id, row.id)).at(-1)?.ref
            : undefined;
        // markDelivered below records the references with the outcome.
        await syncParts({
          surface,
          address,
          refs: cardRefs,
          parts,
          // A copy's message is never deleted, whatever the card renders to.
          final: !copy,
          ambiguous,
          shownBefore,
          save: saveCard,
          log,
          progress,
          callerSavesLast: true,
          leaveGone: copy,
          beforeCall: fence,
        });
        if (fileEntry) refs.splice(0, refs.length, fileEntry, ...cardRefs);
      }
      const outcome = await markDelivered(db, claim, row.version, JSON.stringify(refs));
      if (outcome === 'lost') throw new ClaimLost('the delivery claim was taken over');
      if (outcome === 'changed') return 'again';
      // A new message takes the place of the draft shown (the platform drops it).
      if (refs.length > postedBefore) this.drafts.gone(conversation.id);
      metrics.deliveryOutcomes.inc({ kind: row.kind, outcome: 'delivered' });
      metrics.deliveryLatency.observe((Date.now() - row.created_at) / 1000);
      if (row.kind === 'reply') this.deps.onShown?.(conversation.id, true);
      this.settleWaiters(row.idem_key, null);
      return 'done';
    } catch (err) {
      if (err instanceof Superseded) {
        // Claim taken (its new sender goes on) or content replaced (this row goes round again).
        await markDelivered(db, claim, row.version, JSON.stringify(refs));
        return 'again';
      }
      if (err instanceof ClaimLost) {
        if (!held.lost) metrics.leaseLosses.inc({ kind: 'delivery' });
        log.warn(
          { conversationId: conversation.id, key: row.idem_key },
          'another instance took over this delivery; leaving it to that one',
        );
        return 'again';
      }
      return this.failure(conversation.id, surface, row, claim, err, progress.posting, JSON.stringify(landed()));
    } finally {
      held.stop();
    }
  }

  /**
   * A reply streamed natively: completed by stopping its stream with the rest of the text. False
   * when it did not stream natively, or must be edited instead (its references then say so).
   */
  private async finishStream(
    surface: Surface,
    address: unknown,
    content: TextContent,
    refs: SentRef[],
    save: () => Promise<void>,
    beforeStart: () => Promise<void>,
  ): Promise<boolean> {
    if (refs.length === 0 || !streamsNatively(surface, address, refs)) return false;
    // A stream shows Markdown only: a title or buttons need the rendered message.
    if (!content.title && !content.buttons?.length) {
      const args = { surface, address, refs, text: content.markdown, final: true, save, beforeStart };
      if ((await advanceStream(args)) === 'ok') return true;
    }
    await leaveStreams(surface, address, refs, this.deps.log);
    return false;
  }

  private async failure(
    conversationId: string,
    surface: Surface,
    row: Delivery,
    claim: DeliveryClaim,
    err: unknown,
    mayHaveLanded: boolean,
    refs: string,
  ): Promise<RowOutcome> {
    const { db, log, metrics } = this.deps;
    const cls =
      err instanceof UnreadableRow ? { kind: 'permanent' as const, reason: err.message } : surface.classify(err);
    const where = { conversationId, key: row.idem_key, kind: row.kind, reason: cls.reason };
    if (cls.kind !== 'transient') {
      await markFailed(db, claim, cls.reason, 'failed', refs);
      metrics.deliveryOutcomes.inc({ kind: row.kind, outcome: 'failed' });
      log.warn(where, 'delivery refused by the platform for good; not retrying');
      this.settleWaiters(row.idem_key, new Error(cls.reason));
      return 'done';
    }
    if (Date.now() - row.created_at >= this.deps.abandonAfterMs) {
      await markFailed(db, claim, cls.reason, 'abandoned', refs);
      metrics.deliveryOutcomes.inc({ kind: row.kind, outcome: 'abandoned' });
      log.error(where, 'delivery abandoned after failing for longer than delivery.abandon_after_seconds');
      this.settleWaiters(row.idem_key, new Error(`gave up: ${cls.reason}`));
      return 'done';
    }
    const backoff = backoffMs(row.attempts, BASE_BACKOFF_MS, MAX_BACKOFF_MS);
    const at = Date.now() + Math.max(cls.retryAfterMs ?? 0, backoff);
    // A post that got no answer may have landed: the next attempt looks before posting again.
    await scheduleRetry(db, claim, at, cls.reason, mayHaveLanded && cls.unanswered === true, refs);
    metrics.deliveryOutcomes.inc({ kind: row.kind, outcome: 'retried' });
    log.info({ ...where, retryInMs: at - Date.now() }, 'delivery failed; retrying later');
    this.retryAt(conversationId, at);
    return 'wait';
  }

  private settleWaiters(key: string, err: Error | null): void {
    const list = this.waiters.get(key);
    if (!list) return;
    this.waiters.delete(key);
    for (const w of list) w(err);
  }

  /**
   * Send a file a tool produced, through the ledger (after everything shown before it).
   * Resolves once the platform has it; throws when the platform refused it for good.
   * When it cannot be sent within two minutes it stays queued and this resolves. An event surface
   * is handed the file at once (nothing it shows is a row to send).
   */
  async sendFile(conversation: Conversation, callId: string, file: OutboundFile): Promise<void> {
    if (!file.snapshot) {
      throw new SwitchboardError('file_not_copied', 'a file is sent as the copy taken when it is sent; none was taken');
    }
    const events = this.deps.channelFor(conversation)?.eventSurface;
    if (events) return events.sendFile(conversation, file);
    const key = attachmentKey(callId, file.path);
    const settled = new Promise<Error | null>((resolve) => {
      const list = this.waiters.get(key) ?? [];
      list.push(resolve);
      this.waiters.set(key, list);
    });
    // The copy is kept while this delivery is open (then pruned, or kept by the web chat).
    await holdForDelivery(this.deps.db, file.snapshot, key);
    await enqueueAttachment(this.deps.db, conversation.id, key, {
      path: file.path,
      caption: file.caption ?? null,
      kind: file.kind,
      snapshot: file.snapshot,
    });
    const row = await deliveryByKey(this.deps.db, key);
    if (row && (row.status === 'delivered' || row.status === 'failed' || row.status === 'abandoned')) {
      // Sent (or refused) before a restart re-ran the tool.
      this.settleWaiters(key, null);
      if (row.status !== 'delivered') throw new Error(row.last_error ?? 'the platform refused the file');
      return;
    }
    this.deliver(conversation.id);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), ATTACHMENT_WAIT_MS);
      timer.unref?.();
    });
    // Another instance may claim and send the row: its outcome is then only in the table.
    let polling = true;
    const sentElsewhere = (async (): Promise<Error | null | 'timeout'> => {
      while (polling) {
        await new Promise((r) => setTimeout(r, ATTACHMENT_POLL_MS).unref?.());
        const current = polling ? await deliveryByKey(this.deps.db, key).catch(() => undefined) : undefined;
        if (current?.status === 'delivered') return null;
        if (current?.status === 'failed' || current?.status === 'abandoned')
          return new Error(current.last_error ?? 'the platform refused the file');
      }
      return 'timeout';
    })();
    const outcome = await Promise.race([settled, timeout, sentElsewhere]);
    polling = false;
    clearTimeout(timer);
    if (outcome instanceof Error) throw outcome;
  }

  /**
   * After a start: close streams a crash cut off whose turn did not survive, then deliver every
   * open row, per conversation in order (before anything new of that conversation is shown).
   */
  async recover(serves: (conversationId: string) => Promise<boolean>): Promise<void> {
    try {
      await this.closeOrphans(0, serves);
      for (const id of await conversationsWithOpenDeliveries(this.deps.db, Number.MAX_SAFE_INTEGER)) {
        if (await serves(id)) this.deliver(id);
      }
    } finally {
      this.markReady();
    }
  }

  /**
   * Hold live updates until {@link recover} has queued the undelivered rows (call it before the
   * channels start receiving, so nothing new is shown ahead of what a crash left undelivered).
   */
  holdUntilRecovered(): void {
    this.ready = new Promise<void>((resolve) => {
      this.markReady = resolve;
    });
  }

  /** Periodic: due retries, and streams left open by a turn that ended elsewhere or crashed. */
  async sweep(serves: (conversationId: string) => Promise<boolean>): Promise<void> {
    await this.closeOrphans(ORPHAN_STREAM_QUIET_MS, serves);
    for (const id of await conversationsWithOpenDeliveries(this.deps.db, Date.now())) {
      if (await serves(id)) this.deliver(id);
    }
  }

  private async closeOrphans(quietMs: number, serves: (conversationId: string) => Promise<boolean>): Promise<void> {
    for (const row of await orphanStreams(this.deps.db)) {
      if (row.updated_at > Date.now() - quietMs || !(await serves(row.conversation_id))) continue;
      await this.enqueue(row.conversation_id, 'close orphan stream', async () => {
        const text = (parseContent(row.content) as TextContent | null)?.markdown ?? '';
        await closeStream(
          this.deps.db,
          row.id,
          JSON.stringify({ type: 'text', markdown: text.trim() ? `${text}\n\n_(interrupted)_` : '' }),
        );
      });
      this.deliver(row.conversation_id);
    }
  }

  /** Resolves when every queued step has run (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const chains = [...this.convs.values()].map((s) => s.chain);
      await Promise.all(chains);
      if ([...this.convs.values()].every((s, i) => s.chain === chains[i])) return;
    }
  }

  /** Stop timers; rows left open are delivered by the next start. */
  close(): void {
    this.closed = true;
    this.markReady();
    this.live.dispose();
    this.drafts.dispose();
    for (const st of this.convs.values()) if (st.retryTimer) clearTimeout(st.retryTimer);
    this.typing.close();
  }
}
