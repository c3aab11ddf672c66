/**
 * Recovery at start and the periodic sweep. Recovery brings cards still offering buttons for
 * something decided to their outcome, delivers what the ledger still owes, shows
 * pending approvals and questions again and resumes unfinished turns and queued messages. The
 * sweep expires overdue approvals, indexes new messages for search, retries deliveries, picks up
 * work no live instance holds (decided elsewhere, or left by an instance that died: at once when
 * it was a process of this host, else once its lease ran out), welcomes newly paired users,
 * prunes old de-duplication keys and pairing codes, and removes the copies of sent files nothing
 * holds any more.
 */
import { expireOrphanedQuestions } from './tool-questions.js';
import { isDeadLocalHolder } from './leases.js';
import type { Logger } from 'pino';
import type { Presenter } from '../delivery/presenter.js';
import type { Db } from '../store/db.js';
import {
  conversationsWithDecidedWaits,
  expiredApprovals,
  openApprovals,
  pendingQuestions,
} from '../store/repos/approvals.js';
import { pruneInboundKeys } from '../store/repos/conversations.js';
import { leaseHolders } from '../store/repos/leases.js';
import { conversationsWithInbox } from '../store/repos/log.js';
import { pruneExpiredCodes } from '../store/repos/pairing.js';
import { pruneSentFiles } from '../store/repos/sent-files.js';
import { SENT_FILE_GRACE_MS } from '../delivery/sent-files.js';
import { repairCards } from '../delivery/card-repair.js';
import { indexPendingMessages } from '../store/repos/search-index.js';
import { conversationsNeedingRunner, conversationsWithActiveTurns } from '../store/repos/turns.js';
import type { Decisions } from './decisions.js';
import type { CoreEvent } from '../contract/events.js';
import { welcomePaired } from './pairing-welcome.js';
import type { ChannelRouter } from './routing.js';
import { alwaysScopeText } from '../delivery/grant-words.js';
import type { RunScheduler } from './scheduler.js';

/** Platforms redeliver within minutes (Slack) or never re-use ids (Telegram): a week is ample. */
const INBOUND_KEY_TTL_MS = 7 * 24 * 3600_000;
const PRUNE_INTERVAL_MS = 3600_000;
/** Sent files can be large: the copies nothing holds are removed more often. */
const SENT_FILES_INTERVAL_MS = 5 * 60_000;

/** What recovery and the sweep need from the rest of the core. */
export interface MaintenanceDeps {
  db: Db;
  router: ChannelRouter;
  scheduler: RunScheduler;
  presenter: Presenter;
  decisions: Decisions;
  emit(conversationId: string, event: CoreEvent): void;
  log: Logger;
  /** This process's holder id. */
  holder: string;
}

/** Recovery after a start and the periodic sweep of one core. */
export class Maintenance {
  private lastPrune = 0;
  private lastSentFilesPrune = 0;

  constructor(private readonly deps: MaintenanceDeps) {}

  /** Deliver what is owed, show pending cards again and resume every conversation this process serves. */
  async recover(): Promise<void> {
    const { db, router, presenter, scheduler, log } = this.deps;
    // Cards still offering buttons for something decided get their outcome first (queued rows).
    const cards = await repairCards(db);
    if (cards.settled + cards.retried > 0) log.info(cards, 'cards brought to their outcome at start');
    // Undelivered rows first: they are queued on each conversation's chain before anything a
    // resumed turn shows, so the chat keeps its order across the restart.
    await presenter.recover((id) => router.serves(id));
    const ids = new Set([...(await conversationsWithActiveTurns(db)), ...(await conversationsWithInbox(db))]);
    for (const id of ids) {
      const conv = await router.conversation(id);
      if (!conv || !(await router.channelForChat(conv))) continue;
      await this.replayPending(id);
      scheduler.runHere(id);
    }
  }

  /** Emit `approval_requested` / `question` again for everything still pending in a conversation. */
  async replayPending(conversationId: string): Promise<void> {
    const { db, emit } = this.deps;
    for (const a of await openApprovals(db, conversationId)) {
      if (a.status !== 'pending') continue;
      emit(conversationId, {
        type: 'approval_requested',
        id: a.id,
        callId: a.tool_call_id,
        tool: a.tool_name,
        label: a.label,
        preview: a.preview,
        requester: a.requester,
        alwaysCovers: alwaysScopeText(a.tool_name, a.target_path, a.grant_args),
        replay: true,
      });
    }
    for (const q of await pendingQuestions(db, conversationId)) {
      emit(conversationId, {
        type: 'question',
        id: q.id,
        question: q.question,
        suggestedAnswers: JSON.parse(q.suggested_answers) as string[],
        replay: true,
      });
    }
  }

  /** Expire overdue approvals; resume turns whose approvals another process decided. */
  /** Welcome every newly paired user this process can reach (once across processes; see `pairing-welcome.ts`). */
  welcome(): Promise<void> {
    const { db, router } = this.deps;
    return welcomePaired({
      db,
      servesChannel: (channel, conv) => router.servesChannel(channel, conv),
      emit: this.deps.emit,
    });
  }

  async sweep(): Promise<void> {
    const { db, router, presenter, scheduler, decisions, log } = this.deps;
    if (scheduler.closing) return;
    for (const a of await expiredApprovals(db, Date.now())) await decisions.expire(a);
    // A tool's question whose waiting process died: the server's request died with it.
    await expireOrphanedQuestions(
      { db, emit: this.deps.emit, holder: this.deps.holder, isClosing: () => scheduler.closing },
      isDeadLocalHolder,
    );
    // The search index is filled here, in batches, instead of per inserted message.
    await indexPendingMessages(db).catch((err) => log.warn({ err }, 'search indexing failed; retrying next sweep'));
    await presenter.sweep((id) => router.serves(id));
    // Work no live instance holds: decided approvals (possibly decided elsewhere), and turns or
    // queued messages whose lease ran out (the instance running them died). A holder that is a
    // process of this host known to be gone is not waited for: the claim takes its lease at once.
    const candidates = [
      ...new Set([...(await conversationsWithDecidedWaits(db)), ...(await conversationsNeedingRunner(db))]),
    ].filter((id) => !scheduler.isRunning(id));
    const holders = await leaseHolders(
      db,
      candidates.map((id) => `conv:${id}`),
    );
    // Asked once per holder (a few instances hold many conversations).
    const dead = new Map<string, boolean>();
    const isDead = (holder: string): boolean => {
      const known = dead.get(holder);
      if (known !== undefined) return known;
      const now = isDeadLocalHolder(holder);
      dead.set(holder, now);
      return now;
    };
    for (const id of candidates) {
      const holder = holders.get(`conv:${id}`);
      if (holder !== undefined && !isDead(holder)) continue;
      const conv = await router.conversation(id);
      if (conv && (await router.channelForChat(conv))) scheduler.runHere(id);
    }
    await this.welcome();
    if (Date.now() - this.lastSentFilesPrune > SENT_FILES_INTERVAL_MS) {
      this.lastSentFilesPrune = Date.now();
      await pruneSentFiles(db, Date.now() - SENT_FILE_GRACE_MS).catch((err) =>
        log.warn({ err }, 'removing copies of sent files failed; trying again next sweep'),
      );
    }
    if (Date.now() - this.lastPrune > PRUNE_INTERVAL_MS) {
      this.lastPrune = Date.now();
      await pruneInboundKeys(db, Date.now() - INBOUND_KEY_TTL_MS);
      await pruneExpiredCodes(db, Date.now());
    }
  }
}
